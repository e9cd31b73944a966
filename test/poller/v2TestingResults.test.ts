// Testing attempts through API v2 over real sockets: poll jobs as the exporter builds them with an
// API key, against a node:http fake of the queue's reads whose testing results the test records
// (the truth), on a clock the test moves; and single reads of fixture pages.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { configuredTargets } from '../../src/config/targets.js';
import type { RepositoryTarget } from '../../src/config/types.js';
import { buildPollJobs } from '../../src/poller/targetJobs.js';
import { PERIODIC_EXIT_READ_POLLS } from '../../src/poller/v2ExitLookup.js';
import { V2TestDirectory } from '../../src/poller/v2TestDirectory.js';
import { V2QueueDirectory } from '../../src/poller/v2QueueDirectory.js';
import {
  TESTING_READ_HORIZON_SECONDS,
  TESTING_RESULTS_MAX_RANGE_SECONDS,
  countTestingResults,
  readTestingResults,
  startTestingAttempts,
} from '../../src/poller/v2TestingResults.js';
import { Secret } from '../../src/secrets/secret.js';
import { SnapshotStore } from '../../src/snapshot/store.js';
import type { TestingAttempts } from '../../src/snapshot/testingAttemptTypes.js';
import type { MergeQueueSnapshot, Target } from '../../src/snapshot/types.js';
import { TrunkV2Client } from '../../src/trunk/v2Client.js';
import type { V2TestingResult } from '../../src/trunk/v2Schemas.js';
import { poll as scriptedPoll } from '../flow/scriptedPolls.js';
import { exporterConfig } from '../support/exporterConfig.js';
import {
  startTestingResultsFake,
  truthSince,
  type FakeTestingResult,
  type Tally,
} from '../support/testingResultsFake.js';
import {
  capturingLogger,
  cleanUp,
  makeClient,
  sendJson,
  startApiServer,
} from '../trunk/harness.js';

afterEach(cleanUp);

const API_KEY = 'trunk_v2_testing-poll-key';
const INTERVAL = 30;
/** The first poll's time: 2026-11-24T09:00:00Z. */
const START = Date.parse('2026-11-24T09:00:00Z') / 1000;
const QUEUE_TARGET: Target = { kind: 'merge_queue', repo: 'github.com/acme/web', branch: 'main' };
const REPOSITORY: RepositoryTarget = {
  repo: { host: 'github.com', owner: 'acme', name: 'web' },
  name: 'github.com/acme/web',
  branches: ['main'],
  flakyTests: false,
};

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/** The tally of a queue's testing attempts, series without attempts left out. */
function tallyOf(attempts: TestingAttempts | undefined): Tally {
  const series: Tally['series'] = {};
  for (const { outcome, bisection, histogram } of attempts?.counts.durations.values() ?? []) {
    if (histogram.count > 0) {
      series[`${outcome}/${String(bisection)}`] = { count: histogram.count, sum: histogram.sum };
    }
  }
  return { series, bisectionsStarted: attempts?.counts.bisectionsStarted ?? 0 };
}

/** One queue polled through API v2 against the fake; the clock is the test's. */
async function testingWatcher() {
  const clock = { now: START };
  const now = () => clock.now;
  const fake = await startTestingResultsFake(now);
  fake.live = [1, 2, 3];
  const config = exporterConfig(fake.origin, [REPOSITORY], {
    trunk: { apiKey: new Secret(API_KEY) },
  });
  const { client } = makeClient(fake.origin, {
    apiKey: new Secret(API_KEY),
    retry: { maxAttempts: 1 },
  });
  const v2 = new TrunkV2Client(client);
  const store = new SnapshotStore(config.polling.staleAfterSeconds, now);
  store.setTargets(configuredTargets(config));
  const { logger, lines } = capturingLogger();
  const [job] = buildPollJobs({
    config,
    reader: client,
    store,
    logger,
    now,
    v2: {
      reader: v2,
      directory: new V2QueueDirectory(v2, INTERVAL, now),
      tests: new V2TestDirectory({ lister: v2, maxAgeSeconds: 600, lookupsAtATime: 4 }, now),
    },
  });
  if (job === undefined) throw new Error('no job');
  let nextPullRequest = 100;
  /** Polls at the clock's time, then moves the clock one interval on. */
  const poll = async () => {
    await job.run(new AbortController().signal);
    clock.now += INTERVAL;
  };
  /** The oldest PR leaves the queue (merged) and a new one enters. */
  const prLeaves = () => {
    const [oldest] = fake.live;
    if (oldest !== undefined) fake.leave(oldest, clock.now - 1);
    fake.live.push(nextPullRequest++);
  };
  const record = (result: FakeTestingResult) => {
    fake.results.push(result);
  };
  const tally = () => tallyOf(store.testingAttempts(QUEUE_TARGET));
  const exitReads = () => fake.calls['v2/merge-queues/{id}/pull-requests'] ?? 0;
  const testingCalls = () => fake.calls['v2/merge-queues/{id}/testing-results'] ?? 0;
  return { clock, fake, store, lines, poll, prLeaves, record, tally, exitReads, testingCalls };
}

/** A result of `pr` that ended at `endedAt`, with the rest from `index` so that rows differ. */
function resultAt(pr: number, endedAt: number, index: number): FakeTestingResult {
  const outcomes = ['passed', 'failed', 'interrupted', 'cancelled', undefined, 'timedOut'];
  const outcome = outcomes[index % outcomes.length];
  return {
    pullRequestNumber: pr,
    endedAt: iso(endedAt),
    testingDurationMs: ((index % 17) + 1) * 60_000,
    ...(outcome === undefined ? {} : { outcome }),
    isBisection: index % 7 === 0,
    startedBisection: index % 11 === 0,
    verificationRunId: `run-${String(index)}`,
  };
}

describe('testing attempts through API v2 poll jobs', () => {
  it('counts each result that ended at or after the first poll once, however reads and pages overlap, and no earlier one', async () => {
    const watcher = await testingWatcher();
    const { fake, clock } = watcher;
    fake.pageSize = 3;
    // History before the exporter started: never counted.
    for (let index = 0; index < 5; index++) {
      watcher.record(resultAt(900 + index, START - 3600 + index * 600, index));
    }
    watcher.record(resultAt(950, START - 1, 1));
    await watcher.poll();
    // Ended at the first poll's instant: counted.
    watcher.record(resultAt(951, START, 2));
    for (let index = 1; index <= 120; index++) {
      if (index % 3 === 0) watcher.record(resultAt(index, clock.now - 5, index));
      // Recorded late, ending before rows a read already saw (within the overlap).
      if (index % 5 === 0) watcher.record(resultAt(index + 1000, clock.now - 100, index + 1));
      // A batched run: one row per PR it tested, all ending together.
      if (index % 9 === 0) {
        for (const pr of [2000 + index, 3000 + index, 4000 + index]) {
          watcher.record({
            ...resultAt(pr, clock.now - 7, index),
            verificationRunId: `batch-${index}`,
          });
        }
      }
      if (index % 4 === 0) watcher.prLeaves();
      await watcher.poll();
    }
    watcher.prLeaves();
    await watcher.poll();

    expect(watcher.tally()).toEqual(truthSince(fake.results, START));
    expect(Object.keys(watcher.tally().series).length).toBeGreaterThanOrEqual(8);
    // The reads overlapped and paged: rows were listed again and on further pages.
    expect(fake.testingReads.some((read) => read.cursor !== null)).toBe(true);
    expect(fake.testingReads.every((read) => read.status === 200)).toBe(true);
  });

  it('reads on the polls that read exits (PRs left, or PERIODIC_EXIT_READ_POLLS polls on), one call each', async () => {
    const watcher = await testingWatcher();
    await watcher.poll();
    const leavesAt = new Set([5, 6, 40]);
    const testingPolls: number[] = [];
    const exitPolls: number[] = [];
    for (let index = 1; index <= 75; index++) {
      if (leavesAt.has(index)) watcher.prLeaves();
      watcher.record(resultAt(index, watcher.clock.now - 5, index));
      const [testing, exits] = [watcher.testingCalls(), watcher.exitReads()];
      await watcher.poll();
      if (watcher.testingCalls() > testing) testingPolls.push(index);
      // Every poll lists the live PRs once; a second call is the exit read.
      if (watcher.exitReads() > exits + 1) exitPolls.push(index);
      expect(watcher.testingCalls() - testing).toBeLessThanOrEqual(1);
    }
    expect(testingPolls).toEqual([
      5,
      6,
      6 + PERIODIC_EXIT_READ_POLLS,
      40,
      40 + PERIODIC_EXIT_READ_POLLS,
    ]);
    expect(testingPolls).toEqual(exitPolls);
  });

  it('keeps the queue up when a read fails, logs it, and the next read counts what it missed', async () => {
    const watcher = await testingWatcher();
    const { fake, store, clock } = watcher;
    await watcher.poll();
    watcher.record(resultAt(7, clock.now - 5, 0));
    fake.failingReads = 1;
    watcher.prLeaves();
    const failedAt = clock.now;
    await watcher.poll();

    const status = store.statuses().find((entry) => entry.target.branch === 'main');
    expect(status?.up).toBe(true);
    expect(status?.snapshot?.takenAt).toBe(failedAt);
    expect(watcher.lines.join('')).toContain(
      'testing results read failed, tried again at the next read',
    );
    expect(watcher.tally()).toEqual({ series: {}, bisectionsStarted: 0 });
    const failed = fake.testingReads.at(-1);
    expect(failed?.status).toBe(500);

    // Not at once: at the next poll that reads exits, from where the last good read got to.
    await watcher.poll();
    expect(fake.testingReads).toHaveLength(1);
    watcher.prLeaves();
    await watcher.poll();
    expect(fake.testingReads.at(-1)).toMatchObject({ since: failed?.since, status: 200 });
    expect(watcher.tally()).toEqual(truthSince(fake.results, START));
  });

  it('reads at most 45 days back after weeks without a read, and logs what it could not count', async () => {
    const watcher = await testingWatcher();
    const { fake, clock } = watcher;
    await watcher.poll();
    watcher.record(resultAt(1, START + 2 * 86_400, 1));
    watcher.record(resultAt(2, START + 10 * 86_400, 2));
    clock.now = START + 50 * 86_400;
    watcher.prLeaves();
    await watcher.poll();

    const since =
      clock.now - INTERVAL - TESTING_RESULTS_MAX_RANGE_SECONDS + TESTING_READ_HORIZON_SECONDS;
    expect(fake.testingReads).toEqual([
      { since: iso(since), cursor: null, limit: '100', status: 200 },
    ]);
    expect(watcher.lines.join('')).toContain(
      `testing results from ${iso(START)} to ${iso(since)} are not counted`,
    );
    expect(watcher.tally()).toEqual(truthSince([fake.results[1] as FakeTestingResult], START));
  });
});

/** A snapshot of the queue at `takenAt` listing `prs` (testing), batching as told. */
function queueAt(takenAt: number, prs: readonly number[], batch = true): MergeQueueSnapshot {
  const snapshot = scriptedPoll(
    takenAt,
    'running',
    prs.map((number) => [number, 'testing', undefined] as const),
  );
  return { ...snapshot, settings: { ...snapshot.settings, batch } };
}

function fixture(name: string): unknown {
  return JSON.parse(readFileSync(new URL(`../trunk/fixtures/v2/${name}`, import.meta.url), 'utf8'));
}

/** A v2 client of a server answering the n-th testing-results request with `answers(n, cursor)`. */
async function readerAnswering(answer: (index: number, cursor: string | null) => unknown) {
  const since: string[] = [];
  const server = await startApiServer((_req, res, index, recorded) => {
    const query = new URL(recorded.url, 'http://fake').searchParams;
    since.push(query.get('since') ?? '');
    sendJson(res, 200, answer(index, query.get('cursor')));
  }, '');
  const { client } = makeClient(server.origin, {
    token: undefined,
    apiKey: new Secret(API_KEY),
  });
  return { reader: new TrunkV2Client(client), since };
}

/** One read made at `readAt`, PR 1 having left since the previous poll. */
function readAfterExit(
  reader: TrunkV2Client,
  previous: TestingAttempts,
  readAt: number,
): Promise<TestingAttempts> {
  return readTestingResults({
    reader,
    queue: { id: 'mq_7f3a', repo: QUEUE_TARGET.repo, branch: QUEUE_TARGET.branch },
    previous,
    previousSnapshot: queueAt(readAt - INTERVAL, [1, 2]),
    current: queueAt(readAt, [2]),
    options: {},
    logger: capturingLogger().logger,
  });
}

describe('testing results read from fixture pages', () => {
  it('testing-results-row-listed-twice-across-pages.json: a result on two pages counts once', async () => {
    const pages = fixture('testing-results-row-listed-twice-across-pages.json') as unknown[];
    const { reader } = await readerAnswering((_index, cursor) => pages[cursor === null ? 0 : 1]);
    const after = await readAfterExit(reader, startTestingAttempts(START, true), START + 3600);

    expect(tallyOf(after)).toEqual({
      series: {
        'passed/false': { count: 1, sum: 900 },
        'failed/false': { count: 1, sum: 900 },
        'cancelled/false': { count: 1, sum: 300 },
      },
      bisectionsStarted: 1,
    });
  });

  it('testing-results-boundary-reread-with-overlap.json: the next read starts 120 s before the newest result seen; rows seen before, on its since too, count nothing, a late one counts', async () => {
    const { reads } = fixture('testing-results-boundary-reread-with-overlap.json') as {
      reads: unknown[][];
    };
    const { reader, since } = await readerAnswering((index) => ({
      data: reads[index],
      nextCursor: null,
      hasMore: false,
    }));
    const first = await readAfterExit(reader, startTestingAttempts(START, true), START + 1200);
    const second = await readAfterExit(reader, first, START + 1800);

    expect(since).toEqual(['2026-11-24T09:00:00.000Z', '2026-11-24T09:14:40.000Z']);
    expect(tallyOf(second)).toEqual({
      series: {
        'passed/false': { count: 3, sum: 60 + 300 + 400 },
        'failed/false': { count: 1, sum: 200 },
        'interrupted/false': { count: 1, sum: 100 },
        'cancelled/false': { count: 1, sum: 500 },
      },
      bisectionsStarted: 0,
    });
  });

  it.each([
    [
      'testing-results-page-with-unknown-outcome.json',
      { 'passed/false': 1, 'other/false': 1, 'failed/false': 1 },
    ],
    [
      'testing-results-page-without-outcome-or-conclusion.json',
      { 'unknown/false': 2, 'interrupted/false': 1 },
    ],
    ['testing-results-page-with-unusable-rows.json', { 'passed/false': 1, 'failed/true': 1 }],
  ])('%s: counted under a closed set of outcomes', async (name, expected) => {
    const page = fixture(name);
    const { reader } = await readerAnswering(() => page);
    const after = await readAfterExit(reader, startTestingAttempts(START, true), START + 3600);

    const counts = Object.fromEntries(
      Object.entries(tallyOf(after).series).map(([key, { count }]) => [key, count]),
    );
    expect(counts).toEqual(expected);
  });
});

describe('testing attempts as counted', () => {
  const row = (overrides: Partial<V2TestingResult>): V2TestingResult => ({
    pullRequestNumber: 1,
    endedAt: iso(START + 60),
    testingDurationMs: 60_000,
    isBisection: false,
    startedBisection: false,
    ...overrides,
  });
  const seriesOf = (attempts: TestingAttempts) =>
    [...attempts.counts.durations.values()].map(
      ({ outcome, bisection, histogram }) => `${outcome}/${String(bisection)}:${histogram.count}`,
    );

  it('starts every documented outcome at 0, bisection steps too where the queue batches', () => {
    expect(seriesOf(startTestingAttempts(START, true))).toEqual([
      'passed/false:0',
      'failed/false:0',
      'interrupted/false:0',
      'cancelled/false:0',
      'passed/true:0',
      'failed/true:0',
      'interrupted/true:0',
      'cancelled/true:0',
    ]);
    // A queue that does not batch is never bisected: a bisection step appears when first counted.
    const unbatched = startTestingAttempts(START, false);
    expect(seriesOf(unbatched)).toEqual([
      'passed/false:0',
      'failed/false:0',
      'interrupted/false:0',
      'cancelled/false:0',
    ]);
    const counted = countTestingResults(
      unbatched,
      [row({ outcome: 'failed', isBisection: true })],
      START + 120,
    );
    expect(seriesOf(counted).at(-1)).toBe('failed/true:1');
  });

  it('tells apart attempts of one PR that end together in different runs, or as a bisection step', () => {
    const counted = countTestingResults(
      startTestingAttempts(START, true),
      [
        row({ outcome: 'passed', verificationRunId: 'run-1' }),
        row({ outcome: 'passed', verificationRunId: 'run-2' }),
        row({ outcome: 'failed' }),
        row({ outcome: 'failed', isBisection: true }),
        // The first attempt again, its endedAt spelled without milliseconds.
        row({
          outcome: 'passed',
          endedAt: iso(START + 60).replace('.000Z', 'Z'),
          verificationRunId: 'run-1',
        }),
      ],
      START + 120,
    );
    expect(tallyOf(counted).series).toEqual({
      'passed/false': { count: 2, sum: 120 },
      'failed/false': { count: 1, sum: 60 },
      'failed/true': { count: 1, sum: 60 },
    });
  });
});
