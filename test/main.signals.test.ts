// Signals to the real command line (built bin/trunk-exporter.js in a child process): SIGHUP reloads
// the config file, SIGTERM and SIGINT stop it with API calls still in flight.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startCli } from './support/cli.js';
import { parseExposition, select, sum } from './support/exposition.js';
import { configYaml, startFrozenSimulator } from './support/exporterHarness.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function writeConfig(yaml: string): Promise<string> {
  const file = join(await mkdtemp(join(tmpdir(), 'trunk-exporter-cli-')), 'config.yaml');
  await writeFile(file, yaml);
  return file;
}

/** A Trunk API that takes every request and never answers: calls stay in flight until aborted. */
async function startSilentApi(): Promise<{ url: string; requests: () => number }> {
  const pending = new Set<IncomingMessage>();
  let requests = 0;
  const server = createServer((request) => {
    requests++;
    pending.add(request);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  );
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, requests: () => requests };
}

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('trunk-exporter signals', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s with API calls in flight: aborts them and exits 0 within the 5 s grace period',
    async (signal) => {
      const api = await startSilentApi();
      const file = await writeConfig(
        configYaml({
          apiUrl: api.url,
          targets: '  - repo: github.com/acme/web\n    branches: [main, release]',
        }).replace('timeoutSeconds: 2', 'timeoutSeconds: 60'),
      );
      const cli = startCli(['--config', file]);
      await cli.url;
      await until(() => api.requests() >= 2, 'both polls to be in flight');

      cli.child.kill(signal);
      expect(await cli.exit).toBe(0);
      // The 60 s request timeout never fired, and the 5 s fallback exit (which also exits 0, and
      // says so) was not needed: the exporter's own clock, not the test's, which a busy machine
      // stretches.
      expect(cli.stdout()).toContain(`"signal":"${signal}"`);
      expect(cli.stdout()).not.toContain('shutdown took longer');
    },
  );

  it('reloads the config file on SIGHUP, and keeps running on an invalid one', async () => {
    const { simulator } = await startFrozenSimulator();
    const yaml = (branches: string) =>
      configYaml({
        apiUrl: simulator.baseUrl,
        targets: `  - repo: github.com/acme/web\n    branches: ${branches}`,
      });
    const file = await writeConfig(yaml('[main]'));
    const cli = startCli(['--config', file]);
    closers.push(async () => {
      cli.child.kill('SIGKILL');
      await cli.exit;
    });
    const url = await cli.url;
    const scrape = async () => parseExposition(await (await fetch(`${url}/metrics`)).text());
    const branches = async () =>
      select(await scrape(), 'trunk_exporter_target_up').map((sample) => sample.labels.branch);

    await writeFile(file, yaml('[main, release]'));
    cli.child.kill('SIGHUP');
    await until(() => cli.stdout().includes('configuration reloaded'), 'the reload log line');
    expect(cli.stdout()).toContain('1 target added (github.com/acme/web@release), 0 removed');
    await until(async () => (await branches()).length === 2, 'both branches on the page');
    expect((await branches()).sort()).toEqual(['main', 'release']);

    await writeFile(file, yaml('[]'));
    cli.child.kill('SIGHUP');
    await until(() => cli.stdout().includes('reload rejected'), 'the rejection log line');
    expect(cli.stdout()).toContain(`${file}: targets[0].branches: expected a non-empty list`);
    const samples = await scrape();
    expect(sum(samples, 'trunk_exporter_config_last_reload_successful')).toBe(0);
    expect((await branches()).sort()).toEqual(['main', 'release']);
  });
});
