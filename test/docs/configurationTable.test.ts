// The key table of docs/configuration.md is checked against the config schema: one row per key
// that holds a value, none for a key that does not exist, each row's default the schema's, and each
// setting that API v2 ignores (the ones --check-config warns about beside a key) marked API v1 only.
import { describe, expect, it } from 'vitest';
import { V1_ONLY_SETTINGS } from '../../src/config/warnings.js';
import { configKeys } from './configKeys.js';
import { pageSection } from './pages.js';

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
