// The Helm chart as `helm install` would render it (test/deploy/helm-render, Helm's own template
// libraries), on each value set a user is likely to install: every object meets its Kubernetes
// schema and has no field its kind lacks, names are valid, and the objects fit together as
// Kubernetes needs them to. helmRenderedConfig.test.ts checks what the exporter and Prometheus get.
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { helmRenderer, type RenderedChart } from './helmRender.js';
import { FIXTURES } from './helmValues.js';
import {
  renderValueSet,
  valueSets,
  type Container,
  type InstalledValues,
  type ServiceObject,
  type Workload,
} from './helmValueSets.js';
import type { HttpRoute } from './gatewayApi.js';
import { unknownFieldProblems } from './kubernetesFields.js';
import {
  nameProblems,
  schemaProblems,
  selects,
  type KubeObject,
  type LabelSelector,
} from './kubernetesObjects.js';

const renderer = await helmRenderer();

/** An Ingress, as far as the checks read it. */
interface IngressObject extends KubeObject {
  spec: {
    defaultBackend?: unknown;
    tls?: unknown[];
    rules: {
      host: string;
      http: {
        paths: {
          path: string;
          pathType: string;
          backend: { service: { name: string; port: { name?: string; number?: number } } };
        }[];
      };
    }[];
  };
}

describe.skipIf(renderer === undefined).each(valueSets)('Helm chart rendered: $name', (set) => {
  let rendered: RenderedChart;
  let objects: readonly KubeObject[];
  let values: InstalledValues;
  let workload: Workload;
  let container: Container;
  beforeAll(async () => {
    ({ rendered, objects, values, workload, container } = await renderValueSet(
      renderer ?? '',
      set,
    ));
  });
  const byKind = (kind: string) => objects.filter((object) => object.kind === kind);

  it('renders objects that each meet their Kubernetes schema', () => {
    expect(objects.length).toBeGreaterThanOrEqual(4);
    const problems = rendered.manifests.flatMap((manifest) =>
      schemaProblems(manifest.object).map((problem) => `${manifest.source}: ${problem}`),
    );
    expect(problems).toEqual([]);
  });

  it('names every object as Kubernetes requires (DNS names, at most 63 characters)', () => {
    expect(objects.flatMap(nameProblems)).toEqual([]);
    const labelValue = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
    for (const object of objects) {
      for (const [key, value] of Object.entries(object.metadata.labels ?? {})) {
        expect(value.length <= 63 && labelValue.test(value), `${object.kind} label ${key}`).toBe(
          true,
        );
      }
    }
  });

  it("selects the workload's own pods with every selector", () => {
    const podLabels = workload.spec.template.metadata.labels;
    expect(selects(workload.spec.selector, podLabels)).toBe(true);
    const services = byKind('Service') as ServiceObject[];
    expect(services.length).toBe(values.workload.kind === 'StatefulSet' ? 2 : 1);
    for (const service of services) {
      expect(Object.keys(service.spec.selector).length).toBeGreaterThan(0);
      expect(selects({ matchLabels: service.spec.selector }, podLabels)).toBe(true);
    }
  });

  it('points each Service port at a port of the container, the probes too, over the right scheme', () => {
    const matches = (port: string | number) =>
      container.ports.some((candidate) =>
        typeof port === 'number' ? candidate.containerPort === port : candidate.name === port,
      );
    for (const service of byKind('Service') as ServiceObject[]) {
      for (const port of service.spec.ports) expect(matches(port.targetPort), port.name).toBe(true);
    }
    const scheme = values.tls.existingSecret === '' ? 'HTTP' : 'HTTPS';
    for (const probe of [container.livenessProbe, container.readinessProbe]) {
      expect(matches(probe.httpGet.port)).toBe(true);
      expect(probe.httpGet.scheme ?? 'HTTP').toBe(scheme);
    }
    expect(container.livenessProbe.httpGet.path).toBe('/healthz');
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
  });

  it('has a volume for every volumeMount, and mounts every volume', () => {
    const volumes = workload.spec.template.spec.volumes.map((volume) => volume.name);
    const mounts = container.volumeMounts.map((mount) => mount.name);
    expect(new Set(mounts)).toEqual(new Set(volumes));
    expect(volumes.includes('tls')).toBe(values.tls.existingSecret !== '');
    expect(volumes.includes('webhook-secret')).toBe(values.webhooks.enabled);
  });

  it('rolls the pods when the config or a chart-made Secret changes (checksum annotations)', () => {
    const annotations = workload.spec.template.metadata.annotations;
    const sha256 = (source: string) => {
      const manifest = rendered.manifests.find((candidate) => candidate.source === source);
      return createHash('sha256')
        .update(manifest?.text ?? '')
        .digest('hex');
    };
    expect(annotations['checksum/config']).toBe(sha256('trunk-exporter/templates/configmap.yaml'));
    const secrets = byKind('Secret').map((secret) => secret.metadata.name);
    const secretOf = (volume: string) =>
      workload.spec.template.spec.volumes.find((candidate) => candidate.name === volume)?.secret
        ?.secretName;
    // The chart makes one Secret for whichever of the token and the API key it is given a value of.
    const chartMade =
      (values.token.value !== '' && values.token.existingSecret === '') ||
      (values.apiKey.value !== '' && values.apiKey.existingSecret === '');
    if (chartMade) {
      expect(annotations['checksum/token']).toBe(sha256('trunk-exporter/templates/secret.yaml'));
    } else {
      expect(annotations['checksum/token']).toBeUndefined();
    }
    if (values.token.existingSecret !== '') expect(secrets).not.toContain(secretOf('token'));
    if (values.apiKey.existingSecret !== '') expect(secrets).not.toContain(secretOf('api-key'));
    if (values.webhooks.enabled && values.webhooks.signingSecret.existingSecret === '') {
      expect(annotations['checksum/webhook-secret']).toBe(
        sha256('trunk-exporter/templates/webhook-secret.yaml'),
      );
      expect(secrets).toContain(secretOf('webhook-secret'));
    } else {
      expect(annotations['checksum/webhook-secret']).toBeUndefined();
      expect(secrets.filter((name) => name.endsWith('-webhooks'))).toEqual([]);
    }
  });

  it('exposes only the webhook path, exactly, to the main Service, and only when asked', () => {
    if (!values.webhooks.enabled) {
      // Off (the default): no template of the webhooks renders anything.
      expect(
        rendered.manifests.filter((manifest) => manifest.source.includes('/webhook-')),
      ).toEqual([]);
    }
    const ingresses = byKind('Ingress') as IngressObject[];
    const routes = byKind('HTTPRoute') as (KubeObject & HttpRoute)[];
    expect(ingresses).toHaveLength(
      values.webhooks.enabled && values.webhooks.ingress.enabled ? 1 : 0,
    );
    expect(routes).toHaveLength(
      values.webhooks.enabled && values.webhooks.httpRoute.enabled ? 1 : 0,
    );
    const main = (byKind('Service') as ServiceObject[]).find(
      (service) => service.spec.clusterIP !== 'None',
    );
    for (const ingress of ingresses) {
      expect(ingress.spec.defaultBackend).toBeUndefined();
      expect(ingress.spec.rules.map((rule) => rule.host)).toEqual([values.webhooks.ingress.host]);
      const paths = ingress.spec.rules.flatMap((rule) => rule.http.paths);
      expect(paths.map(({ path, pathType }) => ({ path, pathType }))).toEqual([
        { path: values.webhooks.path, pathType: 'Exact' },
      ]);
      for (const { backend } of paths) {
        expect(backend.service.name).toBe(main?.metadata.name);
        expect(main?.spec.ports.map((port) => port.name)).toContain(backend.service.port.name);
      }
      expect(ingress.spec.tls ?? []).toEqual(values.webhooks.ingress.tls);
    }
    for (const route of routes) {
      expect(route.spec.hostnames ?? []).toEqual(values.webhooks.httpRoute.hostnames);
      const rules = route.spec.rules ?? [];
      expect(rules.flatMap((rule) => rule.matches ?? [])).toEqual([
        { path: { type: 'Exact', value: values.webhooks.path } },
      ]);
      for (const reference of rules.flatMap((rule) => rule.backendRefs ?? [])) {
        expect(reference.name).toBe(main?.metadata.name);
        expect(main?.spec.ports.map((port) => port.port)).toContain(reference.port);
      }
    }
  });

  it('runs hardened: non-root, read-only root, no privilege escalation, no capabilities', () => {
    const pod = workload.spec.template.spec;
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container.securityContext).toMatchObject({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
  });

  it('as a StatefulSet: serviceName is the headless Service, each pod gets --shard and --total-shards', () => {
    if (values.workload.kind !== 'StatefulSet') {
      expect(container.args.join(' ')).not.toContain('shard');
      return;
    }
    const headless = (byKind('Service') as ServiceObject[]).find(
      (service) => service.spec.clusterIP === 'None',
    );
    expect(workload.spec.serviceName).toBe(headless?.metadata.name);
    expect(workload.spec.replicas).toBe(values.sharding.shards);
    // Shards are independent: all start and roll at once.
    expect(workload.spec.podManagementPolicy).toBe('Parallel');
    expect(container.args).toContain(`--total-shards=${values.sharding.shards}`);
    if (values.sharding.ordinalFrom === 'podIndexLabel') {
      expect(container.args).toContain('--shard=$(SHARD)');
      expect(container.env).toContainEqual({
        name: 'SHARD',
        valueFrom: { fieldRef: { fieldPath: "metadata.labels['apps.kubernetes.io/pod-index']" } },
      });
    } else {
      expect(container.command?.slice(0, 2)).toEqual(['/bin/sh', '-c']);
      expect(container.command?.[2]).toContain('--shard="${HOSTNAME##*-}"');
    }
  });

  it('has a ServiceMonitor, when enabled, that selects the main Service only', () => {
    const monitors = byKind('ServiceMonitor');
    expect(monitors).toHaveLength(values.serviceMonitor.enabled ? 1 : 0);
    for (const monitor of monitors) {
      expect(monitor.metadata.labels).toMatchObject(values.serviceMonitor.labels);
      const spec = monitor.spec as {
        selector: LabelSelector;
        endpoints: { port: string; scheme?: string }[];
      };
      const selected = (byKind('Service') as ServiceObject[]).filter((service) =>
        selects(spec.selector, service.metadata.labels),
      );
      expect(selected.map((service) => service.spec.clusterIP)).toEqual([undefined]);
      const [main] = selected;
      for (const endpoint of spec.endpoints) {
        expect(main?.spec.ports.map((port) => port.name)).toContain(endpoint.port);
        expect(endpoint.scheme ?? 'http').toBe(values.tls.existingSecret === '' ? 'http' : 'https');
      }
    }
  });

  it('prints NOTES.txt that name what the chart made', () => {
    const { notes } = rendered;
    const service = (byKind('Service') as ServiceObject[]).find(
      (candidate) => candidate.spec.clusterIP !== 'None',
    );
    expect(notes).toContain(`port-forward service/${service?.metadata.name ?? ''} `);
    expect(notes).toContain('--namespace monitoring');
    const scheme = values.tls.existingSecret === '' ? 'http' : 'https';
    expect(notes).toContain(
      `curl ${scheme === 'https' ? '--insecure ' : ''}${scheme}://127.0.0.1:`,
    );
    if (values.workload.kind === 'StatefulSet') {
      expect(notes).toContain(`port-forward pod/${workload.metadata.name}-0 `);
    }
    if (values.webhooks.enabled) {
      expect(notes).toContain(`POSTed to ${values.webhooks.path} `);
      if (values.webhooks.ingress.enabled) {
        expect(notes).toContain(`https://${values.webhooks.ingress.host}${values.webhooks.path}\n`);
      }
      if (values.webhooks.httpRoute.enabled) {
        expect(notes).toContain(
          `https://${values.webhooks.httpRoute.hostnames[0] ?? ''}${values.webhooks.path}\n`,
        );
      }
    } else {
      expect(notes).not.toContain('webhook');
    }
    expect(notes).not.toMatch(/<no value>|\{\{/);
  });
});

describe.skipIf(renderer === undefined)('Helm chart rendered on every value set', () => {
  it('has a value set for every valid-* values fixture', () => {
    const fixtures = readdirSync(FIXTURES).filter((name) => name.startsWith('valid-'));
    expect(fixtures.filter((name) => !valueSets.some((set) => set.file === name))).toEqual([]);
  });

  it('has no field its kind does not know (what a wrong indent makes)', async () => {
    const objects: KubeObject[] = [];
    const labels: string[] = [];
    for (const set of valueSets) {
      const { rendered } = await renderValueSet(renderer ?? '', set);
      for (const manifest of rendered.manifests) {
        objects.push(manifest.object as KubeObject);
        labels.push(`${set.name}: ${manifest.source}`);
      }
    }
    expect(unknownFieldProblems(objects, labels)).toEqual([]);
  }, 120_000);
});
