// Where the deploy artifacts live, and typed readers for the rule files the deploy tests share.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

/** The repository's root directory. */
export const ROOT = join(import.meta.dirname, '..', '..');
/** The chart's directory. */
export const CHART = join(ROOT, 'helm', 'trunk-exporter');
/** prometheus/alerts.yaml and prometheus/rules.yaml, as users load them. */
export const RULE_FILES = [
  join(ROOT, 'prometheus', 'alerts.yaml'),
  join(ROOT, 'prometheus', 'rules.yaml'),
];
/** The promtool unit tests, one file per alert. */
export const RULE_TESTS_DIRECTORY = join(ROOT, 'test', 'deploy', 'rules');

/** One rule of a Prometheus rule file. */
export interface Rule {
  readonly alert?: string;
  readonly record?: string;
  readonly expr: string;
  readonly for?: string;
  readonly keep_firing_for?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}
/** A Prometheus rule file. */
export interface RuleFile {
  readonly groups: readonly { readonly name: string; readonly rules: readonly Rule[] }[];
}

/** Parses a YAML file. */
export function readYamlFile(path: string): unknown {
  return parse(readFileSync(path, 'utf8'));
}

/** The alerting rules of prometheus/alerts.yaml. */
export function alertingRules(): (Rule & { readonly alert: string })[] {
  const file = readYamlFile(RULE_FILES[0] ?? '') as RuleFile;
  return file.groups.flatMap((group) =>
    group.rules.filter((rule): rule is Rule & { alert: string } => rule.alert !== undefined),
  );
}
