// The Helm chart as `helm install` would render it (test/deploy/helm-render, Helm's own template
// libraries), on each value set a user is likely to install: every object meets its Kubernetes
// schema, the exporter accepts the config it embeds (--check-config, with the pod's files mounted),
// promtool accepts the PrometheusRule, and the objects fit together as Kubernetes needs them to.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { parseCommandLine } from '../../src/cli/arguments.js';
import { CLI_BIN } from '../support/cli.js';
import { findSystemBinary } from '../support/systemBinary.js';
import { helmRenderer, RenderError, renderChart, type RenderedChart } from './helmRender.js';
import { FIXTURES, fixture, isMap, mergeValues, values as chartValues } from './helmValues.js';
import {
  nameProblems,
  schemaProblems,
  selects,
  type KubeObject,
  type LabelSelector,
} from './kubernetesObjects.js';
import { unknownFieldProblems } from './kubernetesFields.js';
import { layOutPodFiles, type PodSpec } from './podFiles.js';
import { CHART, ROOT } from './ruleFiles.js';

const run = promisify(execFile);
const renderer = await helmRenderer();
const promtool = findSystemBinary('promtool');
const TLS_FIXTURES = join(ROOT, 'test', 'fixtures', 'tls');

/** The README's `my-values.yaml`, as a user copies it. */
function readmeExample(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const block = /```yaml\n# my-values\.yaml\n([\s\S]*?)```/.exec(readme)?.[1];
  if (block === undefined) throw new Error('README: no ```yaml block starting "# my-values.yaml"');
  const file = join(mkdtempSync(join(tmpdir(), 'trunk-exporter-readme-values-')), 'values.yaml');
  writeFileSync(file, block);
  return file;
}

interface ValueSet {
  readonly name: string;
  readonly file: string;
  readonly releaseName?: string;
}
const valueSets: readonly ValueSet[] = [
  { name: 'defaults (a target and a token only)', file: 'valid-defaults-with-target.yaml' },
  { name: "the README's example", file: readmeExample() },
  { name: 'StatefulSet, ordinalFrom podIndexLabel', file: 'valid-statefulset-pod-index.yaml' },
  {
    name: 'StatefulSet, ordinalFrom hostname, tls.existingSecret, token.existingSecret',
    file: 'valid-statefulset-sharded.yaml',
  },
  {
    name: 'ServiceMonitor and PrometheusRule with labels, token.value',
    file: 'valid-two-repositories.yaml',
  },
  { name: 'Deployment with tls.existingSecret', file: 'valid-tls-deployment.yaml' },
  { name: 'every optional value set', file: 'valid-every-option.yaml' },
  {
    name: "a StatefulSet of a 53-character release (Helm's longest name)",
    file: 'valid-statefulset-pod-index.yaml',
    releaseName: `acme-${'x'.repeat(43)}-prod`,
  },
];
const valuesPath = (file: string) => (file.startsWith('/') ? file : join(FIXTURES, file));

/** The values helm would use: the set's file over values.yaml. */
function installedValues(set: ValueSet): InstalledValues {
  return (set.file.startsWith('/')
    ? mergeValues(chartValues, parse(readFileSync(set.file, 'utf8')) as Record<string, unknown>)
    : fixture(set.file)) as unknown as InstalledValues;
}
interface InstalledValues {
  workload: { kind: string };
  sharding: { shards: number; ordinalFrom: string };
  token: { value: string; existingSecret: string; existingSecretKey: string };
  tls: { existingSecret: string };
  containerPort: number;
  service: { port: number };
  serviceMonitor: { enabled: boolean; labels: Record<string, string> };
  prometheusRule: { enabled: boolean; labels: Record<string, string> };
}

interface Container {
  name: string;
  command?: string[];
  args: string[];
  env?: { name: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  ports: { name: string; containerPort: number }[];
  livenessProbe: { httpGet: { port: string | number; scheme?: string; path: string } };
  readinessProbe: { httpGet: { port: string | number; scheme?: string; path: string } };
  securityContext: Record<string, unknown>;
  volumeMounts: { name: string; mountPath: string; subPath?: string }[];
}
interface Workload extends KubeObject {
  spec: {
    replicas: number;
    serviceName?: string;
    podManagementPolicy?: string;
    selector: LabelSelector;
    template: {
      metadata: { labels: Record<string, string>; annotations: Record<string, string> };
      spec: PodSpec & {
        automountServiceAccountToken: boolean;
        securityContext: Record<string, unknown>;
        containers: Container[];
        volumes: { name: string }[];
      };
    };
  };
}
interface ServiceObject extends KubeObject {
  spec: {
    clusterIP?: string;
    selector: Record<string, string>;
    ports: { name: string; port: number; targetPort: string | number }[];
  };
}

const objectsOf = (rendered: RenderedChart) =>
  rendered.manifests.map((manifest) => manifest.object as KubeObject);

describe.skipIf(renderer === undefined).each(valueSets)('Helm chart rendered: $name', (set) => {
  let rendered: RenderedChart;
  let objects: KubeObject[];
  let values: InstalledValues;
  let workload: Workload;
  let container: Container;
  const byKind = (kind: string) => objects.filter((object) => object.kind === kind);

  beforeAll(async () => {
    rendered = await renderChart(renderer ?? '', CHART, {
      valueFiles: [valuesPath(set.file)],
      releaseName: set.releaseName ?? 'trunk-exporter',
    });
    objects = objectsOf(rendered);
    values = installedValues(set);
    const workloads = objects.filter((object) => /^(Deployment|StatefulSet)$/.test(object.kind));
    expect(workloads.map((object) => object.kind)).toEqual([values.workload.kind]);
    workload = workloads[0] as Workload;
    container = workload.spec.template.spec.containers[0] as Container;
  });

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

  it('embeds a config file the exporter accepts (--check-config, with the pod files mounted)', async () => {
    const existingSecrets = {
      [values.token.existingSecret]: {
        [values.token.existingSecretKey]: 'from-an-existing-secret',
      },
      [values.tls.existingSecret]: {
        'tls.crt': readFileSync(join(TLS_FIXTURES, 'server.crt'), 'utf8'),
        'tls.key': readFileSync(join(TLS_FIXTURES, 'server.key'), 'utf8'),
      },
    };
    const root = layOutPodFiles(workload.spec.template.spec, objects, existingSecrets);
    // The exporter is told --config /etc/trunk-exporter/config.yaml; its files are under root.
    const configPath = container.args[container.args.indexOf('--config') + 1] ?? '';
    const config = parse(readFileSync(join(root, configPath), 'utf8')) as unknown;
    const rooted = (node: unknown): unknown =>
      typeof node === 'string' && node.startsWith('/etc/')
        ? join(root, node)
        : Array.isArray(node)
          ? node.map(rooted)
          : isMap(node)
            ? Object.fromEntries(Object.entries(node).map(([key, value]) => [key, rooted(value)]))
            : node;
    const checked = join(root, 'checked-config.yaml');
    writeFileSync(checked, stringify(rooted(config)));
    const result = await run(process.execPath, [CLI_BIN, '--check-config', '--config', checked]);
    expect(result.stdout).toMatch(/checked-config\.yaml: OK \(/);
    // The exporter listens where the pod says it does.
    const server = (config as { server: { port: number; tls?: object } }).server;
    expect(container.ports.map((port) => port.containerPort)).toContain(server.port);
    expect(server.tls !== undefined).toBe(values.tls.existingSecret !== '');
  });

  it('starts the exporter with a command line it accepts, in each pod', () => {
    const shards = values.workload.kind === 'StatefulSet' ? values.sharding.shards : 1;
    for (let ordinal = 0; ordinal < shards; ordinal += 1) {
      // podIndexLabel: the kubelet expands $(SHARD); hostname: the shell line prepends --shard.
      const args = container.args.map((arg) => arg.replace('$(SHARD)', String(ordinal)));
      const argv = container.command === undefined ? args : [`--shard=${ordinal}`, ...args];
      const command = parseCommandLine(argv);
      if (command.name !== 'run') throw new Error(`not a run command: ${command.name}`);
      expect(command.configPath).toBe('/etc/trunk-exporter/config.yaml');
      expect(command.port ?? values.containerPort).toBe(values.containerPort);
      expect(command.sharding).toEqual(
        values.workload.kind === 'StatefulSet' ? { shard: ordinal, totalShards: shards } : {},
      );
    }
  });

  it.skipIf(promtool === undefined)(
    'has a PrometheusRule whose groups promtool accepts, or none when disabled',
    async () => {
      const rules = byKind('PrometheusRule');
      expect(rules).toHaveLength(values.prometheusRule.enabled ? 1 : 0);
      for (const rule of rules) {
        expect(rule.metadata.labels).toMatchObject(values.prometheusRule.labels);
        const file = join(mkdtempSync(join(tmpdir(), 'trunk-exporter-rule-')), 'rules.yaml');
        writeFileSync(file, stringify(rule.spec));
        const { stdout } = await run(promtool ?? 'promtool', ['check', 'rules', file]);
        expect(stdout).toContain('SUCCESS');
        const { groups } = rule.spec as { groups: { name: string }[] };
        const fileGroups = ['rules.yaml', 'alerts.yaml'].flatMap(
          (name) =>
            (
              parse(readFileSync(join(CHART, 'files', name), 'utf8')) as {
                groups: { name: string }[];
              }
            ).groups,
        );
        expect(groups.slice(0, fileGroups.length)).toEqual(fileGroups);
      }
    },
  );

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
  });

  it('rolls the pods when the config or the chart-made token changes (checksum annotations)', () => {
    const annotations = workload.spec.template.metadata.annotations;
    const sha256 = (source: string) => {
      const manifest = rendered.manifests.find((candidate) => candidate.source === source);
      return createHash('sha256')
        .update(manifest?.text ?? '')
        .digest('hex');
    };
    expect(annotations['checksum/config']).toBe(sha256('trunk-exporter/templates/configmap.yaml'));
    if (values.token.existingSecret === '') {
      expect(annotations['checksum/token']).toBe(sha256('trunk-exporter/templates/secret.yaml'));
    } else {
      expect(annotations['checksum/token']).toBeUndefined();
      expect(byKind('Secret')).toEqual([]);
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
      const rendered = await renderChart(renderer ?? '', CHART, {
        valueFiles: [valuesPath(set.file)],
        releaseName: set.releaseName ?? 'trunk-exporter',
      });
      for (const manifest of rendered.manifests) {
        objects.push(manifest.object as KubeObject);
        labels.push(`${set.name}: ${manifest.source}`);
      }
    }
    expect(unknownFieldProblems(objects, labels)).toEqual([]);
  }, 120_000);
});

describe.skipIf(renderer === undefined)('Helm chart rendered with values it must refuse', () => {
  const render = (file: string) =>
    renderChart(renderer ?? '', CHART, { valueFiles: [join(FIXTURES, file)] }).then(
      () => 'rendered',
      (error: unknown) => (error instanceof RenderError ? error.message : String(error)),
    );

  it.each(readdirSync(FIXTURES).filter((name) => name.startsWith('invalid-')))(
    'rejects %s by values.schema.json, before rendering',
    async (name) => {
      expect(await render(name)).toContain("values don't meet the specifications of the schema");
    },
  );

  it('fails on the defaults alone, naming config.targets', async () => {
    const message = await renderChart(renderer ?? '', CHART).then(
      () => 'rendered',
      (error: unknown) => String(error),
    );
    expect(message).toContain('config.targets: list at least one repository');
  });

  it('fails without a token, naming token.value and token.existingSecret', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'trunk-exporter-values-')), 'values.yaml');
    writeFileSync(
      file,
      'config:\n  targets:\n    - repo: github.com/acme/web\n      branches: [main]\n',
    );
    const message = await renderChart(renderer ?? '', CHART, { valueFiles: [file] }).then(
      () => 'rendered',
      (error: unknown) => String(error),
    );
    expect(message).toContain('token.value or token.existingSecret: the Trunk API token');
  });
});
