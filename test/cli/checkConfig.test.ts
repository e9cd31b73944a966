// `--check-config`: its output and exit status, from the check the command line runs, in this
// process with a child's environment (test/support/checkConfig.ts). test/main.test.ts runs the
// command line itself (`npm test` builds dist/ first) on a valid file and on one with problems.
import { readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkConfigInProcess as checkConfig } from '../support/checkConfig.js';
import { startCli } from '../support/cli.js';

const fixtures = join(import.meta.dirname, '..', 'config', 'fixtures');

/** The `# expect:` lines of a fixture, as --check-config prints them. */
function expectedLines(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('# expect: '))
    .map((line) => `${path}: ${line.slice('# expect: '.length)}`);
}

/** The `# expect warning:` lines of a fixture, without the prefix. */
function expectedWarnings(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('# expect warning: '))
    .map((line) => line.slice('# expect warning: '.length));
}

describe('--check-config', () => {
  it('counts repositories and merge queues in singular and plural', async () => {
    const one = join(fixtures, 'valid', 'minimal.yaml');
    const directory = await mkdtemp(join(tmpdir(), 'trunk-exporter-check-'));
    const three = join(directory, 'config.yaml');
    await writeFile(
      three,
      'targets:\n  - repo: github.com/acme/web\n    branches: [main, release]\n  - repo: github.com/acme/api\n    branches: [main]\n',
    );
    const [single, plural] = await Promise.all([
      checkConfig(one, { TRUNK_API_TOKEN: 'x' }),
      checkConfig(three, { TRUNK_API_TOKEN: 'x' }),
    ]);
    expect(single).toEqual({
      code: 0,
      stdout: `${one}: OK (1 repository, 1 merge queue)\n`,
      stderr: '',
    });
    expect(plural).toEqual({
      code: 0,
      stdout: `${three}: OK (2 repositories, 3 merge queues)\n`,
      stderr: '',
    });
  });

  it('says discovery is on, and prints each warning (a /v1 apiUrl, a key without trunk_v2_) but exits 0', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'trunk-exporter-check-'));
    const path = join(directory, 'config.yaml');
    await writeFile(
      path,
      'trunk:\n  apiUrl: https://api.trunk.io/v1\ndiscovery:\n  enabled: true\n  intervalSeconds: 120\n',
    );
    expect(await checkConfig(path, { TRUNK_API_KEY: 'not-a-v2-looking-key' })).toEqual({
      code: 0,
      stdout: `${path}: OK (0 repositories, 0 merge queues; discovery of the organization's merge queues every 120s)\n`,
      stderr:
        `${path}: warning: trunk.apiUrl ends in /v1, which is deprecated: it is the host now and the exporter appends /v1 and /v2 itself; using https://api.trunk.io\n` +
        `${path}: warning: the Trunk API key does not start with trunk_v2_ as Trunk's v2 keys do; using it anyway (a v1 token belongs in trunk.token)\n`,
    });
  });

  it.each([
    'yaml-alias-bomb.yaml',
    'duplicate-target-beside-schema-errors.yaml',
    'no-credential-beside-trunk-schema-error.yaml',
    'metrics-selection-beside-schema-errors.yaml',
  ])('reports %s as config problems, each with its line, and exits 2', async (file) => {
    const path = join(fixtures, 'invalid', file);
    const result = await checkConfig(path);
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: `${expectedLines(path).join('\n')}\n`,
    });
  });

  it('warns, and still exits 0, when the basic-auth users are hashed at different bcrypt costs', async () => {
    const differ = join(fixtures, 'valid', 'basic-auth-users-different-costs.yaml');
    const same = join(fixtures, 'valid', 'basic-auth-users-same-cost.yaml');
    const [warned, quiet] = await Promise.all([
      checkConfig(differ, { TRUNK_API_TOKEN: 'x' }),
      checkConfig(same, { TRUNK_API_TOKEN: 'x' }),
    ]);
    const warning = expectedWarnings(differ).map((line) => `${differ}: warning: ${line}\n`);
    expect(warning).toHaveLength(1);
    expect(warned).toEqual({
      code: 0,
      stdout: `${differ}: OK (1 repository, 1 merge queue)\n`,
      stderr: warning[0],
    });
    expect(quiet).toEqual({
      code: 0,
      stdout: `${same}: OK (1 repository, 1 merge queue)\n`,
      stderr: '',
    });
  });

  it('names TRUNK_API_TOKEN when the token from it cannot be sent as a header', async () => {
    const path = join(fixtures, 'valid', 'minimal.yaml');
    const result = await checkConfig(path, { TRUNK_API_TOKEN: 'env-token-1f2e\n' });
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: `${path}: the TRUNK_API_TOKEN environment variable is not a valid HTTP header value: contains a line break (U+000A) at character 15\n`,
    });
  });

  it('warns about the settings API v2 ignores whenever an API key is set, and not with only a token', async () => {
    const path = join(fixtures, 'valid', 'v1-only-settings-beside-api-key.yaml');
    const warnings = expectedWarnings(path);
    expect(warnings).toHaveLength(2);
    const [keyOnly, both, tokenOnly] = await Promise.all([
      checkConfig(path, { TRUNK_API_KEY: 'trunk_v2_k' }),
      checkConfig(path, { TRUNK_API_KEY: 'trunk_v2_k', TRUNK_API_TOKEN: 't' }),
      checkConfig(path, { TRUNK_API_TOKEN: 't' }),
    ]);
    const warned = {
      code: 0,
      stdout: `${path}: OK (1 repository, 1 merge queue)\n`,
      stderr: warnings.map((line) => `${path}: warning: ${line}\n`).join(''),
    };
    expect(keyOnly).toEqual(warned);
    expect(both).toEqual(warned);
    expect(tokenOnly).toEqual({ ...warned, stderr: '' });
  });

  it('warns about flakyTestDetails when every quarantine list is read through API v2, not when the token reads it', async () => {
    const path = join(fixtures, 'valid', 'flaky-test-details-beside-api-key.yaml');
    const warnings = expectedWarnings(path);
    expect(warnings).toHaveLength(1);
    const [keyOnly, both, tokenOnly] = await Promise.all([
      checkConfig(path, { TRUNK_API_KEY: 'trunk_v2_k' }),
      checkConfig(path, { TRUNK_API_KEY: 'trunk_v2_k', TRUNK_API_TOKEN: 't' }),
      checkConfig(path, { TRUNK_API_TOKEN: 't' }),
    ]);
    const stdout = `${path}: OK (1 repository, 0 merge queues)\n`;
    expect(keyOnly).toEqual({
      code: 0,
      stdout,
      stderr: warnings.map((line) => `${path}: warning: ${line}\n`).join(''),
    });
    expect(both).toEqual({ code: 0, stdout, stderr: '' });
    expect(tokenOnly).toEqual({ code: 0, stdout, stderr: '' });
  });

  it('warns about the optional reads when only a token is set, not with an API key', async () => {
    const path = join(fixtures, 'valid', 'reads-without-api-key.yaml');
    const warnings = expectedWarnings(path);
    expect(warnings).toHaveLength(2);
    const [tokenOnly, both] = await Promise.all([
      checkConfig(path, { TRUNK_API_TOKEN: 't' }),
      checkConfig(path, { TRUNK_API_KEY: 'trunk_v2_k', TRUNK_API_TOKEN: 't' }),
    ]);
    const stdout = `${path}: OK (1 repository, 0 merge queues)\n`;
    expect(tokenOnly).toEqual({
      code: 0,
      stdout,
      stderr: warnings.map((line) => `${path}: warning: ${line}\n`).join(''),
    });
    expect(both).toEqual({ code: 0, stdout, stderr: '' });
  });

  it.each([
    [
      'the expected API load exceeds trunk.maxRequestsPerSecond',
      'api-load-over-max-requests-per-second.yaml',
    ],
    ['maxConcurrentRequests: 1 leaves no request slot free', 'max-concurrent-requests-one.yaml'],
    [
      "maxRequestsPerSecond is above Trunk's 100 a second per organization",
      'max-requests-per-second-past-trunks-organization-limit.yaml',
    ],
    [
      "the shards together pass Trunk's 100 a second per organization",
      'max-requests-per-second-past-trunks-limit-across-shards.yaml',
    ],
    [
      'a metrics.include entry selects only families webhook events move, with webhooks off',
      'metrics-include-of-webhook-only-families-without-webhooks.yaml',
    ],
  ])('warns that %s', async (_, file) => {
    const path = join(fixtures, 'valid', file);
    const [warning] = expectedWarnings(path);
    expect(await checkConfig(path)).toEqual({
      code: 0,
      stdout: `${path}: OK (1 repository, 1 merge queue)\n`,
      stderr: `${path}: warning: ${warning}\n`,
    });
  });
});

describe('start-up', () => {
  it('logs each warning of the configuration as a warn line', async () => {
    const path = join(fixtures, 'valid', 'v1-only-settings-beside-api-key.yaml');
    const cli = startCli(['--config', path, '--port', '0'], { TRUNK_API_KEY: 'trunk_v2_k' });
    try {
      await cli.url;
      const logged = cli
        .stdout()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { level: number; msg: string })
        .filter((record) => record.level === 40)
        .map((record) => record.msg);
      for (const warning of expectedWarnings(path)) expect(logged).toContain(warning);
    } finally {
      cli.child.kill('SIGTERM');
      await cli.exit;
    }
  });
});
