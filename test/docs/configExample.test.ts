// config.example.yaml says it lists every key with its default: each key of the schema appears in
// it (set, or commented out where it has no default or turns a feature on), no key that the schema
// lacks, and every key the schema gives a default is written with that default. The README says to
// start from it with either credential: `--check-config` (the check the command line runs, in this
// process) accepts it as shipped with TRUNK_API_KEY, TRUNK_API_TOKEN or both, without a warning.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { V1_ONLY_SETTINGS } from '../../src/config/warnings.js';
import { checkConfigInProcess } from '../support/checkConfig.js';
import { configKeys } from './configKeys.js';
import { ROOT } from './pages.js';

const EXAMPLE = join(ROOT, 'config.example.yaml');

/** The example with its commented-out keys (`# tls:`, `#   certFile: …`) turned back on. */
function exampleWithEveryKey(): unknown {
  const text = readFileSync(EXAMPLE, 'utf8');
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

/** The comment lines right above a key of the example, up to a setting or a section's key. */
function commentAbove(lines: readonly string[], at: number): string {
  const comment: string[] = [];
  for (let index = at - 1; index >= 0; index--) {
    const line = lines[index] ?? '';
    if (!/^\s+# /.test(line) || /^\s+# \w+: /.test(line)) break;
    comment.unshift(line.replace(/^\s+# /, ''));
  }
  return comment.join(' ');
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

  it('leaves each setting that API v2 ignores commented out, under a comment saying API v1 only', () => {
    const lines = readFileSync(EXAMPLE, 'utf8').split('\n');
    for (const [section, key] of V1_ONLY_SETTINGS) {
      const at = lines.findIndex((line) => new RegExp(`^\\s*#? ?${key}:`).test(line));
      expect(lines[at], key).toMatch(new RegExp(`^\\s+# ${key}: `));
      expect(commentAbove(lines, at), `${section}.${key}`).toContain('API v1 only');
    }
  });

  // At either connection limit the server sheds the held connection that has waited longest on its
  // client (docs/configuration.md, docs/operations.md#hostile-clients); closing each newcomer as it
  // arrived let a few addresses reopening idle connections lock every scraper out.
  it.each(['maxConnections', 'maxConnectionsPerAddress'])(
    'says that at server.%s the connection waiting longest makes room for a newcomer',
    (key) => {
      const lines = readFileSync(EXAMPLE, 'utf8').split('\n');
      const comment = commentAbove(
        lines,
        lines.findIndex((line) => line.startsWith(`  ${key}:`)),
      ).replace(/\s+/g, ' ');
      expect(comment).toContain('waited longest');
      expect(comment).not.toMatch(/closed as they arrive/);
    },
  );

  it('writes every key that has a default with that default', () => {
    const example = exampleWithEveryKey();
    for (const { path, defaultValue } of keys) {
      if (defaultValue === undefined || path.startsWith('targets.')) continue;
      expect(valueAt(example, path), path).toEqual(defaultValue);
    }
  });
});

describe.concurrent('config.example.yaml as shipped, checked with --check-config', () => {
  const credentials = {
    'TRUNK_API_KEY only': { TRUNK_API_KEY: 'trunk_v2_example-key' },
    'TRUNK_API_TOKEN only': { TRUNK_API_TOKEN: 'example-v1-token' },
    'both variables': {
      TRUNK_API_KEY: 'trunk_v2_example-key',
      TRUNK_API_TOKEN: 'example-v1-token',
    },
  };

  it.each(Object.entries(credentials))(
    'is accepted without a warning with %s',
    async (_name, env) => {
      const result = await checkConfigInProcess(EXAMPLE, env);
      expect(result).toEqual({
        code: 0,
        stdout: `${EXAMPLE}: OK (2 repositories, 3 merge queues)\n`,
        stderr: '',
      });
    },
  );

  it('asks for a credential when neither variable is set', async () => {
    const result = await checkConfigInProcess(EXAMPLE);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/trunk\.apiKey: no Trunk credential: set an API v2 key/);
  });
});
