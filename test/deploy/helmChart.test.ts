// The Helm chart's sources, where rendering cannot see: every branch of the templates uses only
// named templates and .Values paths that exist (missingkey=zero would render a typo as ""),
// values.schema.json has a key for each key of the exporter's config, and the PrometheusRule reads
// the same rule files as prometheus/*.yaml. helmRendered.test.ts renders the chart itself.
import { lstatSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { configFileSchema } from '../../src/config/schema.js';
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
  webhooks: { helpers: '$_ := set $config "webhooks" (dict "enabled" true' },
};

describe('Helm chart', () => {
  it('is a v2 chart whose appVersion is the package version', () => {
    const chart = parse(read(join(CHART, 'Chart.yaml'))) as Values;
    const packageJson = JSON.parse(read(join(ROOT, 'package.json'))) as { version: string };
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'trunk-exporter', type: 'application' });
    expect(chart.appVersion).toBe(packageJson.version);
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
      const exporterKeys = schemaKeys(configFileSchema).filter((key) => !isManaged(key));
      expect(jsonSchemaKeys(config, schema).sort()).toEqual(exporterKeys.sort());
      // Each left out is really set by the chart, or documented as unsupported.
      const deployment = readPage('docs/deployment.md');
      for (const [key, evidence] of Object.entries(CHART_MANAGED)) {
        if ('helpers' in evidence) expect(helpers, key).toContain(evidence.helpers);
        else expect(deployment, key).toContain(evidence.docs);
      }
    });
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
