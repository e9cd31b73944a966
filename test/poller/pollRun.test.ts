// runPoll's overrun: a poll still running when its interval has passed makes its target down on the
// page at once, its first poll included (an alert on target_up == 0 must see a target that never
// reports), counted and logged. Real jobs over a real socket, rendered as /metrics renders them.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RepositoryTarget } from '../../src/config/types.js';
import { configuredTargets } from '../../src/config/targets.js';
import { MetricsPage } from '../../src/metrics/metricsPage.js';
import { createRegistry, registerExporterMetrics } from '../../src/metrics/index.js';
import { registerPollOverrunMetrics } from '../../src/metrics/pollOverrunMetrics.js';
import { buildPollJobs } from '../../src/poller/jobs/targetJobs.js';
import { SnapshotStore } from '../../src/snapshot/store.js';
import { exporterConfig } from '../support/exporterConfig.js';
import { parseExposition, select } from '../support/exposition.js';
import { renderPage } from '../metrics/page.js';
import { queueResponse } from '../trunk/fixtures.js';
import {
  capturingLogger,
  cleanUp,
  makeClient,
  sendJson,
  startApiServer,
} from '../trunk/harness.js';

afterEach(async () => {
  vi.useRealTimers();
  await cleanUp();
});

const WEB = 'github.com/acme/web';
const webRepository = (branches: readonly string[]): RepositoryTarget => ({
  repo: { host: 'github.com', owner: 'acme', name: 'web' },
  name: WEB,
  branches,
  flakyTests: false,
});
const INTERVAL_SECONDS = 1;
const START_MS = Date.UTC(2026, 0, 1, 10, 0, 0);

/** Lets sockets and promises move without moving the faked clock (setImmediate is not faked). */
async function settle(condition: () => boolean, what: string): Promise<void> {
  for (let turn = 0; turn < 2_000; turn++) {
    if (condition()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`never happened: ${what}`);
}

/**
 * Merge queues (one per branch) whose getQueue calls are held until `release()`, their jobs, and
 * their page in a fresh registry with the overrun counter, as the exporter wires them.
 */
async function startRig(branches: readonly string[] = ['main']) {
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const server = await startApiServer(async (req, res) => {
    await held;
    if (req.url?.endsWith('/getQueue') === true) sendJson(res, 200, queueResponse());
    else sendJson(res, 404, { message: 'not here' });
  });
  const config = exporterConfig(server.apiUrl, [webRepository(branches)], {
    polling: { mergeQueueIntervalSeconds: INTERVAL_SECONDS, pullRequestDetails: false },
  });
  const store = new SnapshotStore(600);
  store.setTargets(configuredTargets(config));
  const registry = createRegistry({ defaultMetrics: false });
  const { snapshotMetrics } = registerExporterMetrics({
    registry,
    store,
    version: 'test',
    mergeQueueIntervalSeconds: INTERVAL_SECONDS,
    flakyTestsIntervalSeconds: 300,
    topCodeowners: 20,
  });
  const pollObserver = registerPollOverrunMetrics(registry);
  const page = new MetricsPage({ registry, store, snapshotMetrics });
  const { client } = makeClient(server.apiUrl);
  const { logger, lines } = capturingLogger();
  const jobs = buildPollJobs({ config, reader: client, store, logger, pollObserver });
  const [job] = jobs;
  if (job === undefined) throw new Error('no job');
  const samples = async () => parseExposition(await renderPage(page));
  return { server, store, job, jobs, lines, samples, release };
}

describe('a first poll that runs past its interval', () => {
  it('shows target_up 0 (and no last success) from the moment it is late, and 1 once it succeeds', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    vi.setSystemTime(START_MS);
    const { server, store, job, lines, samples, release } = await startRig();
    const labels = { repo: WEB, branch: 'main', kind: 'merge_queue' };

    const polled = job.run(new AbortController().signal);
    await settle(() => server.requests.length === 1, 'the held getQueue');
    // Running, not late yet: no series before a first poll ends (a fresh start fires nothing).
    const running = await samples();
    expect(select(running, 'trunk_exporter_target_up', labels)).toEqual([]);
    expect(select(running, 'trunk_exporter_poll_overruns_total', { kind: 'merge_queue' })).toEqual([
      expect.objectContaining({ value: 0 }),
    ]);

    await vi.advanceTimersByTimeAsync(INTERVAL_SECONDS * 1000);
    const late = await samples();
    expect(select(late, 'trunk_exporter_target_up', labels)).toEqual([
      expect.objectContaining({ value: 0 }),
    ]);
    // No poll has succeeded: the timestamp stays absent, as the docs say, rather than 0.
    expect(select(late, 'trunk_exporter_last_success_timestamp_seconds', labels)).toEqual([]);
    expect(select(late, 'trunk_exporter_poll_overruns_total', { kind: 'merge_queue' })).toEqual([
      expect.objectContaining({ value: 1 }),
    ]);
    expect(lines.filter((line) => line.includes('is late'))).toHaveLength(1);
    // Readiness waits for a poll that ends, not for one that is late.
    expect(store.allPolledOnce()).toBe(false);

    release();
    await polled;
    const done = await samples();
    expect(select(done, 'trunk_exporter_target_up', labels)).toEqual([
      expect.objectContaining({ value: 1 }),
    ]);
    expect(select(done, 'trunk_exporter_last_success_timestamp_seconds', labels)).toEqual([
      expect.objectContaining({ value: START_MS / 1000 + INTERVAL_SECONDS }),
    ]);
    expect(store.allPolledOnce()).toBe(true);
  });
});

describe('many polls that run past their interval at once', () => {
  it('are each counted and shown down, and logged in one line', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    vi.setSystemTime(START_MS);
    const branches = Array.from({ length: 20 }, (_, index) => `b${String(index)}`);
    const { server, jobs, lines, samples, release } = await startRig(branches);
    const lateLines = () => lines.filter((line) => line.includes('is late'));

    const polls = jobs.map((job) => job.run(new AbortController().signal));
    await settle(() => server.requests.length > 0, 'a held getQueue');
    await vi.advanceTimersByTimeAsync(INTERVAL_SECONDS * 1000);
    const late = await samples();
    expect(select(late, 'trunk_exporter_poll_overruns_total', { kind: 'merge_queue' })).toEqual([
      expect.objectContaining({ value: 20 }),
    ]);
    const up = select(late, 'trunk_exporter_target_up', { repo: WEB, kind: 'merge_queue' });
    expect(up.map(({ value }) => value)).toEqual(branches.map(() => 0));
    expect(lateLines()).toHaveLength(1);

    expect(lateLines()[0]).toContain(
      'every late poll is counted in trunk_exporter_poll_overruns_total',
    );
    release();
    await Promise.all(polls);
  });
});
