// The value sets the Helm chart is rendered on (helmRendered*.test.ts), and each rendered: the
// objects, the workload and its container, and the values helm would have used.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { pagePaths, readPage } from '../docs/pages.js';
import { renderChart, type RenderedChart } from './helmRender.js';
import { FIXTURES, fixture, mergeValues, values as chartValues } from './helmValues.js';
import type { KubeObject, LabelSelector } from './kubernetesObjects.js';
import type { PodSpec } from './podFiles.js';
import { CHART } from './ruleFiles.js';

/** A ```yaml block of the README or a docs/ page, by its first line. */
function documentedBlock(firstLine: string): string {
  const pages = pagePaths().map(readPage).join('\n');
  const block = pages.split(`\`\`\`yaml\n${firstLine}\n`)[1]?.split('```')[0];
  if (block === undefined) throw new Error(`docs: no \`\`\`yaml block starting "${firstLine}"`);
  return block;
}

/** The README's `my-values.yaml`, as a user copies it, with the docs' blocks adding to it. */
function readmeExample(...additions: readonly string[]): string {
  const text = [documentedBlock('# my-values.yaml'), ...additions.map(documentedBlock)].join('\n');
  const file = join(mkdtempSync(join(tmpdir(), 'trunk-exporter-readme-values-')), 'values.yaml');
  writeFileSync(file, text);
  return file;
}

/** A set of values a user installs the chart with. */
export interface ValueSet {
  readonly name: string;
  readonly file: string;
  readonly releaseName?: string;
}
/** The value sets the chart is rendered on. */
export const valueSets: readonly ValueSet[] = [
  { name: 'defaults (a target and a token only)', file: 'valid-defaults-with-target.yaml' },
  { name: "the README's example", file: readmeExample() },
  {
    name: "the README's example with the webhooks part of docs/webhooks.md",
    file: readmeExample('# my-values.yaml, webhooks'),
  },
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
  {
    name: 'apiKey.existingSecret, discovery and no target',
    file: 'valid-api-key-discovery.yaml',
  },
  { name: 'apiKey.value beside token.value', file: 'valid-api-key-and-token.yaml' },
  { name: 'every optional value set', file: 'valid-every-option.yaml' },
  {
    name: 'webhooks, signingSecret.value, Ingress with TLS',
    file: 'valid-webhooks-ingress.yaml',
  },
  {
    name: 'webhooks, signingSecret.existingSecret, HTTPRoute, tls.existingSecret',
    file: 'valid-webhooks-httproute-existing-secret.yaml',
  },
  {
    name: "a StatefulSet of a 53-character release (Helm's longest name)",
    file: 'valid-statefulset-pod-index.yaml',
    releaseName: `acme-${'x'.repeat(43)}-prod`,
  },
];
/** A value set's file. */
export const valuesPath = (file: string) => (file.startsWith('/') ? file : join(FIXTURES, file));

/** The values helm would use: the set's file over values.yaml. */
export function installedValues(set: ValueSet): InstalledValues {
  return (set.file.startsWith('/')
    ? mergeValues(chartValues, parse(readFileSync(set.file, 'utf8')) as Record<string, unknown>)
    : fixture(set.file)) as unknown as InstalledValues;
}
/** The installed values the checks read. */
export interface InstalledValues {
  config: Record<string, unknown>;
  workload: { kind: string };
  sharding: { shards: number; ordinalFrom: string };
  token: { value: string; existingSecret: string; existingSecretKey: string };
  apiKey: { value: string; existingSecret: string; existingSecretKey: string };
  tls: { existingSecret: string };
  webhooks: {
    enabled: boolean;
    path: string;
    toleranceSeconds: number;
    bodyTimeoutSeconds: number;
    signingSecret: { value: string; existingSecret: string; existingSecretKey: string };
    ingress: { enabled: boolean; host: string; tls: { secretName: string; hosts: string[] }[] };
    httpRoute: { enabled: boolean; hostnames: string[] };
  };
  containerPort: number;
  service: { port: number };
  serviceMonitor: { enabled: boolean; labels: Record<string, string> };
  prometheusRule: { enabled: boolean; labels: Record<string, string> };
}

/** The exporter's container, as far as the checks read it. */
export interface Container {
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
/** The Deployment or StatefulSet. */
export interface Workload extends KubeObject {
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
/** A Service. */
export interface ServiceObject extends KubeObject {
  spec: {
    clusterIP?: string;
    selector: Record<string, string>;
    ports: { name: string; port: number; targetPort: string | number }[];
  };
}

/** A value set rendered, with the parts every check reads. */
export interface RenderedValueSet {
  readonly rendered: RenderedChart;
  readonly objects: readonly KubeObject[];
  readonly values: InstalledValues;
  readonly workload: Workload;
  readonly container: Container;
  byKind(kind: string): KubeObject[];
}

/** Renders a value set as `helm install` would (release in namespace monitoring). */
export async function renderValueSet(renderer: string, set: ValueSet): Promise<RenderedValueSet> {
  const rendered = await renderChart(renderer, CHART, {
    valueFiles: [valuesPath(set.file)],
    releaseName: set.releaseName ?? 'trunk-exporter',
    namespace: 'monitoring',
  });
  const objects = rendered.manifests.map((manifest) => manifest.object as KubeObject);
  const values = installedValues(set);
  const workloads = objects.filter((object) => /^(Deployment|StatefulSet)$/.test(object.kind));
  if (workloads.length !== 1 || workloads[0]?.kind !== values.workload.kind) {
    throw new Error(`expected one ${values.workload.kind}, rendered ${workloads.length} workloads`);
  }
  const workload = workloads[0] as Workload;
  const container = workload.spec.template.spec.containers[0] as Container;
  return {
    rendered,
    objects,
    values,
    workload,
    container,
    byKind: (kind) => objects.filter((object) => object.kind === kind),
  };
}
