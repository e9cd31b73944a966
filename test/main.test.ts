// The command line as a user runs it: the built `bin/trunk-exporter.js` in a child process
// (`npm test` builds dist/ first).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseExposition, sum } from './support/exposition.js';
import { runNode, type FinishedProcess } from './support/nodeProcess.js';

const root = join(import.meta.dirname, '..');
const bin = join(root, 'bin', 'trunk-exporter.js');
const fixtures = join(import.meta.dirname, 'config', 'fixtures');

function run(args: string[], env: Record<string, string> = {}): Promise<FinishedProcess> {
  return runNode([bin, ...args], env);
}

describe('trunk-exporter command line', () => {
  it('prints its version and help', async () => {
    const version = await run(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout).toMatch(/^trunk-exporter \d+\.\d+\.\d+\n$/);
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    for (const flag of [
      '--config',
      '--check-config',
      '--demo',
      '--log-level',
      '--version',
      'simulate',
    ]) {
      expect(help.stdout).toContain(flag);
    }
  });

  it('--check-config exits 0 for a valid file', async () => {
    const result = await run(['--check-config', '--config', join(root, 'config.example.yaml')], {
      TRUNK_API_TOKEN: 'x',
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
    const invalid = await run(['--config', join(fixtures, 'invalid', 'empty-branches.yaml')]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('targets[1].branches: expected a non-empty list (line 8)');
    const unknown = await run(['--frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("Unknown option '--frobnicate'");
    expect(unknown.stderr).toContain('Usage:');
  });

  it('--demo serves live metrics, logs its URL, and exits 0 on SIGTERM', async () => {
    const child = spawn(process.execPath, [bin, '--demo', '--port', '0'], { cwd: root });
    let stdout = '';
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`no URL logged: ${stdout}`));
      }, 10_000);
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        const match = /serving metrics on (http:\/\/\S+)\/metrics/.exec(stdout);
        if (match?.[1]) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      });
    });
    try {
      let samples = parseExposition(await (await fetch(`${url}/metrics`)).text());
      const deadline = Date.now() + 10_000;
      while (sum(samples, 'trunk_exporter_target_up') < 7 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        samples = parseExposition(await (await fetch(`${url}/metrics`)).text());
      }
      expect(sum(samples, 'trunk_exporter_target_up')).toBe(7);
      expect(sum(samples, 'trunk_merge_queue_pull_requests')).toBeGreaterThan(0);
      expect(sum(samples, 'trunk_flaky_tests_quarantined')).toBeGreaterThan(0);
    } finally {
      const started = Date.now();
      const exit = new Promise<number | null>((resolve) => child.on('exit', resolve));
      child.kill('SIGTERM');
      expect(await exit).toBe(0);
      expect(Date.now() - started).toBeLessThan(5000);
    }
  });
});
