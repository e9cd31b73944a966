// The Helm chart's sources, where rendering cannot see: every branch of the templates uses only
// named templates and .Values paths that exist (missingkey=zero would render a typo as ""),
// values.schema.json has a key for each key of the exporter's config (the webhooks keys as the
// chart's own `webhooks` values, rendered into the config), values.yaml documents every value the
// schema allows, the PrometheusRule reads the same rule files as prometheus/*.yaml, and the metric
// families the chart checks metrics.include/exclude against are the exporter's.
// helmRendered.test.ts renders the chart itself.
import { lstatSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isMap as isYamlMap, isSeq, parse, parseDocument, type Node } from 'yaml';
import { configFileSchema } from '../../src/config/schema.js';
import { SNAPSHOT_FAMILIES, UNSELECTABLE_FAMILIES } from '../../src/metrics/families.js';
import { readPage } from '../docs/pages.js';
import { definedTemplates, usedTemplates, valuesPaths } from './goTemplate.js';
import {
  TEMPLATES,
  helpers,
  isMap,
  read,
  templateFiles,
  values,
  type Values,
} from './helmValues.js';
import { CHART, ROOT } from './ruleFiles.js';
import { schemaKeys } from './zodKeys.js';

/**
 * Config keys the chart sets itself (values.schema.json has no key for them), each with the text in
 * _helpers.tpl that sets it, or, for a key the chart does not support, the reason docs/deployment.md gives.
 */
const CHART_MANAGED: Readonly<Record<string, { helpers: string } | { docs: string }>> = {
  'trunk.token': { helpers: '$_ := set $trunk "tokenFile" "/etc/trunk-exporter/token/token"' },
  'trunk.tokenFile': { helpers: '$_ := set $trunk "tokenFile" "/etc/trunk-exporter/token/token"' },
  'trunk.apiKey': {
    helpers: '$_ := set $trunk "apiKeyFile" "/etc/trunk-exporter/api-key/api-key"',
  },
  'trunk.apiKeyFile': {
    helpers: '$_ := set $trunk "apiKeyFile" "/etc/trunk-exporter/api-key/api-key"',
  },
  'server.address': { helpers: 'dict "address" "0.0.0.0"' },
  'server.port': { helpers: '"port" (int .Values.containerPort)' },
  'server.tls': { helpers: '$_ := set $server "tls" (dict "certFile"' },
  'server.basicAuthUsers': { docs: 'The chart does not support `server.basicAuthUsers`' },
  sharding: { helpers: '- --total-shards={{ .Values.sharding.shards }}' },
  'webhooks.signingSecret': {
    helpers: '"signingSecretFile" "/etc/trunk-exporter/webhook/signing-secret"',
  },
  'webhooks.signingSecretFile': {
    helpers: '"signingSecretFile" "/etc/trunk-exporter/webhook/signing-secret"',
  },
};

/**
 * The config section the chart takes as top-level values of the same names (`webhooks.path` is
 * the value `webhooks.path`), beside what it needs to expose the endpoint.
 */
const TOP_LEVEL_SECTION = 'webhooks';

describe('Helm chart', () => {
  it('is a v2 chart whose appVersion is the package version', () => {
    const chart = parse(read(join(CHART, 'Chart.yaml'))) as Values;
    const packageJson = JSON.parse(read(join(ROOT, 'package.json'))) as { version: string };
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'trunk-exporter', type: 'application' });
    expect(chart.appVersion).toBe(packageJson.version);
  });

  it('checks metrics.include/exclude against the families the exporter has (files/metric-families.yaml)', () => {
    const known = parse(read(join(CHART, 'files', 'metric-families.yaml'))) as Values;
    expect(known).toEqual({
      families: SNAPSHOT_FAMILIES.map(({ name }) => name),
      alwaysKept: [...UNSELECTABLE_FAMILIES],
    });
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
    it('has a key for every key of the exporter config file except the chart-managed ones', () => {
      const config = (schema as { properties: { config: SchemaNode } }).properties.config;
      const managed = Object.keys(CHART_MANAGED);
      const isManaged = (key: string) =>
        managed.some((prefix) => key === prefix || key.startsWith(`${prefix}.`));
      const exporterKeys = schemaKeys(configFileSchema).filter(
        (key) => !isManaged(key) && key.split('.')[0] !== TOP_LEVEL_SECTION,
      );
      expect(jsonSchemaKeys(config, schema).sort()).toEqual(exporterKeys.sort());
      // Each left out is really set by the chart, or documented as unsupported.
      const deployment = readPage('docs/deployment.md');
      for (const [key, evidence] of Object.entries(CHART_MANAGED)) {
        if ('helpers' in evidence) expect(helpers, key).toContain(evidence.helpers);
        else expect(deployment, key).toContain(evidence.docs);
      }
    });
  });

  it(`takes every ${TOP_LEVEL_SECTION}.* config key the chart does not set as a top-level value, rendered into the config`, () => {
    const schema = JSON.parse(read(join(CHART, 'values.schema.json'))) as SchemaNode;
    const chartKeys = jsonSchemaKeys(schema, schema);
    const keys = schemaKeys(configFileSchema).filter(
      (key) => key.startsWith(`${TOP_LEVEL_SECTION}.`) && !(key in CHART_MANAGED),
    );
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      expect(chartKeys, `values.schema.json: ${key}`).toContain(key);
      let node: unknown = values;
      for (const part of key.split('.')) node = isMap(node) ? node[part] : undefined;
      expect(node, `values.yaml: ${key}`).toBeDefined();
      const name = key.split('.')[1] ?? '';
      // `enabled` decides whether the section is rendered at all; it is then always true.
      expect(helpers, `_helpers.tpl renders ${key}`).toContain(
        name === 'enabled' ? `if .Values.${key}` : `"${name}" .Values.${key}`,
      );
    }
  });

  it('documents in values.yaml every value values.schema.json allows', () => {
    const schema = JSON.parse(read(join(CHART, 'values.schema.json'))) as SchemaNode;
    const document = parseDocument(read(join(CHART, 'values.yaml')));
    const undocumented: string[] = [];
    // `config` is the exporter's config file, documented key by key in docs/configuration.md;
    // `global` is Helm's own.
    for (const key of jsonSchemaKeys(schema, schema)) {
      if (key === 'global' || key.startsWith('config.')) continue;
      const [listPath, itemKey] = key.split('.*.');
      if (itemKey === undefined) {
        if (!document.hasIn(key.split('.'))) undocumented.push(key);
        continue;
      }
      // An item of a list that is empty by default: its keys are shown in the list's comment.
      const list = (listPath ?? '').split('.');
      const comment = commentsAt(document, list);
      if (!new RegExp(`\\b${itemKey.split('.')[0]}:`).test(comment))
        undocumented.push(`${key} (in the comment of ${listPath})`);
    }
    expect(undocumented).toEqual([]);
  });

  // Helm reads a values file as YAML 1.1, where a bare `off` (or on, yes, no) is a boolean: a
  // user who copies `testMetricsPeriod: off` from a comment gets the schema's refusal, "must be one
  // of the following: ... "off"", for the very word it lists.
  it("quotes in values.yaml's comments each choice the schema allows that YAML 1.1 takes for a boolean", () => {
    const schema = JSON.parse(read(join(CHART, 'values.schema.json'))) as SchemaNode;
    const lines = read(join(CHART, 'values.yaml')).split('\n');
    const unquoted: string[] = [];
    for (const key of jsonSchemaKeys(schema, schema)) {
      const choices = (resolveRef(schemaNodeAt(schema, key), schema).enum ?? []).filter(
        (choice) => typeof choice === 'string' && /^(y|yes|n|no|on|off|true|false)$/i.test(choice),
      );
      if (choices.length === 0) continue;
      const name = key.split('.').at(-1) ?? '';
      const at = lines.findIndex((line) => new RegExp(`^[\\s#]*${name}:`).test(line));
      // The comment lines above the key (set, or commented out), up to a key before it.
      const comment: string[] = [];
      for (let index = at - 1; index >= 0; index--) {
        const line = lines[index] ?? '';
        if (!/^\s*#/.test(line) || /^\s*#\s+\w+:( |$)/.test(line)) break;
        comment.unshift(line);
      }
      for (const choice of choices)
        if (!new RegExp(`['"]${String(choice)}['"]`).test(comment.join(' ')))
          unquoted.push(`${key}: ${String(choice)}`);
    }
    expect(unquoted).toEqual([]);
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

interface SchemaNode {
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly items?: SchemaNode;
  readonly $ref?: string;
  readonly enum?: readonly unknown[];
}

/** The node of a JSON schema at a dotted path of jsonSchemaKeys (`*` for a list's items). */
function schemaNodeAt(root: SchemaNode, path: string): SchemaNode {
  return path.split('.').reduce<SchemaNode>((node, key) => {
    const resolved = resolveRef(node, root);
    return (key === '*' ? resolved.items : resolved.properties?.[key]) ?? {};
  }, root);
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

/** The comments on a key of a YAML document and on its value: before, and at the end of its line. */
function commentsAt(document: ReturnType<typeof parseDocument>, path: readonly string[]): string {
  const parent: unknown =
    path.length === 1 ? document.contents : document.getIn(path.slice(0, -1), true);
  if (!isYamlMap(parent)) return '';
  const pair = parent.items.find(
    (item) => (item.key as { value?: unknown } | null)?.value === path[path.length - 1],
  );
  const key = pair?.key as Node | undefined;
  const value = pair?.value as Node | undefined;
  return [
    key?.commentBefore,
    key?.comment,
    value?.commentBefore,
    value?.comment,
    isSeq(value) ? value.comment : undefined,
  ]
    .filter((text) => text !== undefined && text !== null)
    .join('\n');
}
