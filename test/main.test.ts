// The command line as a user runs it: the built `bin/trunk-exporter.js` in a child process
// (`npm test` builds dist/ first).
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDemoWorld } from '../src/demo/demo.js';
import { configYaml, startFrozenSimulator } from './support/exporterHarness.js';
import { root, startCli } from './support/cli.js';
import { parseExposition, select, sum } from './support/exposition.js';
import { runNode, type FinishedProcess } from './support/nodeProcess.js';

const bin = join(root, 'bin', 'trunk-exporter.js');
const fixtures = join(import.meta.dirname, 'config', 'fixtures');

function run(args: string[], env: Record<string, string> = {}): Promise<FinishedProcess> {
  return runNode([bin, ...args], env);
}

describe('trunk-exporter command line', () => {
  it('prints its version and help', async () => {
    const [version, help] = await Promise.all([run(['--version']), run(['--help'])]);
    expect(version.code).toBe(0);
    expect(version.stdout).toMatch(/^trunk-exporter \d+\.\d+\.\d+\n$/);
    expect(help.code).toBe(0);
    for (const flag of [
      '--config',
      '--check-config',
      '--demo',
      '--log-level',
      '--version',
      'simulate',
      '--webhook-url URL --webhook-secret whsec_',
    ]) {
      expect(help.stdout).toContain(flag);
    }
  });

  it('--check-config exits 0 for a valid file', async () => {
    const result = await run(['--check-config', '--config', join(root, 'config.example.yaml')], {
      TRUNK_API_KEY: 'trunk_v2_x',
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('OK');
  });

  it('--check-config prints every problem with its path and exits 2', async () => {
    const path = join(fixtures, 'invalid', 'wrong-types.yaml');
    const result = await run(['--check-config', '--config', path]);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([
      `${path}: trunk.timeoutSeconds: expected number, got string (line 6)`,
      `${path}: server.port: Too big: expected number to be <=65535 (line 8)`,
      `${path}: polling.pullRequestDetails: expected boolean, got string (line 10)`,
    ]);
  });

  it('refuses to run with an invalid config, and rejects unknown flags with usage', async () => {
    const [invalid, unknown] = await Promise.all([
      run(['--config', join(fixtures, 'invalid', 'empty-branches.yaml')]),
      run(['--frobnicate']),
    ]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain(
      'targets[1].branches: expected a non-empty list (or flakyTests: true for a repository without a merge queue) (line 8)',
    );
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("Unknown option '--frobnicate'");
    expect(unknown.stderr).toContain('Usage:');
  });

  it('simulate --webhook-url needs --webhook-secret, and a mistyped secret is never echoed', async () => {
    const url = 'http://127.0.0.1:9/webhooks/trunk';
    const [noSecret, notHttp, mistyped] = await Promise.all([
      run(['simulate', '--webhook-url', url]),
      run(['simulate', '--webhook-url', 'ftp://x/y', '--webhook-secret', 'whsec_QUJD']),
      run(['simulate', '--webhook-url', url, '--webhook-secret', 'hunter2-secret']),
    ]);
    expect(noSecret.code).toBe(2);
    expect(noSecret.stderr).toContain('--webhook-url needs --webhook-secret');
    expect(notHttp.code).toBe(2);
    expect(notHttp.stderr).toContain('--webhook-url: expected an http(s) URL');
    expect(mistyped.code).toBe(2);
    expect(mistyped.stderr).toContain('--webhook-secret: expected whsec_ followed by base64');
    expect(mistyped.stderr).not.toContain('hunter2-secret');
  });

  it('simulate --api-key serves v2 to that key only, and --token stays the v1 credential', async () => {
    const child = spawn(
      process.execPath,
      [bin, 'simulate', '--port', '0', '--token', 'cli-token', '--api-key', 'trunk_v2_cli-key'],
      { cwd: root, env: { PATH: process.env.PATH ?? '' } },
    );
    try {
      const origin = await new Promise<string>((resolve, reject) => {
        let output = '';
        // As long as startCli gives the exporter: a busy machine takes seconds to start Node.js.
        const timer = setTimeout(() => {
          reject(new Error(`no v2 address logged: ${output}`));
        }, 20_000);
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          const match = /and (http:\/\/[^\s"]+)\/v2/.exec(output);
          if (match?.[1] !== undefined) {
            clearTimeout(timer);
            resolve(match[1]);
          }
        });
      });
      const status = async (headers: Record<string, string>) =>
        (await fetch(`${origin}/v2/merge-queues`, { headers })).status;
      expect(await status({ Authorization: 'Bearer trunk_v2_cli-key' })).toBe(200);
      expect(await status({ Authorization: 'Bearer trunk_v2_demo-key' })).toBe(401);
      expect(await status({ Authorization: 'Bearer cli-token' })).toBe(401);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('--demo serves live metrics, logs its URL, and exits 0 on SIGTERM', async () => {
    // The demo's world (seed 1): each of its merge queues, and the quarantine list of each of its
    // repositories, is a target discovery finds.
    const { world } = createDemoWorld(1, Date.now() / 1000);
    const targets = world.mergeQueues.length + world.testCollections.length;
    const cli = startCli(['--demo', '--port', '0']);
    const url = await cli.url;
    try {
      // Waits for the count it then asserts: discovery and first polls take as long as the
      // machine lets them.
      let samples = parseExposition(await (await fetch(`${url}/metrics`)).text());
      const deadline = Date.now() + 40_000;
      while (sum(samples, 'trunk_exporter_target_up') !== targets) {
        if (Date.now() > deadline) {
          throw new Error(
            `${String(sum(samples, 'trunk_exporter_target_up'))} of ${String(targets)} targets up`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
        samples = parseExposition(await (await fetch(`${url}/metrics`)).text());
      }
      expect(sum(samples, 'trunk_exporter_target_up')).toBe(targets);
      expect(sum(samples, 'trunk_merge_queue_pull_requests')).toBeGreaterThan(0);
      expect(sum(samples, 'trunk_flaky_tests_quarantined')).toBeGreaterThan(0);
    } finally {
      cli.child.kill('SIGTERM');
      expect(await cli.exit).toBe(0);
      // Stopped within the grace period, by the exporter's own clock: not the fallback exit.
      expect(cli.stdout()).not.toContain('shutdown took longer');
    }
  }, 60_000);

  it('--shard and --total-shards override the config, and impossible shards exit 2', async () => {
    const config = join(fixtures, 'valid', 'minimal.yaml');
    const [flagsOnly, withConfig, notANumber] = await Promise.all([
      run(['--config', config, '--shard', '3', '--total-shards', '3']),
      // --shard alone meets the config's totalShards (1 by default).
      run(['--config', config, '--shard', '1'], { TRUNK_API_TOKEN: 'x' }),
      run(['--shard', 'one']),
    ]);
    expect(flagsOnly.code).toBe(2);
    expect(flagsOnly.stderr).toContain('--shard: expected 0..2 (--total-shards 3), got 3');
    expect(withConfig.code).toBe(2);
    expect(withConfig.stderr).toContain(
      'shard must be a whole number from 0 to 0 (total shards 1), got 1 (--shard/--total-shards override sharding in',
    );
    expect(notANumber.code).toBe(2);
    expect(notANumber.stderr).toContain('--shard: expected a whole number, got "one"');
  });

  it('runs as the shard the flags name', async () => {
    const { simulator } = await startFrozenSimulator();
    const directory = await mkdtemp(join(tmpdir(), 'trunk-exporter-shard-'));
    const path = join(directory, 'config.yaml');
    const targets = '  - repo: github.com/acme/web\n    branches: [main, release]';
    await writeFile(
      path,
      `${configYaml({ apiUrl: simulator.baseUrl, targets })}\nsharding:\n  totalShards: 2\n`,
    );
    const cli = startCli(['--config', path, '--shard', '1', '--total-shards', '3']);
    try {
      const url = await cli.url;
      const samples = parseExposition(await (await fetch(`${url}/metrics`)).text());
      expect(select(samples, 'trunk_exporter_shard_ordinal')[0]?.value).toBe(1);
      expect(select(samples, 'trunk_exporter_total_shards')[0]?.value).toBe(3);
    } finally {
      cli.child.kill('SIGTERM');
      expect(await cli.exit).toBe(0);
    }
  });
});
