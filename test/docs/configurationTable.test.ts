// The key table of docs/configuration.md is checked against the config schema: one row per key
// that holds a value, none for a key that does not exist, each row's default the schema's, and each
// setting that API v2 ignores (the ones --check-config warns about beside a key) marked API v1 only.
// Every setting the README and the other pages name is a key of the schema (or a section of keys),
// or a value of the Helm chart, whose `webhooks` and `sharding` share the file's section names.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { V1_ONLY_SETTINGS } from '../../src/config/warnings.js';
import { configKeys } from './configKeys.js';
import { pagePaths, pageSection, readPage, ROOT } from './pages.js';

interface Row {
  readonly path: string;
  readonly defaultCell: string;
  readonly meaning: string;
}

/** The rows of the key table: `targets[].repo` is read as the schema's `targets.*.repo`. */
function documentedKeys(): Row[] {
  const rows: Row[] = [];
  for (const line of pageSection('docs/configuration.md', '## The configuration file').split(
    '\n',
  )) {
    const match = /^\| `([a-zA-Z][\w.[\]]*)` \| ([^|]*) \|(.*)\|$/.exec(line);
    if (match) {
      rows.push({
        path: (match[1] ?? '').replaceAll('[]', '.*'),
        defaultCell: (match[2] ?? '').trim(),
        meaning: (match[3] ?? '').trim(),
      });
    }
  }
  return rows;
}

/** How the table writes a default: `value` in code (a string without quotes), or — for none. */
function asCell(value: unknown): string {
  if (value === undefined) return '—';
  return `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``;
}

/** The dotted paths of a YAML value's keys, sections included. */
function keyPaths(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  return Object.entries(value).flatMap(([key, child]) => [
    `${prefix}${key}`,
    ...keyPaths(child, `${prefix}${key}.`),
  ]);
}

describe('the key table of docs/configuration.md', () => {
  it('has one row for every key of the schema, and no other', () => {
    const documented = documentedKeys().map(({ path }) => path);
    expect(documented.toSorted()).toEqual(
      configKeys()
        .map(({ path }) => path)
        .toSorted(),
    );
    expect(new Set(documented).size).toBe(documented.length);
  });

  it("gives each key the schema's default, or — where there is none", () => {
    const defaults = new Map(documentedKeys().map(({ path, defaultCell }) => [path, defaultCell]));
    for (const { path, defaultValue } of configKeys()) {
      // A cell may explain its value after it: `33554432` (32 MiB).
      expect(defaults.get(path)?.split(' (')[0], path).toBe(asCell(defaultValue));
    }
  });

  it('marks each setting that API v2 ignores **API v1 only**', () => {
    const meanings = new Map(documentedKeys().map(({ path, meaning }) => [path, meaning]));
    expect(V1_ONLY_SETTINGS.length).toBeGreaterThan(0);
    for (const setting of V1_ONLY_SETTINGS) {
      const path = setting.join('.');
      expect(meanings.get(path), path).toMatch(/^\*\*API v1 only\*\*: /);
    }
  });
});

describe('the settings the README and docs/ name', () => {
  it('are each a key of the config file, a section of its keys, or a value of the Helm chart', () => {
    const keys = configKeys().map(({ path }) => path);
    const chart = new Set(
      keyPaths(parse(readFileSync(join(ROOT, 'helm/trunk-exporter/values.yaml'), 'utf8'))),
    );
    const exists = (setting: string) =>
      keys.some((key) => key === setting || key.startsWith(`${setting}.`)) || chart.has(setting);
    const sections = [...new Set(keys.map((path) => path.split('.')[0]))].join('|');
    const named = new RegExp(`\`((?:${sections})\\.[A-Za-z.]*[A-Za-z])\``, 'g');
    // docs/benchmarks.md is the benchmark's output, whose file names (`metrics.gz`) look alike.
    const unknown = pagePaths()
      .filter((page) => page !== 'docs/benchmarks.md')
      .flatMap((page) =>
        [...readPage(page).matchAll(named)]
          .map((match) => match[1] ?? '')
          .filter((setting) => !exists(setting))
          .map((setting) => `${page}: ${setting}`),
      );
    expect(unknown).toEqual([]);
  });
});
