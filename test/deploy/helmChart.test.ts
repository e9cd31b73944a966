// The Helm chart without a helm binary: its files parse (templates with their actions masked), the
// templates use only named templates and .Values paths that exist, values.yaml and the fixtures
// meet values.schema.json, the config it renders is one the exporter accepts, and the
// PrometheusRule reads the same rule files as prometheus/*.yaml.
import {
  copyFileSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
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
  definedTemplates,
  maskActions,
  usedTemplates,
  valuesPaths,
} from './goTemplate.js';
import {
  FIXTURES,
  TEMPLATES,
  fixture,
  helpers,
  isMap,
  maskedPodTemplate,
  read,
  templateFiles,
  values,
  type Values,
} from './helmValues.js';
import { CHART, ROOT } from './ruleFiles.js';
import { schemaKeys } from './zodKeys.js';

const TLS_FIXTURES = join(ROOT, 'test', 'fixtures', 'tls');

/**
 * Config keys the chart sets itself (values.schema.json has no key for them), each with the text in
 * _helpers.tpl that sets it, or, for a key the chart does not support, the README's reason.
 */
const CHART_MANAGED: Readonly<Record<string, { helpers: string } | { readme: string }>> = {
  'trunk.token': { helpers: '$_ := set $trunk "tokenFile" "/etc/trunk-exporter/token/token"' },
  'trunk.tokenFile': { helpers: '$_ := set $trunk "tokenFile" "/etc/trunk-exporter/token/token"' },
  'server.address': { helpers: 'dict "address" "0.0.0.0"' },
  'server.port': { helpers: '"port" (int .Values.containerPort)' },
  'server.tls': { helpers: '$_ := set $server "tls" (dict "certFile"' },
  'server.basicAuthUsers': { readme: 'The chart does not support `server.basicAuthUsers`' },
  sharding: { helpers: '- --total-shards={{ .Values.sharding.shards }}' },
};

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
    const pod = maskedPodTemplate();
    expect(Object.keys(pod.metadata.annotations)).toContain('checksum/config');
    const container = pod.spec.containers[0];
    for (const key of ['livenessProbe', 'readinessProbe', 'resources', 'securityContext']) {
      expect(Object.keys(container ?? {})).toContain(key);
    }
    // The masked template shows conditional parts too: tls exists only with tls.existingSecret.
    expect(pod.spec.volumes.map((volume) => volume.name)).toEqual([
      'config',
      'token',
      'tls',
      'tmp',
    ]);
    expect((container?.volumeMounts ?? []).map((mount) => mount.name)).toEqual([
      'config',
      'token',
      'tls',
      'tmp',
    ]);
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

    it('accepts values.yaml', () => {
      expect(errors(values)).toEqual([]);
    });

    it.each(readdirSync(FIXTURES).filter((name) => name.startsWith('valid-')))(
      'accepts %s',
      (name) => {
        expect(errors(fixture(name))).toEqual([]);
      },
    );

    it.each(readdirSync(FIXTURES).filter((name) => name.startsWith('invalid-')))(
      'rejects %s',
      (name) => {
        expect(errors(fixture(name))).not.toEqual([]);
      },
    );

    it('has a key for every key of the exporter config file except the chart-managed ones', () => {
      const config = (schema as { properties: { config: SchemaNode } }).properties.config;
      const managed = Object.keys(CHART_MANAGED);
      const isManaged = (key: string) =>
        managed.some((prefix) => key === prefix || key.startsWith(`${prefix}.`));
      const exporterKeys = schemaKeys(configFileSchema).filter((key) => !isManaged(key));
      expect(jsonSchemaKeys(config, schema).sort()).toEqual(exporterKeys.sort());
      // Each left out is really set by the chart, or documented as unsupported.
      const readme = read(join(ROOT, 'README.md'));
      for (const [key, evidence] of Object.entries(CHART_MANAGED)) {
        if ('helpers' in evidence) expect(helpers, key).toContain(evidence.helpers);
        else expect(readme, key).toContain(evidence.readme);
      }
    });
  });

  it('renders a config file the exporter accepts', async () => {
    const parsed = await parseConfig(renderConfig(fixture('valid-two-repositories.yaml')), {
      source: 'chart config.yaml',
      env: {},
    });
    expect(parsed.polling.mergeQueueIntervalSeconds).toBe(15);
    expect(parsed.targets.map((target) => target.branches.length)).toEqual([2, 1]);
    expect(parsed.server.port).toBe(9740);
    expect(parsed.server.tls).toBeUndefined();
    expect(parsed.server.enableReload).toBe(false);
  });

  it('renders a config file with TLS, reload and the new polling keys the exporter accepts', async () => {
    const parsed = await parseConfig(renderConfig(fixture('valid-statefulset-sharded.yaml')), {
      source: 'chart config.yaml',
      env: {},
    });
    expect(parsed.server.enableReload).toBe(true);
    expect(parsed.server.tls).toBeDefined();
    expect(parsed.polling.pullRequestRecheckSeconds).toBe(600);
    expect(parsed.polling.flakyTestDetails).toBe(false);
    // Shards come from the command line, never from the shared ConfigMap.
    expect(parsed.sharding).toEqual({ shard: 0, totalShards: 1 });
    // The files the config names are where the pod mounts the Secret.
    expect(helpers).toContain('"certFile" "/etc/trunk-exporter/tls/tls.crt"');
    expect(helpers).toContain('"keyFile" "/etc/trunk-exporter/tls/tls.key"');
    const mounts = maskedPodTemplate().spec.containers[0]?.volumeMounts ?? [];
    expect(mounts).toContainEqual(
      expect.objectContaining({ name: 'tls', mountPath: '/etc/trunk-exporter/tls' }),
    );
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
});

/**
 * What the "trunk-exporter.config" template builds from `installed` values, with the files the pod
 * mounts (token, TLS pair) written to a temporary directory instead.
 */
function renderConfig(installed: Values): string {
  const directory = mkdtempSync(join(tmpdir(), 'trunk-exporter-chart-'));
  const config = installed.config as Values & { trunk: Values; server: Values };
  const token = installed.token as { value: string };
  const tokenFile = join(directory, 'token');
  // The pod mounts the chart's Secret (from token.value) or the existing one at the same path.
  writeFileSync(tokenFile, token.value || 'from-existing-secret');
  const trunk: Values = { ...config.trunk, tokenFile };
  if (!trunk.orgUrlSlug) delete trunk.orgUrlSlug;
  const server: Values = { address: '0.0.0.0', port: installed.containerPort, ...config.server };
  if ((installed.tls as Values).existingSecret) {
    copyFileSync(join(TLS_FIXTURES, 'server.crt'), join(directory, 'tls.crt'));
    copyFileSync(join(TLS_FIXTURES, 'server.key'), join(directory, 'tls.key'));
    server.tls = { certFile: join(directory, 'tls.crt'), keyFile: join(directory, 'tls.key') };
  }
  return stringify({
    trunk,
    server,
    polling: config.polling,
    metrics: config.metrics,
    targets: config.targets,
  });
}

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
