// The Helm chart without a helm binary: its files parse (templates with their actions masked), the
// templates use only named templates and .Values paths that exist, values.yaml and the fixtures
// meet values.schema.json, the config it renders is one the exporter accepts, and the
// PrometheusRule reads the same rule files as prometheus/*.yaml.
import {
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { parseConfig } from '../../src/config/load.js';
import { configFileSchema } from '../../src/config/schema.js';
import {
  blockProblems,
  defineBody,
  definedTemplates,
  maskActions,
  usedTemplates,
  valuesPaths,
} from './goTemplate.js';
import { CHART, ROOT } from './ruleFiles.js';
import { schemaKeys } from './zodKeys.js';

type Values = Record<string, unknown>;

const TEMPLATES = join(CHART, 'templates');
const FIXTURES = join(import.meta.dirname, 'fixtures', 'helm-values');
const read = (path: string) => readFileSync(path, 'utf8');
const templateFiles = readdirSync(TEMPLATES).filter((name) => /\.(yaml|tpl|txt)$/.test(name));
const helpers = read(join(TEMPLATES, '_helpers.tpl'));
const values = parse(read(join(CHART, 'values.yaml'))) as Values;

/** Helm's merge of a values file over the chart's: maps merge, everything else replaces. */
function mergeValues(base: Values, override: Values): Values {
  const merged: Values = { ...base };
  for (const [key, value] of Object.entries(override)) {
    const current = merged[key];
    merged[key] = isMap(current) && isMap(value) ? mergeValues(current, value) : value;
  }
  return merged;
}
function isMap(value: unknown): value is Values {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
function fixture(name: string): Values {
  return mergeValues(values, parse(read(join(FIXTURES, name))) as Values);
}

describe('Helm chart', () => {
  it('is a v2 chart whose appVersion is the package version', () => {
    const chart = parse(read(join(CHART, 'Chart.yaml'))) as Values;
    const packageJson = JSON.parse(read(join(ROOT, 'package.json'))) as { version: string };
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'trunk-exporter', type: 'application' });
    expect(chart.appVersion).toBe(packageJson.version);
  });

  it.each(templateFiles)('template %s has balanced blocks', (name) => {
    expect(blockProblems(read(join(TEMPLATES, name)))).toEqual([]);
  });

  it.each(templateFiles.filter((name) => name.endsWith('.yaml')))(
    'template %s is Kubernetes YAML once its actions are masked',
    (name) => {
      const documents = parseAllDocuments(maskActions(read(join(TEMPLATES, name))));
      const objects = (Array.isArray(documents) ? documents : [documents]).map((document) => {
        expect(document.errors.map((error) => error.message)).toEqual([]);
        return document.toJS() as Values;
      });
      expect(objects).toHaveLength(1);
      for (const object of objects) {
        expect(typeof object.apiVersion).toBe('string');
        expect(typeof object.kind).toBe('string');
        expect((object.metadata as Values | undefined)?.name).toBe('TEMPLATE');
      }
    },
  );

  it('has a pod template with probes, resources, a hardened security context and the config', () => {
    const pod = parse(maskActions(defineBody(helpers, 'trunk-exporter.podTemplate'))) as {
      metadata: { annotations: Values };
      spec: { containers: Values[]; volumes: Values[] };
    };
    expect(Object.keys(pod.metadata.annotations)).toContain('checksum/config');
    const container = pod.spec.containers[0] ?? {};
    for (const key of ['livenessProbe', 'readinessProbe', 'resources', 'securityContext']) {
      expect(Object.keys(container)).toContain(key);
    }
    expect(pod.spec.volumes.map((volume) => volume.name)).toEqual(['config', 'token', 'tmp']);
    expect(values.securityContext).toEqual({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(values.livenessProbe).toMatchObject({ httpGet: { path: '/healthz', port: 'http' } });
    expect(values.readinessProbe).toMatchObject({ httpGet: { path: '/readyz', port: 'http' } });
  });

  it('rolls the pod on a config change: checksum/config hashes the rendered ConfigMap', () => {
    expect(helpers).toContain(
      'checksum/config: {{ include (print .Template.BasePath "/configmap.yaml") . | sha256sum }}',
    );
    expect(read(join(TEMPLATES, 'configmap.yaml'))).toContain('include "trunk-exporter.config"');
  });

  it('uses only named templates it defines', () => {
    const defined = definedTemplates(helpers);
    for (const name of templateFiles) {
      for (const used of usedTemplates(read(join(TEMPLATES, name)))) {
        expect(defined, `${name} includes "${used}"`).toContain(used);
      }
    }
  });

  it('reads only .Values paths that values.yaml has', () => {
    const missing: string[] = [];
    let count = 0;
    for (const name of templateFiles) {
      for (const path of valuesPaths(read(join(TEMPLATES, name)))) {
        count += 1;
        let node: unknown = values;
        for (const key of path) node = isMap(node) && key in node ? node[key] : undefined;
        if (node === undefined) missing.push(`${name}: .Values.${path.join('.')}`);
      }
    }
    expect(count).toBeGreaterThan(30);
    expect(missing).toEqual([]);
  });

  describe('values.schema.json', () => {
    const schema = JSON.parse(read(join(CHART, 'values.schema.json'))) as object;
    const validate = new Ajv({ allErrors: true }).compile(schema);
    const errors = (candidate: Values) =>
      validate(candidate)
        ? []
        : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message ?? ''}`);

    it('accepts values.yaml and a complete install', () => {
      expect(errors(values)).toEqual([]);
      expect(errors(fixture('valid-two-repositories.yaml'))).toEqual([]);
    });

    it.each(readdirSync(FIXTURES).filter((name) => name.startsWith('invalid-')))(
      'rejects %s',
      (name) => {
        expect(errors(fixture(name))).not.toEqual([]);
      },
    );

    it('has a key for every key of the exporter config file except the chart-managed ones', () => {
      const config = (schema as { properties: { config: SchemaNode } }).properties.config;
      const chartManaged = ['server', 'trunk.token', 'trunk.tokenFile'];
      const exporterKeys = schemaKeys(configFileSchema).filter(
        (key) => !chartManaged.some((managed) => key === managed || key.startsWith(`${managed}.`)),
      );
      expect(jsonSchemaKeys(config, schema).sort()).toEqual(exporterKeys.sort());
    });
  });

  it('renders a config file the exporter accepts', async () => {
    // What the "trunk-exporter.config" template builds, with the token file the pod mounts.
    const installed = fixture('valid-two-repositories.yaml');
    const config = installed.config as Values & { trunk: Values };
    const tokenFile = join(mkdtempSync(join(tmpdir(), 'trunk-exporter-chart-')), 'token');
    writeFileSync(tokenFile, String((installed.token as Values).value));
    const trunk: Values = { ...config.trunk, tokenFile };
    if (!trunk.orgUrlSlug) delete trunk.orgUrlSlug;
    const rendered = stringify({
      trunk,
      server: { address: '0.0.0.0', port: installed.containerPort },
      polling: config.polling,
      metrics: config.metrics,
      targets: config.targets,
    });
    const parsed = await parseConfig(rendered, { source: 'chart config.yaml', env: {} });
    expect(parsed.polling.mergeQueueIntervalSeconds).toBe(15);
    expect(parsed.targets.map((target) => target.branches.length)).toEqual([2, 1]);
    expect(parsed.server.port).toBe(9740);
  });

  it('has a PrometheusRule built from the files prometheus/alerts.yaml and rules.yaml link to', () => {
    const template = read(join(TEMPLATES, 'prometheusrule.yaml'));
    const files = [...template.matchAll(/"(files\/[\w.-]+\.yaml)"/g)].map((match) => match[1]);
    expect(files).toEqual(['files/rules.yaml', 'files/alerts.yaml']);
    expect(template).toContain('$.Files.Get $file');
    // No rule text of its own that could drift from the files.
    expect(template).not.toMatch(/\b(alert|record|expr):/);
    for (const name of ['alerts.yaml', 'rules.yaml']) {
      const linked = join(ROOT, 'prometheus', name);
      expect(lstatSync(linked).isSymbolicLink(), `prometheus/${name} is a symlink`).toBe(true);
      expect(realpathSync(linked)).toBe(realpathSync(join(CHART, 'files', name)));
    }
  });

  it('makes the workload kind a value, so a StatefulSet can join the Deployment', () => {
    expect(read(join(TEMPLATES, 'deployment.yaml'))).toMatch(
      /^\{\{- if eq \.Values\.workload\.kind "Deployment" \}\}/,
    );
    expect(read(join(TEMPLATES, 'deployment.yaml'))).toContain(
      'include "trunk-exporter.podTemplate"',
    );
  });
});

interface SchemaNode {
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly items?: SchemaNode;
  readonly $ref?: string;
}

/** Dotted property paths of a JSON schema node, `#/definitions/...` references followed. */
function jsonSchemaKeys(node: SchemaNode, root: object, prefix = ''): string[] {
  const resolved = resolveRef(node, root);
  if (resolved.items) return jsonSchemaKeys(resolved.items, root, `${prefix}*.`);
  return Object.entries(resolved.properties ?? {}).flatMap(([key, child]) => [
    `${prefix}${key}`,
    ...jsonSchemaKeys(child, root, `${prefix}${key}.`),
  ]);
}

function resolveRef(node: SchemaNode, root: object): SchemaNode {
  if (node.$ref === undefined) return node;
  let target: unknown = root;
  for (const key of node.$ref.replace(/^#\//, '').split('/')) {
    target = isMap(target) ? target[key] : undefined;
  }
  if (!isMap(target)) throw new Error(`unresolved $ref ${node.$ref}`);
  return target;
}
