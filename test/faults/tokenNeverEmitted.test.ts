// The token never leaves the process, whichever way it came in (config `token`, `tokenFile`,
// TRUNK_API_TOKEN) and whatever the API does, even when its error bodies echo the token back: the
// real CLI (`npm test` builds dist/ first) runs a fault run in a child process, and everything it
// emitted is grepped, with what `--check-config` prints (the check the command line runs, in this
// process: test/support/checkConfig.ts).
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FaultPlan } from '../../src/simulator/faults.js';
import { checkConfigInProcess } from '../support/checkConfig.js';
import { REPOSITORY_ROOT } from '../support/nodeProcess.js';
import { startTestSimulator } from '../support/simulator.js';
import { API, WEB } from './harness.js';

const bin = join(REPOSITORY_ROOT, 'bin', 'trunk-exporter.js');
const TOKEN = 'tok_FAULTRUN_5e1f0c9a7b3d_SECRET';

const directories: string[] = [];
afterEach(async () => {
  for (const directory of directories.splice(0)) await rm(directory, { recursive: true });
});

/** Runs `--check-config --config PATH`; resolves with its exit code and everything it printed. */
async function checkConfig(
  path: string,
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  const { code, stdout, stderr } = await checkConfigInProcess(path, env);
  return { code, output: stdout + stderr };
}

/** Runs the exporter until every target has been polled, fetches every page, then SIGTERM. */
function runExporter(configPath: string, env: Record<string, string>): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, '--config', configPath, '--log-level', 'trace'], {
      cwd: REPOSITORY_ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
    });
    let output = '';
    const emitted: string[] = [];
    let started = false;
    const visit = async (url: string): Promise<void> => {
      const deadline = Date.now() + 20_000;
      while ((await fetch(`${url}/readyz`)).status !== 200) {
        if (Date.now() > deadline) throw new Error('exporter never became ready');
        await new Promise((done) => setTimeout(done, 50));
      }
      for (const [path, accept] of [
        ['/metrics', 'text/plain'],
        ['/metrics', 'application/openmetrics-text; version=1.0.0'],
        ['/', 'text/html'],
        ['/healthz', '*/*'],
        ['/readyz', '*/*'],
        ['/no-such-page', '*/*'],
      ] as const) {
        const response = await fetch(`${url}${path}`, { headers: { accept } });
        emitted.push(JSON.stringify(Object.fromEntries(response.headers)), await response.text());
      }
    };
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const url = /serving metrics on (http:\/\/\S+)\/metrics/.exec(output)?.[1];
      if (url !== undefined && !started) {
        started = true;
        visit(url).then(
          () => child.kill('SIGTERM'),
          (error: unknown) => {
            child.kill('SIGKILL');
            reject(error instanceof Error ? error : new Error(String(error)));
          },
        );
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      emitted.push(output, `exit ${String(code)}`);
      resolve(emitted);
    });
  });
}

async function faultySimulator(): Promise<string> {
  const faults = new FaultPlan()
    // Error bodies, an auth failure and a malformed answer that all echo the token back.
    .inject(
      'getQueue',
      { kind: 'status', status: 500, body: `bad token ${TOKEN}` },
      {
        repo: WEB,
        times: Infinity,
      },
    )
    .inject(
      'getQueue',
      { kind: 'status', status: 401, body: `invalid API token ${TOKEN}` },
      {
        repo: API,
        times: Infinity,
      },
    )
    .inject(
      'flaky-tests/list-quarantined-tests',
      { kind: 'raw', body: `{"token": "${TOKEN}"` },
      {
        times: Infinity,
      },
    );
  const { simulator } = await startTestSimulator({ seed: 3, token: TOKEN, faults });
  return simulator.baseUrl;
}

function config(apiUrl: string, tokenLine: string): string {
  return [
    'trunk:',
    `  apiUrl: ${apiUrl}`,
    tokenLine,
    '  orgUrlSlug: acme',
    '  timeoutSeconds: 1',
    'server:',
    '  address: 127.0.0.1',
    '  port: 0',
    'polling:',
    '  mergeQueueIntervalSeconds: 0.3',
    '  flakyTestsIntervalSeconds: 0.3',
    'targets:',
    `  - repo: ${WEB}`,
    '    branches: [main, release]',
    '    flakyTests: true',
    `  - repo: ${API}`,
    '    branches: [main]',
    '  - repo: github.com/acme/mobile',
    '    branches: [develop]',
  ]
    .filter((line) => line !== '')
    .join('\n');
}

describe('the token in a fault run', () => {
  it.each([
    ['config token', 'token'],
    ['tokenFile', 'tokenFile'],
    ['TRUNK_API_TOKEN', 'environment'],
  ] as const)(
    'given as %s: absent from logs, pages, headers and --check-config output',
    async (_name, source) => {
      const apiUrl = await faultySimulator();
      const directory = await mkdtemp(join(tmpdir(), 'trunk-exporter-token-'));
      directories.push(directory);
      const tokenFile = join(directory, 'token');
      await writeFile(tokenFile, `${TOKEN}\n`);
      const tokenLine =
        source === 'token'
          ? `  token: ${TOKEN}`
          : source === 'tokenFile'
            ? `  tokenFile: ${tokenFile}`
            : '';
      const env: Record<string, string> =
        source === 'environment' ? { TRUNK_API_TOKEN: TOKEN } : {};
      const configPath = join(directory, 'config.yaml');
      await writeFile(configPath, config(apiUrl, tokenLine));
      // The same file with a type error on the token's own line.
      const brokenPath = join(directory, 'broken.yaml');
      await writeFile(
        brokenPath,
        config(apiUrl, `  token: [${TOKEN}]`).replace(
          '  timeoutSeconds: 1',
          '  timeoutSeconds: soon',
        ),
      );

      const [checked, rejected, emitted] = await Promise.all([
        checkConfig(configPath, env),
        checkConfig(brokenPath, env),
        runExporter(configPath, env),
      ]);

      expect(checked.code).toBe(0);
      expect(rejected.code).toBe(2);
      expect(rejected.output).toContain('trunk.token: expected string, got array');
      const everything = [checked.output, rejected.output, ...emitted].join('\n');
      // The fault run really happened: each echoing path was taken, and the process exited cleanly.
      expect(everything).toContain('HTTP 500: \\"bad token <redacted>\\"');
      expect(everything).toContain('HTTP 401: \\"invalid API token <redacted>\\"');
      expect(everything).toContain('response is not JSON');
      expect(everything).toContain('trunk_exporter_target_up');
      expect(emitted.at(-1)).toBe('exit 0');
      expect(everything).not.toContain(TOKEN);
      // Nor a large piece of it (a cut excerpt must not leave a prefix behind).
      expect(everything).not.toContain(TOKEN.slice(0, 16));
    },
  );
});

const API_KEY = 'trunk_v2_FAULTRUN_9d8c7b6a_SECRETKEY';

describe('the API key in a fault run', () => {
  it.each([
    ['config apiKey', 'apiKey'],
    ['apiKeyFile', 'apiKeyFile'],
    ['TRUNK_API_KEY', 'environment'],
  ] as const)(
    'given as %s: absent from logs, pages, headers and --check-config output',
    async (_name, source) => {
      const faults = new FaultPlan()
        // An error envelope, a plain-text edge error and a malformed answer that echo the key.
        .inject(
          'v2/merge-queues/{id}/pull-requests',
          {
            kind: 'status',
            status: 500,
            contentType: 'application/json',
            body: JSON.stringify({ error: { code: 'INTERNAL_ERROR', message: `key ${API_KEY}` } }),
          },
          { repo: WEB, times: Infinity },
        )
        .inject(
          'v2/merge-queues/{id}/pull-requests',
          { kind: 'status', status: 401, body: `invalid key ${API_KEY}` },
          { repo: API, times: Infinity },
        )
        .inject('v2/tests', { kind: 'raw', body: `{"key": "${API_KEY}"` }, { times: Infinity });
      const { simulator } = await startTestSimulator({
        seed: 3,
        token: TOKEN,
        apiKey: API_KEY,
        faults,
      });
      const directory = await mkdtemp(join(tmpdir(), 'trunk-exporter-key-'));
      directories.push(directory);
      const keyFile = join(directory, 'key');
      await writeFile(keyFile, `${API_KEY}\n`);
      const keyLine =
        source === 'apiKey'
          ? `  apiKey: ${API_KEY}`
          : source === 'apiKeyFile'
            ? `  apiKeyFile: ${keyFile}`
            : '';
      const env: Record<string, string> =
        source === 'environment' ? { TRUNK_API_KEY: API_KEY } : {};
      const configPath = join(directory, 'config.yaml');
      await writeFile(
        configPath,
        config(simulator.origin, keyLine).replace('  orgUrlSlug: acme\n', ''),
      );
      const [checked, emitted] = await Promise.all([
        checkConfig(configPath, env),
        runExporter(configPath, env),
      ]);
      expect(checked.code).toBe(0);
      const everything = [checked.output, ...emitted].join('\n');
      expect(everything).toContain('HTTP 500 INTERNAL_ERROR: \\"key <redacted>\\"');
      expect(everything).toContain('HTTP 401: \\"invalid key <redacted>\\"');
      expect(everything).toContain('response is not JSON');
      expect(emitted.at(-1)).toBe('exit 0');
      expect(everything).not.toContain(API_KEY);
      expect(everything).not.toContain(API_KEY.slice(0, 16));
    },
  );
});
