// The "why" families (issue 39) across a reload that lands while a queue-entry history read or a
// verification-run read is in flight: the fake holds its answer until after the reload. Expected
// numbers come from the scenario: PR #1 fails once on a timeout (Trunk's `failed` with reason
// `TEST_RUN_TIMEOUT`), so it is one failure, one testing→failed transition, one exit.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { failed, live, record, testingWebQueue } from '../support/entryHistoryExporter.js';
import { select, sum, type Sample } from '../support/exposition.js';
import { configYaml, startTestExporter } from '../support/exporterHarness.js';
import type { EntryRow, FakeV2 } from '../support/fakeTrunkV2.js';
import { WEB_QUEUE, moveEntry } from '../support/queueEntryRows.js';
import {
  DURATION,
  IN_PROGRESS,
  RUNS,
  conclude,
  series,
} from '../support/verificationRunExporter.js';
import { run } from '../support/verificationRunRows.js';
import { WEB_MAIN, pollsFromNow, transitionsOf } from '../support/webQueueSamples.js';
import { cleanUp } from '../trunk/harness.js';

afterEach(cleanUp);

const now = () => Date.now() / 1000;
const HISTORY = /^\/v2\/queue-entry-history$/;

interface Settings {
  readonly key: string;
  readonly intervalSeconds: number;
  readonly flakyIntervalSeconds: number;
  readonly readHistories: boolean;
  readonly readRuns: boolean;
}

const BASE: Settings = {
  key: 'trunk_v2_in-flight-key-one',
  intervalSeconds: 0.1,
  flakyIntervalSeconds: 600,
  readHistories: true,
  readRuns: true,
};

async function reloadableExporter(fake: FakeV2) {
  const file = join(await mkdtemp(join(tmpdir(), 'trunk-exporter-why-')), 'config.yaml');
  const yaml = (settings: Settings) =>
    [
      configYaml({
        apiUrl: fake.origin,
        token: null,
        apiKey: settings.key,
        targets: '  - repo: github.com/acme/web\n    branches: [main]',
        polling: [
          `  mergeQueueIntervalSeconds: ${String(settings.intervalSeconds)}`,
          `  flakyTestsIntervalSeconds: ${String(settings.flakyIntervalSeconds)}`,
          '  staleAfterSeconds: 600',
        ].join('\n'),
      }),
      'reads:',
      `  queueEntryHistory: ${String(settings.readHistories)}`,
      `  verificationRuns: ${String(settings.readRuns)}`,
    ].join('\n');
  await writeFile(file, yaml(BASE));
  const exporter = await startTestExporter(yaml(BASE), 'info', file);
  const reload = async (settings: Settings) => {
    await writeFile(file, yaml(settings));
    expect((await exporter.exporter.reload('SIGHUP')).applied).toBe(true);
  };
  return { exporter, reload };
}

const exitedFailed = (samples: readonly Sample[]) =>
  select(samples, 'trunk_merge_queue_pull_requests_exited_total', {
    ...WEB_MAIN,
    outcome: 'failed',
  })[0]?.value;

/** Until a request waits in the fake, held. */
async function heldRead(fake: FakeV2): Promise<void> {
  while (fake.held() === 0) await new Promise((resolve) => setTimeout(resolve, 10));
}

/** Answers every request held, and holds none from now on. */
function releaseHeld(fake: FakeV2): void {
  fake.hold(undefined);
  fake.release();
}

/** #1 and #2 testing and polled; then #1 fails on a timeout, the history read that tells it held. */
async function failureHeldInFlight() {
  const { fake, rows } = await testingWebQueue([1, 2], now() - 600);
  const { exporter, reload } = await reloadableExporter(fake);
  await exporter.waitFor((samples) => live(samples) === 2, 'two entries polled');
  await pollsFromNow(exporter, 1);
  fake.hold(HISTORY);
  const at = now();
  record(fake, 1, 'failed', at, 'TEST_RUN_TIMEOUT');
  moveEntry(rows[0] as EntryRow, 'failed', at);
  await heldRead(fake);
  return { fake, exporter, reload };
}

describe('a reload while a queue-entry history read is in flight', () => {
  it.each<[string, Partial<Settings>]>([
    ['an unrelated setting (flakyTestsIntervalSeconds)', { flakyIntervalSeconds: 300 }],
    ['the merge-queue interval', { intervalSeconds: 0.15 }],
    ['the API key', { key: 'trunk_v2_in-flight-key-two' }],
  ])('changing %s counts the failure its answer holds once', async (_what, change) => {
    const { fake, exporter, reload } = await failureHeldInFlight();
    await reload({ ...BASE, ...change });
    await pollsFromNow(exporter, 2);
    releaseHeld(fake);
    await exporter.waitFor((samples) => failed(samples).TEST_RUN_TIMEOUT === 1, 'the failure');
    await pollsFromNow(exporter, 4);
    const samples = await exporter.samples();
    expect(failed(samples)).toEqual({ TEST_RUN_TIMEOUT: 1 });
    expect(transitionsOf(samples)).toEqual({ 'testing->failed': 1 });
    expect(exitedFailed(samples)).toBe(1);
  });

  it('turning the read off and on again never counts the failure twice nor goes down', async () => {
    const { fake, exporter, reload } = await failureHeldInFlight();
    await reload({ ...BASE, readHistories: false });
    await pollsFromNow(exporter, 2);
    releaseHeld(fake);
    await pollsFromNow(exporter, 2);
    const off = await exporter.samples();
    await reload(BASE);
    await pollsFromNow(exporter, 4);
    const on = await exporter.samples();
    // Off, nothing reads the history; the answer that comes after is not the polls' to count.
    expect(failed(off).TEST_RUN_TIMEOUT ?? 0).toBeLessThanOrEqual(1);
    expect(failed(on).TEST_RUN_TIMEOUT ?? 0).toBeLessThanOrEqual(1);
    expect(failed(on).TEST_RUN_TIMEOUT ?? 0).toBeGreaterThanOrEqual(
      failed(off).TEST_RUN_TIMEOUT ?? 0,
    );
    expect(exitedFailed(on)).toBe(1);
    expect(transitionsOf(on)['testing->failed'] ?? 0).toBeLessThanOrEqual(1);
  });
});

describe('a reload while a verification-run read is in flight', () => {
  it.each<[string, Partial<Settings>]>([
    ['an unrelated setting (flakyTestsIntervalSeconds)', { flakyIntervalSeconds: 300 }],
    ['the merge-queue interval', { intervalSeconds: 0.15 }],
    ['the API key', { key: 'trunk_v2_in-flight-key-two' }],
    ['reads.queueEntryHistory', { readHistories: false }],
  ])('changing %s counts the run its answer concludes once', async (_what, change) => {
    const start = Math.floor(now());
    const { fake, rows } = await testingWebQueue([7, 8], start - 900);
    const shape = { id: 'run-a', createdAt: start - 900, tested: [7] };
    fake
      .verificationRuns(WEB_QUEUE)
      .push(run({ ...shape, status: 'inProgress', updatedAt: start - 900 }));
    const { exporter, reload } = await reloadableExporter(fake);
    await exporter.waitFor(
      (samples) => series(samples, IN_PROGRESS, 'bisection').false === 1,
      'the run in progress',
    );
    await pollsFromNow(exporter, 1);
    fake.hold(/\/verification-runs$/);
    conclude(fake, { ...shape, status: 'failed', updatedAt: start + 1 });
    record(fake, 7, 'failed', start + 1, 'TEST_RUN_REQUIRED_STATUS_FAILED');
    moveEntry(rows[0] as EntryRow, 'failed', start + 1);
    await heldRead(fake);
    await reload({ ...BASE, ...change });
    await new Promise((resolve) => setTimeout(resolve, 400));
    releaseHeld(fake);
    await exporter.waitFor(
      (samples) => series(samples, RUNS, 'status,bisection')['failed/false'] === 1,
      'the run counted',
    );
    await pollsFromNow(exporter, 4);
    const samples = await exporter.samples();
    expect(series(samples, RUNS, 'status,bisection')).toEqual({
      'succeeded/false': 0,
      'failed/false': 1,
      'cancelled/false': 0,
    });
    expect(series(samples, IN_PROGRESS, 'bisection')).toEqual({ false: 0, true: 0 });
    expect(sum(samples, DURATION + '_count', WEB_MAIN)).toBe(1);
    expect(exitedFailed(samples)).toBe(1);
  });
});
