// The Helm chart's files as the chart tests read them: templates, the helpers, values.yaml, and the
// values fixtures merged over values.yaml as `helm install -f` would.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CHART } from './ruleFiles.js';

/** A values tree. */
export type Values = Record<string, unknown>;

export const TEMPLATES = join(CHART, 'templates');
export const FIXTURES = join(import.meta.dirname, 'fixtures', 'helm-values');

/** A file's text. */
export const read = (path: string): string => readFileSync(path, 'utf8');
/** A template's text, by file name. */
export const template = (name: string): string => read(join(TEMPLATES, name));

/** The chart's template files (YAML, helpers and NOTES). */
export const templateFiles = readdirSync(TEMPLATES).filter((name) =>
  /\.(yaml|tpl|txt)$/.test(name),
);
/** templates/_helpers.tpl. */
export const helpers = template('_helpers.tpl');
/** values.yaml. */
export const values = parse(read(join(CHART, 'values.yaml'))) as Values;

/** Whether a values node is a map. */
export function isMap(value: unknown): value is Values {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Helm's merge of a values file over the chart's: maps merge, everything else replaces. */
export function mergeValues(base: Values, override: Values): Values {
  const merged: Values = { ...base };
  for (const [key, value] of Object.entries(override)) {
    const current = merged[key];
    merged[key] = isMap(current) && isMap(value) ? mergeValues(current, value) : value;
  }
  return merged;
}

/** A fixture's values alone. */
function fixtureOverride(name: string): Values {
  return parse(read(join(FIXTURES, name))) as Values;
}

/** A fixture merged over values.yaml. */
export function fixture(name: string): Values {
  return mergeValues(values, fixtureOverride(name));
}
