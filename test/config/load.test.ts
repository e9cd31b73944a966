import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { Composer, Parser } from 'yaml';
import { loadExporterConfig } from '../../src/cli/checkConfig.js';
import { loadConfigFile, parseConfig } from '../../src/config/load.js';
import { ConfigError, formatProblem, problemLines } from '../../src/config/problems.js';
import { configuredTargets } from '../../src/config/targets.js';

const invalidDirectory = join(import.meta.dirname, 'fixtures', 'invalid');
const validDirectory = join(import.meta.dirname, 'fixtures', 'valid');
const tlsDirectory = join(import.meta.dirname, '..', 'fixtures', 'tls');
/** bcrypt of "secret" at cost 4. */
const BCRYPT_HASH = '$2b$04$bCC77X2SvWaC134HlQkkQO.d5RAyugleVPV61W1BVOBhOA/1QKyfy';

/** The problems of a file as start-up and --check-config find them (metric selection included). */
async function problemsOf(path: string, env: Record<string, string> = {}): Promise<string[]> {
  try {
    await loadExporterConfig(path, env);
  } catch (error) {
    if (error instanceof ConfigError) return problemLines(error);
    throw error;
  }
  throw new Error(`${path} was accepted`);
}

/** The problems of configuration text, as --check-config lists them (without the file name). */
async function problemsOfText(text: string, source: string): Promise<string[]> {
  try {
    await parseConfig(text, { source, env: {} });
  } catch (error) {
    if (error instanceof ConfigError) return problemLines(error);
    throw error;
  }
  throw new Error(`${source} was accepted`);
}

describe('invalid configuration files', () => {
  const files = readdirSync(invalidDirectory).filter((name) => name.endsWith('.yaml'));

  it('has fixtures', () => {
    expect(files.length).toBeGreaterThanOrEqual(10);
  });

  it.each(files)('%s gives exactly the messages it pins', async (file) => {
    const path = join(invalidDirectory, file);
    const expected = readFileSync(path, 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('# expect: '))
      .map((line) => line.slice('# expect: '.length));
    expect(expected.length).toBeGreaterThan(0);
    expect(await problemsOf(path)).toEqual(expected);
  });
});

describe('a configuration file in another encoding', () => {
  it('saved as UTF-16 (a byte order mark, a NUL after every ASCII character) says so, not "parses as a string"', async () => {
    const path = join(
      import.meta.dirname,
      'fixtures',
      'encodings',
      'saved-as-utf-16-with-bom.yaml',
    );
    expect(await problemsOf(path)).toEqual([
      'the file is not UTF-8 text: it holds NUL bytes, as UTF-16 or a binary file does; save it as UTF-8 (line 1)',
    ]);
  });
});

describe('valid configuration files', () => {
  it('applies every default to a minimal file', async () => {
    const config = await loadConfigFile(join(validDirectory, 'minimal.yaml'), {
      TRUNK_API_TOKEN: 'from-env',
    });
    expect(config.trunk.token?.reveal()).toBe('from-env');
    expect({ ...config, trunk: { ...config.trunk, token: 'secret' } }).toEqual({
      trunk: {
        apiUrl: 'https://api.trunk.io',
        token: 'secret',
        orgUrlSlug: undefined,
        timeoutSeconds: 10,
        maxConcurrentRequests: 4,
        maxRequestsPerSecond: 10,
      },
      server: {
        address: '0.0.0.0',
        port: 9740,
        enableReload: false,
        maxConnections: 512,
        maxConnectionsPerAddress: 64,
        maxTlsConnectionsPerAddressPerSecond: 50,
        tls: undefined,
        basicAuthUsers: new Map(),
      },
      polling: {
        mergeQueueIntervalSeconds: 30,
        flakyTestsIntervalSeconds: 300,
        pullRequestDetails: true,
        pullRequestRecheckSeconds: 300,
        flakyTestDetails: true,
        staleAfterSeconds: 600,
      },
      metrics: { topCodeowners: 20 },
      reads: {
        queueEntryHistory: true,
        verificationRuns: true,
        testMetricsPeriod: '7d',
        testCollections: true,
      },
      sharding: { shard: 0, totalShards: 1 },
      discovery: {
        enabled: false,
        intervalSeconds: 300,
        repos: ['*'],
        branches: ['*'],
        flakyTests: true,
        maxTargets: 10_000,
      },
      webhooks: {
        enabled: false,
        path: '/webhooks/trunk',
        signingSecret: undefined,
        signingSecretFile: undefined,
        toleranceSeconds: 300,
        bodyTimeoutSeconds: 5,
      },
      targets: [
        {
          repo: { host: 'github.com', owner: 'acme', name: 'web' },
          name: 'github.com/acme/web',
          branches: ['main'],
          flakyTests: false,
        },
      ],
    });
  });

  it('accepts config.example.yaml as shipped', async () => {
    const config = await loadConfigFile(join(import.meta.dirname, '../../config.example.yaml'), {
      TRUNK_API_KEY: 'trunk_v2_example',
    });
    expect(config.targets.length).toBeGreaterThan(0);
    expect(config.trunk.apiKey?.reveal()).toBe('trunk_v2_example');
    expect(config.warnings).toBeUndefined();
  });

  it('expands ${VAR} in any string and accepts the object repo form', async () => {
    const config = await parseConfig(
      [
        'trunk:',
        '  token: ${TOKEN}',
        '  orgUrlSlug: ${ORG}-inc',
        'targets:',
        '  - repo: { host: github.com, owner: "${OWNER}", name: web }',
        '    branches: [main, "release-${RELEASE}"]',
        '    flakyTests: true',
      ].join('\n'),
      { source: 'inline', env: { TOKEN: 'tok', ORG: 'acme', OWNER: 'acme', RELEASE: '2' } },
    );
    expect(config.trunk.token?.reveal()).toBe('tok');
    expect(config.trunk.orgUrlSlug).toBe('acme-inc');
    expect(config.targets[0]?.name).toBe('github.com/acme/web');
    expect(config.targets[0]?.branches).toEqual(['main', 'release-2']);
  });

  it('reads and trims tokenFile, and drops a trailing /v1/ from apiUrl with one warning', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'trunk-exporter-config-'));
    const tokenFile = join(directory, 'token');
    await writeFile(tokenFile, 'file-token\n');
    const config = await parseConfig(
      `trunk:\n  apiUrl: http://127.0.0.1:1/v1/\n  tokenFile: ${tokenFile}\ntargets:\n  - repo: github.com/acme/web\n    branches: [main]\n`,
      { source: 'inline', env: {} },
    );
    expect(config.trunk.token?.reveal()).toBe('file-token');
    expect(config.trunk.apiUrl).toBe('http://127.0.0.1:1');
    expect(config.warnings).toEqual([
      'trunk.apiUrl ends in /v1, which is deprecated: it is the host now and the exporter appends /v1 and /v2 itself; using http://127.0.0.1:1',
    ]);
  });

  it('takes a repository with flaky tests and no merge queue without branches', async () => {
    const config = await parseConfig(
      `trunk:\n  token: t\n  orgUrlSlug: acme\ntargets:\n  - repo: github.com/acme/docs\n    flakyTests: true\n`,
      { source: 'inline', env: {} },
    );
    expect(config.targets[0]?.branches).toEqual([]);
    expect(configuredTargets(config)).toEqual([
      { kind: 'flaky_tests', repo: 'github.com/acme/docs', branch: '' },
    ]);
  });

  it('drops a trailing /v2 from apiUrl with one warning, so no call goes to /v2/v2/…', async () => {
    const config = await parseConfig(
      `trunk:\n  apiUrl: https://proxy.example/trunk/v2\n  apiKey: trunk_v2_k\ndiscovery:\n  enabled: true\n`,
      { source: 'inline', env: {} },
    );
    expect(config.trunk.apiUrl).toBe('https://proxy.example/trunk');
    expect(config.warnings).toEqual([
      'trunk.apiUrl ends in /v2: it is the host, and the exporter appends /v1 and /v2 itself; using https://proxy.example/trunk',
    ]);
  });

  it('keeps a host apiUrl with a path prefix as it is, without a warning', async () => {
    const config = await parseConfig(
      `trunk:\n  apiUrl: https://proxy.example/trunk/\n  token: t\ntargets:\n  - repo: github.com/acme/web\n    branches: [main]\n`,
      { source: 'inline', env: {} },
    );
    expect(config.trunk.apiUrl).toBe('https://proxy.example/trunk');
    expect(config.warnings).toBeUndefined();
  });

  it('reads the API key inline, from apiKeyFile or from TRUNK_API_KEY, beside or without a token', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'trunk-exporter-config-'));
    const keyFile = join(directory, 'key');
    await writeFile(keyFile, 'trunk_v2_from_file\n');
    const targets = 'targets:\n  - repo: github.com/acme/web\n    branches: [main]\n';
    const inline = await parseConfig(`trunk:\n  apiKey: trunk_v2_inline\n${targets}`, {
      source: 'inline',
      env: {},
    });
    expect(inline.trunk.apiKey?.reveal()).toBe('trunk_v2_inline');
    expect(inline.trunk.token).toBeUndefined();
    const fromFile = await parseConfig(`trunk:\n  apiKeyFile: ${keyFile}\n  token: t\n${targets}`, {
      source: 'inline',
      env: { TRUNK_API_KEY: 'trunk_v2_ignored' },
    });
    expect(fromFile.trunk.apiKey?.reveal()).toBe('trunk_v2_from_file');
    expect(fromFile.trunk.token?.reveal()).toBe('t');
    const fromEnvironment = await parseConfig(targets, {
      source: 'inline',
      env: { TRUNK_API_KEY: 'trunk_v2_env' },
    });
    expect(fromEnvironment.trunk.apiKey?.reveal()).toBe('trunk_v2_env');
    expect(fromEnvironment.warnings).toBeUndefined();
    expect(JSON.stringify(fromEnvironment)).not.toContain('trunk_v2_env');
  });

  it('accepts an API key without the trunk_v2_ prefix with one warning that never shows it', async () => {
    const config = await parseConfig(
      'targets:\n  - repo: github.com/acme/web\n    branches: [main]\n',
      { source: 'inline', env: { TRUNK_API_KEY: 'legacy-looking-key' } },
    );
    expect(config.trunk.apiKey?.reveal()).toBe('legacy-looking-key');
    expect(config.warnings).toEqual([
      "the Trunk API key does not start with trunk_v2_ as Trunk's v2 keys do; using it anyway (a v1 token belongs in trunk.token)",
    ]);
  });

  it('warns, where it was set and never showing it, of an API v2 key given as the v1 token', async () => {
    const targets = 'targets:\n  - repo: github.com/acme/web\n    branches: [main]\n';
    const advice =
      "the Trunk API token starts with trunk_v2_, as Trunk's API v2 keys do, and API v1 refuses a key: a key belongs in trunk.apiKey, trunk.apiKeyFile or TRUNK_API_KEY; using it as the token anyway";
    const inline = await parseConfig(`trunk:\n  token: trunk_v2_pasted\n${targets}`, {
      source: 'inline',
      env: {},
    });
    expect(inline.trunk.token?.reveal()).toBe('trunk_v2_pasted');
    expect(inline.warnings).toEqual([`trunk.token: ${advice} (line 2)`]);
    const keyFile = join(await mkdtemp(join(tmpdir(), 'trunk-token-')), 'token');
    await writeFile(keyFile, 'trunk_v2_in_file\n');
    const fromFile = await parseConfig(`trunk:\n  tokenFile: ${keyFile}\n${targets}`, {
      source: 'inline',
      env: {},
    });
    expect(fromFile.warnings).toEqual([`trunk.tokenFile: ${advice} (line 2)`]);
    const fromEnvironment = await parseConfig(targets, {
      source: 'inline',
      env: { TRUNK_API_TOKEN: 'trunk_v2_env' },
    });
    expect(fromEnvironment.warnings).toEqual([`TRUNK_API_TOKEN: ${advice}`]);
    expect(JSON.stringify([inline, fromFile, fromEnvironment])).not.toMatch(
      /trunk_v2_(pasted|in_file|env)/,
    );
    const token = await parseConfig(targets, {
      source: 'inline',
      env: { TRUNK_API_TOKEN: 'v1-token' },
    });
    expect(token.warnings).toBeUndefined();
  });

  it('needs no orgUrlSlug for flakyTests targets when an API key is set', async () => {
    const config = await parseConfig(
      'trunk:\n  apiKey: trunk_v2_k\ntargets:\n  - repo: github.com/acme/web\n    branches: [main]\n    flakyTests: true\n',
      { source: 'inline', env: {} },
    );
    expect(config.trunk.orgUrlSlug).toBeUndefined();
    expect(config.targets[0]?.flakyTests).toBe(true);
  });

  it('names the API key source when the key cannot be sent as a header, and never the key', async () => {
    const problems = await problemsOf(join(validDirectory, 'minimal.yaml'), {
      TRUNK_API_KEY: 'trunk_v2_secret\n',
    });
    expect(problems).toEqual([
      'the TRUNK_API_KEY environment variable is not a valid HTTP header value: contains a line break (U+000A) at character 16',
    ]);
  });

  it('never shows the token when the config is printed or serialized', async () => {
    const config = await parseConfig(
      'trunk:\n  token: very-secret-token\ntargets:\n  - repo: github.com/acme/web\n    branches: [main]\n',
      { source: 'inline', env: {} },
    );
    expect(JSON.stringify(config)).not.toContain('very-secret-token');
    expect(inspect(config, { depth: 10 })).not.toContain('very-secret-token');
    expect(String(config.trunk.token)).not.toContain('very-secret-token');
  });

  it('reads server.tls files and basicAuthUsers into the config', async () => {
    const config = await parseConfig(
      [
        'trunk:',
        '  token: t',
        'server:',
        '  enableReload: true',
        '  tls:',
        `    certFile: ${join(tlsDirectory, 'server.crt')}`,
        `    keyFile: ${join(tlsDirectory, 'server.key')}`,
        '  basicAuthUsers:',
        `    prometheus: ${BCRYPT_HASH}`,
        'targets:',
        '  - repo: github.com/acme/web',
        '    branches: [main]',
      ].join('\n'),
      { source: 'inline', env: {} },
    );
    expect(config.server.enableReload).toBe(true);
    expect(config.server.tls?.cert).toBe(readFileSync(join(tlsDirectory, 'server.crt'), 'utf8'));
    expect(config.server.tls?.key.reveal()).toContain('PRIVATE KEY');
    expect(inspect(config, { depth: 10 })).not.toContain('PRIVATE KEY');
    expect([...config.server.basicAuthUsers]).toEqual([['prometheus', BCRYPT_HASH]]);
  });

  it('rejects a TLS key that does not belong to the certificate', async () => {
    const yaml = [
      'trunk:',
      '  token: t',
      'server:',
      '  tls:',
      `    certFile: ${join(tlsDirectory, 'server.crt')}`,
      `    keyFile: ${join(tlsDirectory, 'rotated.key')}`,
      'targets:',
      '  - repo: github.com/acme/web',
      '    branches: [main]',
    ].join('\n');
    const error = await parseConfig(yaml, { source: 'inline', env: {} }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.map(formatProblem);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^server\.tls: certFile and keyFile are not a PEM certificate and its private key \(.+\) \(line 4\)$/,
    );
  });

  it('reports a missing file by path', async () => {
    expect(await problemsOf('/nonexistent/config.yaml')).toEqual([
      'cannot read file: ENOENT, no such file (write one from config.example.yaml, or name another with --config FILE)',
    ]);
  });
});

describe('files named in the configuration', () => {
  const yamlWithTokenFile = (tokenFile: string) =>
    `trunk:\n  tokenFile: ${tokenFile}\ntargets:\n  - repo: github.com/acme/web\n    branches: [main]\n`;

  async function fifo(): Promise<string> {
    const path = join(await mkdtemp(join(tmpdir(), 'trunk-exporter-fifo-')), 'fifo');
    execFileSync('mkfifo', [path]);
    return path;
  }

  it('refuses a FIFO as tokenFile at once instead of waiting for a writer', async () => {
    const path = await fifo();
    const directory = await mkdtemp(join(tmpdir(), 'trunk-exporter-config-'));
    const configPath = join(directory, 'config.yaml');
    await writeFile(configPath, yamlWithTokenFile(path));
    expect(await problemsOf(configPath)).toEqual([
      `trunk.tokenFile: cannot read ${path}: not a regular file (a FIFO) (line 2)`,
    ]);
  });

  it('refuses a FIFO as the configuration file itself', async () => {
    const path = await fifo();
    expect(await problemsOf(path)).toEqual(['cannot read file: not a regular file (a FIFO)']);
  });

  it('refuses a tokenFile over 64 KiB without reading it into the token', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'trunk-exporter-config-'));
    const tokenFile = join(directory, 'token');
    await writeFile(tokenFile, 'x'.repeat(64 * 1024 + 1));
    const configPath = join(directory, 'config.yaml');
    await writeFile(configPath, yamlWithTokenFile(tokenFile));
    expect(await problemsOf(configPath)).toEqual([
      `trunk.tokenFile: cannot read ${tokenFile}: larger than 64 KiB (line 2)`,
    ]);
  });

  it('names the source of a token that cannot be sent as a header, and never the token', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'trunk-exporter-config-'));
    const tokenFile = join(directory, 'token');
    // Two lines: trimming cannot make this one token.
    await writeFile(tokenFile, 'first-secret-line\nsecond-secret-line\n');
    const configPath = join(directory, 'config.yaml');
    await writeFile(configPath, yamlWithTokenFile(tokenFile));
    const fromFile = await problemsOf(configPath);
    expect(fromFile).toEqual([
      `trunk.tokenFile: the token in ${tokenFile} is not a valid HTTP header value: contains a line break (U+000A) at character 18 (line 2)`,
    ]);

    const noToken = join(validDirectory, 'minimal.yaml');
    const fromEnvironment = await problemsOf(noToken, { TRUNK_API_TOKEN: 'env-secret\r\n' });
    expect(fromEnvironment).toEqual([
      'the TRUNK_API_TOKEN environment variable is not a valid HTTP header value: contains a carriage return (U+000D) at character 11',
    ]);
    const padded = await problemsOf(noToken, { TRUNK_API_TOKEN: ' env-secret' });
    expect(padded).toEqual([
      'the TRUNK_API_TOKEN environment variable is not a valid HTTP header value: starts or ends with white space',
    ]);
    expect([...fromFile, ...fromEnvironment, ...padded].join('\n')).not.toMatch(/secret/);
  });
});

describe('an unknown key of a million characters', () => {
  it('is named by its first 64 characters and its length, not written out', async () => {
    const key = 'k'.repeat(1_000_000);
    const text = [
      'trunk:',
      '  token: t',
      'targets:',
      '  - repo: github.com/acme/web',
      '    branches: [main]',
      // An explicit key: a plain one may not be longer than 1,024 characters.
      `? "${key}"`,
      ': 1',
    ].join('\n');
    expect(await problemsOfText(text, 'long-key.yaml')).toEqual([
      `"${'k'.repeat(64)}"… (1000000 characters): unknown key (line 6)`,
    ]);
  });
});

describe('a file of many unknown keys', () => {
  /** `server` holding `count` unknown keys, the last one repeated. */
  const manyUnknownKeys = (count: number) =>
    [
      'trunk:',
      '  token: t',
      'targets:',
      '  - repo: github.com/acme/web',
      '    branches: [main]',
      'server:',
      ...Array.from({ length: count }, (_unused, index) => `  k${index}: 1`),
      `  k${count - 1}: 2`,
    ].join('\n');

  /**
   * How often `find`, `findIndex` and `some` call their predicate while `run` runs: the scans of a
   * list by which looking up each key in its mapping, or comparing it with every earlier key, cost
   * N² for N keys.
   */
  async function predicateCalls(run: () => Promise<unknown>): Promise<number> {
    type Scan = (
      this: unknown[],
      predicate: (...args: unknown[]) => unknown,
      thisArg?: unknown,
    ) => unknown;
    const prototype = Array.prototype as unknown as Record<string, Scan>;
    const methods = ['find', 'findIndex', 'some'];
    const originals = methods.map((method) => prototype[method] as Scan);
    let calls = 0;
    methods.forEach((method, index) => {
      const original = originals[index] as Scan;
      prototype[method] = function (predicate, thisArg) {
        return original.call(this, (...args: unknown[]) => {
          calls += 1;
          return predicate.apply(thisArg, args);
        });
      };
    });
    try {
      await run().catch(() => undefined);
    } finally {
      methods.forEach((method, index) => {
        prototype[method] = originals[index] as Scan;
      });
    }
    return calls;
  }

  const problems = (text: string) => problemsOfText(text, 'keys.yaml');

  it('reports the repeated key at its line', async () => {
    expect(await problems(manyUnknownKeys(500))).toEqual([
      'YAML: Map keys must be unique (line 507)',
    ]);
  });

  it('does work linear in the number of keys: eight times the keys, at most ten times the scans', async () => {
    const small = await predicateCalls(() =>
      problems(manyUnknownKeys(500).replace(/\n[^\n]*$/, '')),
    );
    const large = await predicateCalls(() =>
      problems(manyUnknownKeys(4000).replace(/\n[^\n]*$/, '')),
    );
    expect(small).toBeGreaterThan(0);
    // Quadratic work would take 64 times the scans.
    expect(large).toBeLessThan(10 * small);
  });
});

describe('a metric selection of many or long entries', () => {
  /** A file whose `metrics.exclude` (line 7) holds `entries`. */
  async function fileExcluding(entries: readonly string[]): Promise<string> {
    const directory = await mkdtemp(join(tmpdir(), 'selection-'));
    const path = join(directory, 'config.yaml');
    const lines = [
      'trunk:',
      '  token: t',
      'targets:',
      '  - repo: github.com/acme/web',
      '    branches: [main]',
      'metrics:',
      '  exclude:',
      ...entries.map((entry) => `    - ${entry}`),
    ];
    await writeFile(path, lines.join('\n'));
    return path;
  }

  it('refuses a list of 20,000 entries as a whole, without comparing each with every family', async () => {
    // Each entry that names no family was compared with every family's name for the nearest:
    // 100,000 of them (a 4 MiB file) held the loader, and a reload every scrape, for 40 s.
    const entries = Array.from({ length: 20_000 }, (_unused, index) => `no_such_family_${index}`);
    expect(await problemsOf(await fileExcluding(entries))).toEqual([
      'metrics.exclude: expected at most 1000 entries (names or `*` globs of the metric families) (line 7)',
    ]);
  });

  it('compares no family name with an entry far longer than any', async () => {
    // 1,000 entries of 4,000 characters: by edit distance with each family, minutes of CPU.
    const entries = Array.from({ length: 1000 }, (_unused, index) => `${'y'.repeat(4000)}${index}`);
    const problems = await problemsOf(await fileExcluding(entries));
    expect(problems.at(-1)).toBe('and 980 more problems (the first 20 are listed)');
    expect(problems[0]).toBe(
      `metrics.exclude[0]: "${'y'.repeat(4000)}0" matches no metric family (line 8)`,
    );
  });
});

describe('${VAR} references that expand to more than the file may hold', () => {
  it('are refused at the reference that passes 4 MiB, without making the copies', async () => {
    // Each reference was a copy of the value: a 100 KB variable named 30,000 times (a 400 KB
    // file) took 3 GB, and a reload of it ended the process out of memory.
    const references = Array.from({ length: 50 }, () => "    - '${BIG}'");
    const text = `trunk:\n  token: t\ntargets:\n  - repo: github.com/acme/web\nserver:\n  junk:\n${references.join('\n')}\n`;
    let problems: string[] = [];
    try {
      await parseConfig(text, { source: 'big.yaml', env: { BIG: 'a'.repeat(100_000) } });
    } catch (error) {
      if (error instanceof ConfigError) problems = problemLines(error);
      else throw error;
    }
    // 41 values are 4,100,000 characters; the 42nd passes 4 MiB (4,194,304).
    expect(problems).toEqual([
      'server.junk[41]: environment variable BIG: the ${…} references up to here expand to more than 4 MiB, more than the file may hold (line 48)',
    ]);
  });
});

describe('a file nested thousands deep', () => {
  const problems = (text: string) => problemsOfText(text, 'deep.yaml');
  const TOO_DEEP =
    'YAML: mappings and lists nested deeper than 100 levels (the settings nest 4 deep)';

  it('names the depth and the line of 100,000 nested flow lists, without overflowing the stack', async () => {
    // Generated here rather than committed: 200 kB.
    const text = `trunk:\n  token: t\ntargets: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`;
    expect(await problems(text)).toEqual([`${TOO_DEEP} (line 3)`]);
  });

  it('stops reading at the level past 100, before the parser has taken the rest of the file', async () => {
    // A file to be refused must not be parsed whole first: 4 MiB of `[` (or of `- `) would build
    // gigabytes of tokens. The parser takes a few hundred of the 200,000 lexemes.
    const next = vi.spyOn(Parser.prototype, 'next');
    try {
      const text = `trunk:\n  token: t\ntargets:\n${'- '.repeat(100_000)}x\n`;
      expect(await problems(text)).toEqual([`${TOO_DEEP} (line 4)`]);
      expect(next.mock.calls.length).toBeLessThan(1000);
    } finally {
      next.mockRestore();
    }
  });

  it('names the depth and the line of 1,500 nested block mappings', async () => {
    const levels = Array.from(
      { length: 1500 },
      (_unused, index) => `${' '.repeat(index + 1)}k${index}:`,
    );
    const text = `trunk:\n  token: t\nmetrics:\n${levels.join('\n')} 1\n`;
    // The file is the 1st mapping, metrics the 2nd (line 4): the 101st starts on line 103.
    expect(await problems(text)).toEqual([`${TOO_DEEP} (line 103)`]);
  });
});

describe('a file of very many values', () => {
  const problems = (text: string) => problemsOfText(text, 'many.yaml');

  it('refuses a file of more than 150,000 values at the value past the cap, before composing it', async () => {
    // 200,001 numbers in 400 KB, far under the 4 MiB cap: each costs about a kilobyte while read.
    const compose = vi.spyOn(Composer.prototype, 'compose');
    try {
      const text = `trunk:\n  token: t\nx: [${'1,'.repeat(200_000)}1]\n`;
      expect(await problems(text)).toEqual([
        'YAML: more than 150000 values (10,000 targets are about 110,000; discovery finds more) (line 3)',
      ]);
      expect(compose).not.toHaveBeenCalled();
    } finally {
      compose.mockRestore();
    }
  });

  it('reads 10,000 targets, each with its branches and flakyTests', async () => {
    const targets = Array.from(
      { length: 10_000 },
      (_unused, index) =>
        `  - repo: github.com/acme/repo-${String(index)}\n    branches: [main, release]\n    flakyTests: true\n`,
    );
    const config = await parseConfig(
      `trunk:\n  token: t\n  orgUrlSlug: acme\ntargets:\n${targets.join('')}`,
      {
        source: 'many.yaml',
        env: {},
      },
    );
    expect(config.targets).toHaveLength(10_000);
  });
});
