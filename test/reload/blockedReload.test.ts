// A reload that cannot finish loading (a FIFO as tokenFile, a file system that stops answering)
// must not hold the reloads queued behind it.
import { execFileSync } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import type { ExporterConfig } from '../../src/config/types.js';
import { silentLogger } from '../../src/log/logger.js';
import { ConfigReloader } from '../../src/reload/configReloader.js';
import { configYaml, startFrozenSimulator, startTestExporter } from '../support/exporterHarness.js';

const WEB = '  - repo: github.com/acme/web\n    branches: [main]';
const SLOW_POLLING = '  mergeQueueIntervalSeconds: 600\n  flakyTestsIntervalSeconds: 600';

describe('a reload that cannot load', () => {
  it('is refused at once when tokenFile names a FIFO, and the next reload goes through', async () => {
    const { simulator } = await startFrozenSimulator();
    const directory = await mkdtemp(join(tmpdir(), 'trunk-exporter-reload-'));
    const tokenFile = join(directory, 'token');
    const fifo = join(directory, 'fifo');
    execFileSync('mkfifo', [fifo]);
    await writeFile(tokenFile, 'sim-token-4b1d\n');
    const file = join(directory, 'config.yaml');
    const yaml = (path: string) =>
      configYaml({
        apiUrl: simulator.baseUrl,
        tokenFile: path,
        targets: WEB,
        polling: SLOW_POLLING,
      });
    await writeFile(file, yaml(tokenFile));
    const run = await startTestExporter(yaml(tokenFile), 'info', file);

    await writeFile(file, yaml(fifo));
    const blocked = await run.exporter.reload('SIGHUP');
    expect(blocked).toEqual({
      applied: false,
      message: `configuration reload rejected; the running configuration stays:\n${file}: trunk.tokenFile: cannot read ${fifo}: not a regular file (a FIFO) (line 3)`,
    });
    await writeFile(file, yaml(tokenFile));
    expect((await run.exporter.reload('SIGHUP')).applied).toBe(true);
  });

  it('is rejected after the load timeout, and the reloads queued behind it run', async () => {
    const config: ExporterConfig = await parseConfig(`trunk:\n  token: t\ntargets:\n${WEB}\n`, {
      source: 'inline',
      env: {},
    });
    const failures: number[] = [];
    const successes: number[] = [];
    let loads = 0;
    const reloader = new ConfigReloader({
      // The first load never ends, as a read on a dead mount would not.
      load: () => (loads++ === 0 ? new Promise<ExporterConfig>(() => {}) : Promise.resolve(config)),
      apply: () => ({ targetsAdded: [], targetsRemoved: [], settingsChanged: [], needRestart: [] }),
      observer: {
        reloadFailed: () => failures.push(Date.now()),
        reloadSucceeded: (at) => successes.push(at),
      },
      logger: silentLogger(),
      loadTimeoutMs: 200,
    });
    // Both answer: a reloader that waited for the hung load would answer neither.
    const [hung, next] = await Promise.all([reloader.reload('SIGHUP'), reloader.reload('HTTP')]);
    expect(hung).toEqual({
      applied: false,
      message:
        'configuration reload rejected; the running configuration stays:\nloading the configuration took longer than 0.2 s',
    });
    expect(next.applied).toBe(true);
    expect(failures).toHaveLength(1);
    expect(successes).toHaveLength(1);
  });

  it('runs the 1,000 reloads asked for while one loads as one, and answers each', async () => {
    // Each POST /-/reload queued a reload of its own, kept after its client went away: a flood
    // read and parsed the file once per request, one after the other, without bound.
    const config: ExporterConfig = await parseConfig(`trunk:\n  token: t\ntargets:\n${WEB}\n`, {
      source: 'inline',
      env: {},
    });
    let release = (): void => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let loads = 0;
    const reloader = new ConfigReloader({
      load: async () => {
        loads++;
        await held;
        return config;
      },
      apply: () => ({ targetsAdded: [], targetsRemoved: [], settingsChanged: [], needRestart: [] }),
      observer: { reloadFailed: () => {}, reloadSucceeded: () => {} },
      logger: silentLogger(),
    });
    const first = reloader.reload('SIGHUP');
    const flood = Array.from({ length: 1000 }, () => reloader.reload('HTTP'));
    release();
    const answers = await Promise.all([first, ...flood]);
    expect(answers.every((answer) => answer.applied)).toBe(true);
    // The one running, and one after it for every request made meanwhile.
    expect(loads).toBe(2);
    // A request after both have ended reloads again.
    expect((await reloader.reload('HTTP')).applied).toBe(true);
    expect(loads).toBe(3);
  });

  it('rejects a file of 40,000 unknown keys with the first 20 problems and a count of the rest', async () => {
    // Generated here rather than committed: about 0.5 MB, the audit's SIGHUP case.
    const keys = Array.from({ length: 40_000 }, (_unused, index) => `  k${index}: 1`);
    const text = `trunk:\n  token: t\ntargets:\n${WEB}\nserver:\n${keys.join('\n')}\n`;
    const reloader = new ConfigReloader({
      load: () => parseConfig(text, { source: 'keys.yaml', env: {} }),
      apply: () => ({ targetsAdded: [], targetsRemoved: [], settingsChanged: [], needRestart: [] }),
      observer: { reloadFailed: () => {}, reloadSucceeded: () => {} },
      logger: silentLogger(),
    });
    const result = await reloader.reload('SIGHUP');
    const lines = result.message.split('\n');
    expect(result.applied).toBe(false);
    expect(lines).toHaveLength(22);
    expect(lines[1]).toBe('keys.yaml: server.k0: unknown key (line 7)');
    expect(lines[20]).toBe('keys.yaml: server.k19: unknown key (line 26)');
    expect(lines[21]).toBe('keys.yaml: and 39980 more problems (the first 20 are listed)');
  });
});

describe('reloads asked for one after another', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('leave the thread four times as long as each took between them', async () => {
    vi.useFakeTimers();
    const config: ExporterConfig = await parseConfig(`trunk:\n  token: t\ntargets:\n${WEB}\n`, {
      source: 'inline',
      env: {},
    });
    // Each load takes 2 s of the one thread, as a file of 10,000 targets does; a client that asks
    // again as soon as it is answered (POST /-/reload needs no password without basic auth) kept
    // the exporter reloading back to back, and scrapes waited seconds for each reload.
    let clock = 1_000;
    const loadsAt: number[] = [];
    const reloader = new ConfigReloader({
      load: () => {
        loadsAt.push(clock);
        clock += 2;
        return Promise.resolve(config);
      },
      apply: () => ({ targetsAdded: [], targetsRemoved: [], settingsChanged: [], needRestart: [] }),
      observer: { reloadFailed: () => {}, reloadSucceeded: () => {} },
      logger: silentLogger(),
      now: () => clock,
    });
    // The first reload runs at once.
    expect((await reloader.reload('HTTP')).applied).toBe(true);
    const second = reloader.reload('HTTP');
    await vi.advanceTimersByTimeAsync(7_999);
    expect(loadsAt).toEqual([1_000]);
    await vi.advanceTimersByTimeAsync(1);
    expect((await second).applied).toBe(true);
    expect(loadsAt).toEqual([1_000, 1_002]);
  });
});
