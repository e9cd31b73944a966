// config.example.yaml says it lists every key with its default: each key of the schema appears in
// it (set, or commented out where it has no default or turns a feature on), no key that the schema
// lacks, and every key the schema gives a default is written with that default.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { configKeys } from './configKeys.js';
import { ROOT } from './pages.js';

/** The example with its commented-out keys (`# tls:`, `#   certFile: …`) turned back on. */
function exampleWithEveryKey(): unknown {
  const text = readFileSync(join(ROOT, 'config.example.yaml'), 'utf8');
  const uncommented = text
    .split('\n')
    .map((line) => line.replace(/^(\s*)# ?(\s*(?:- )?[a-zA-Z]\w*:(?: |$))/, '$1$2'))
    .join('\n');
  return parse(uncommented) as unknown;
}

/** The example's key paths, down to the keys that hold values (a list's items as `*`). */
function examplePaths(value: unknown, leaves: ReadonlySet<string>, prefix = ''): string[] {
  if (leaves.has(prefix.slice(0, -1))) return [prefix.slice(0, -1)];
  if (Array.isArray(value))
    return value.flatMap((item) => examplePaths(item, leaves, `${prefix}*.`));
  if (value === null || typeof value !== 'object') return [prefix.slice(0, -1)];
  return Object.entries(value).flatMap(([key, child]) =>
    examplePaths(child, leaves, `${prefix}${key}.`),
  );
}

/** The example's value at a dotted path (sections only, no lists). */
function valueAt(example: unknown, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>(
      (node, key) =>
        node !== null && typeof node === 'object'
          ? (node as Record<string, unknown>)[key]
          : undefined,
      example,
    );
}

describe('config.example.yaml', () => {
  const keys = configKeys();
  const leaves = new Set(keys.map(({ path }) => path));

  it('lists every key of the schema, and no other', () => {
    const listed = new Set(examplePaths(exampleWithEveryKey(), leaves));
    expect([...leaves].filter((path) => !listed.has(path))).toEqual([]);
    expect([...listed].filter((path) => !leaves.has(path))).toEqual([]);
  });

  it('writes every key that has a default with that default', () => {
    const example = exampleWithEveryKey();
    for (const { path, defaultValue } of keys) {
      if (defaultValue === undefined || path.startsWith('targets.')) continue;
      expect(valueAt(example, path), path).toEqual(defaultValue);
    }
  });
});
