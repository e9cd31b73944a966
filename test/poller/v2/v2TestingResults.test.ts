// Testing attempts through API v2 over real sockets: poll jobs as the exporter builds them with an
// API key, against a node:http fake of the queue's reads whose testing results the test records
// (the truth), on a clock the test moves; and single reads of fixture pages.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { configuredTargets } from '../../../src/config/targets.js';
import type { RepositoryTarget } from '../../../src/config/types.js';
import { buildPollJobs } from '../../../src/poller/jobs/targetJobs.js';
import { PERIODIC_EXIT_READ_POLLS } from '../../../src/poller/v2/v2ExitLookup.js';
import { V2TestDirectory } from '../../../src/poller/v2/v2TestDirectory.js';
import { V2QueueDirectory } from '../../../src/poller/v2/v2QueueDirectory.js';
import {
  TESTING_READ_HORIZON_SECONDS,
  TESTING_RESULTS_MAX_RANGE_SECONDS,
  countTestingResults,
  startTestingAttempts,
} from '../../../src/poller/v2/v2TestingResults.js';
import { readTestingResults } from '../../../src/poller/v2/v2TestingResultsRead.js';
import { Secret } from '../../../src/secrets/secret.js';
import { NO_ENTRIES } from '../../../src/snapshot/noEntries.js';
import { SnapshotStore } from '../../../src/snapshot/store.js';
import type { TestingAttempts } from '../../../src/snapshot/testingAttemptTypes.js';
import type { MergeQueueSnapshot, Target } from '../../../src/snapshot/types.js';
import { CLOCK_SLACK_SECONDS } from '../../../src/trunk/timestamps.js';
import { TrunkV2Client } from '../../../src/trunk/v2Client.js';
import type { V2TestingResult } from '../../../src/trunk/v2Schemas.js';
import { poll as scriptedPoll } from '../../flow/scriptedPolls.js';
import { exporterConfig } from '../../support/exporterConfig.js';
import {
  startTestingResultsFake,
  type FakeTestingResult,
  type Tally,
} from '../../support/testingResultsFake.js';
import {
  capturingLogger,
  cleanUp,
  makeClient,
  sendJson,
  startApiServer,
} from '../../trunk/harness.js';

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
  /** Trunk's clock: the exporter's, unless a test puts it ahead. */
  const trunkClock = { aheadSeconds: 0 };
  const fake = await startTestingResultsFake(() => clock.now + trunkClock.aheadSeconds);
  fake.live = [1, 2, 3];
  const config = exporterConfig(fake.origin, [REPOSITORY], {
    trunk: { apiKey: new Secret(API_KEY) },
  });
  const { client, observer } = makeClient(fake.origin, {
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
  const testingCalls = () => fake.calls['v2/merge-queues/{id}/testing-results'] ?? 0;
  const anomalies = () => observer.anomalies;
  return {
    clock,
    trunkClock,
    fake,
    store,
    lines,
    poll,
    prLeaves,
    record,
    tally,
    testingCalls,
    anomalies,
  };
}

/** A result of `pr` that ended at `endedAt` after `seconds` of testing, as Trunk sends it. */
function result(
  pr: number,
  endedAt: number,
  outcome: string | undefined,
  seconds: number,
  extra: Partial<FakeTestingResult> = {},
): FakeTestingResult {
  return {
    pullRequestNumber: pr,
    endedAt: iso(endedAt),
    testingDurationMs: seconds * 1000,
    ...(outcome === undefined ? {} : { outcome }),
    isBisection: false,
    startedBisection: false,
    ...extra,
  };
}

describe('testing attempts through API v2 poll jobs', () => {
  it('counts each result that ended at or after the first poll once, however reads and pages overlap, and no earlier one', async () => {
    const watcher = await testingWatcher();
    const { fake, clock } = watcher;
    fake.pageSize = 2;
    // Testing that ended before the exporter's first poll: never counted.
    watcher.record(result(900, START - 3600, 'passed', 600));
    watcher.record(result(950, START - 1, 'failed', 120));
    await watcher.poll();
    // "Only testing that ended at or after this instant": the first poll's instant counts.
    watcher.record(result(951, START, 'passed', 300));
    watcher.record(result(1, START + 20, 'passed', 754, { verificationRunId: 'run-1' }));
    watcher.prLeaves();
    await watcher.poll(); // START + 30: reads 951 and 1
    watcher.record(result(2, START + 50, 'interrupted', 180, { verificationRunId: 'run-2' }));
    // Recorded late: it ended before the newest result the last read saw.
    watcher.record(result(3, START + 10, 'failed', 420, { verificationRunId: 'run-3' }));
    watcher.prLeaves();
    await watcher.poll(); // START + 60: lists 951 and 1 again, and 3 and 2
    // "A batched run appears once per pull request it tested": three rows of one failed run.
    for (const pr of [4, 5, 6]) {
      watcher.record(
        result(pr, START + 70, 'failed', 900, {
          startedBisection: true,
          verificationRunId: 'run-7',
        }),
      );
    }
    watcher.prLeaves();
    await watcher.poll(); // START + 90
    watcher.prLeaves();
    await watcher.poll(); // START + 120: every row again, nothing new
    expect(clock.now).toBe(START + 150);

    expect(watcher.tally()).toEqual({
      series: {
        'passed/false': { count: 2, sum: 300 + 754 },
        'interrupted/false': { count: 1, sum: 180 },
        'failed/false': { count: 4, sum: 420 + 3 * 900 },
      },
      // One run's failure split one batch.
      bisectionsStarted: 1,
    });
    // Four reads, each from the first poll's instant, each walking pages of two.
    expect(fake.testingReads.filter((read) => read.cursor === null)).toHaveLength(4);
    expect(new Set(fake.testingReads.map((read) => read.since))).toEqual(new Set([iso(START)]));
    expect(fake.testingReads.some((read) => read.cursor !== null)).toBe(true);
  });

  it('reads when a poll sees a PR leave testing, for another state or out of the queue, else PERIODIC_EXIT_READ_POLLS polls on, one call each', async () => {
    const watcher = await testingWatcher();
    const { fake, clock } = watcher;
    await watcher.poll();
    const testingPolls: number[] = [];
    // The poll that sees each change, in Trunk's queue-entry states.
    const moves = new Map<number, readonly [number, string]>([
      [3, [2, 'pending']], // a restart
      [9, [3, 'testsPassed']],
      [12, [2, 'testing']], // entering testing ends nothing
      [14, [2, 'testing']], // testing again since a restart
      [20, [3, 'pendingFailure']], // not from testing
    ]);
    const leavesAt = 5; // PR 1 merged
    for (let index = 1; index <= 50; index++) {
      const move = moves.get(index);
      if (move !== undefined) fake.move(move[0], move[1], clock.now - 5);
      if (index === leavesAt) watcher.prLeaves();
      const before = watcher.testingCalls();
      await watcher.poll();
      if (watcher.testingCalls() > before) testingPolls.push(index);
      expect(watcher.testingCalls() - before).toBeLessThanOrEqual(1);
    }
    expect(PERIODIC_EXIT_READ_POLLS).toBe(30);
    expect(testingPolls).toEqual([3, 5, 9, 14, 14 + 30]);
  });

  it('counts an attempt that ended in a restart at the poll that sees the PR leave testing', async () => {
    const watcher = await testingWatcher();
    const { fake, clock } = watcher;
    await watcher.poll();
    await watcher.poll();
    // PR 2 is restarted (testing → pending: "interrupted — testing was cut short and will be
    // retried") and stays in the queue.
    watcher.record(result(2, clock.now - 10, 'interrupted', 420, { verificationRunId: 'run-9' }));
    fake.move(2, 'pending', clock.now - 10);
    await watcher.poll();

    expect(watcher.tally()).toEqual({
      series: { 'interrupted/false': { count: 1, sum: 420 } },
      bisectionsStarted: 0,
    });
  });

  it('keeps the queue up when a read fails, logs it, and the next read counts what it missed', async () => {
    const watcher = await testingWatcher();
    const { fake, store, clock } = watcher;
    await watcher.poll();
    watcher.record(result(7, clock.now - 5, 'passed', 60));
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

    // Not at once: at the next poll that sees testing end, from where the last good read got to.
    await watcher.poll();
    expect(fake.testingReads).toHaveLength(1);
    watcher.prLeaves();
    await watcher.poll();
    expect(fake.testingReads.at(-1)).toMatchObject({ since: failed?.since, status: 200 });
    expect(watcher.tally()).toEqual({
      series: { 'passed/false': { count: 1, sum: 60 } },
      bisectionsStarted: 0,
    });
  });

  it('reads at most 45 days back after weeks without a read, and logs what it could not count', async () => {
    const watcher = await testingWatcher();
    const { fake, clock } = watcher;
    await watcher.poll();
    watcher.record(result(1, START + 2 * 86_400, 'failed', 600));
    watcher.record(result(2, START + 10 * 86_400, 'interrupted', 180));
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
    // Day 2 is beyond "at most 45 days"; day 10 is within.
    expect(watcher.tally()).toEqual({
      series: { 'interrupted/false': { count: 1, sum: 180 } },
      bisectionsStarted: 0,
    });
  });

  it('walks a window of more than 100 pages once, logs what it could not count, and the next read asks from its poll on', async () => {
    const watcher = await testingWatcher();
    const { fake, store, clock } = watcher;
    await watcher.poll();
    // Twelve hours of a busy batched queue without a read: 10,100 results, one every 4 s.
    for (let index = 0; index < 10_100; index++) {
      watcher.record(result(1000 + (index % 500), START + 1 + index * 4, 'passed', 600));
    }
    const givenUpAt = START + 12 * 3600;
    clock.now = givenUpAt;
    watcher.prLeaves();
    await watcher.poll();
    const firstCalls = watcher.testingCalls();
    watcher.record(result(7, clock.now - 5, 'failed', 120));
    watcher.prLeaves();
    await watcher.poll();

    // V2_MAX_WINDOW_PAGES pages once; then one page, from the poll that gave the window up.
    expect([firstCalls, watcher.testingCalls() - firstCalls]).toEqual([100, 1]);
    const firstPages = fake.testingReads.filter((read) => read.cursor === null);
    const from = givenUpAt - CLOCK_SLACK_SECONDS;
    expect(firstPages.map((read) => read.since)).toEqual([iso(START), iso(from)]);
    // Only the result after it counts; none of the 10,100.
    expect(watcher.tally()).toEqual({
      series: { 'failed/false': { count: 1, sum: 120 } },
      bisectionsStarted: 0,
    });
    const warning = watcher.lines.find((line) => line.includes('are not counted'));
    expect(warning).toContain('"repo":"github.com/acme/web"');
    expect(warning).toContain('"branch":"main"');
    expect(warning).toContain(`"uncountedSeconds":${String(from - START)}`);
    expect(warning).toContain('more than 100 pages');
    expect(warning).toContain(`testing results from ${iso(START)} to ${iso(from)} are not counted`);
    expect(warning).not.toContain(API_KEY);
    expect(store.statuses().find((entry) => entry.target.branch === 'main')?.up).toBe(true);
  }, 60_000);

  it('counts a result dated a day ahead once and reports it, and later reads still count what ends before it', async () => {
    const watcher = await testingWatcher();
    const { fake, trunkClock } = watcher;
    await watcher.poll();
    // A Trunk whose clock is a day ahead answers one read: it lists a row ending then.
    trunkClock.aheadSeconds = 86_400;
    watcher.record(result(1, START + 86_400, 'passed', 300, { verificationRunId: 'run-1' }));
    watcher.prLeaves();
    await watcher.poll(); // START + 30
    trunkClock.aheadSeconds = 0;
    watcher.record(result(2, START + 40, 'failed', 120, { verificationRunId: 'run-2' }));
    watcher.prLeaves();
    await watcher.poll(); // START + 60
    // The day-ahead clock answers again: the row is listed again and counts nothing.
    trunkClock.aheadSeconds = 86_400;
    watcher.prLeaves();
    await watcher.poll(); // START + 90

    expect(watcher.tally()).toEqual({
      series: {
        'passed/false': { count: 1, sum: 300 },
        'failed/false': { count: 1, sum: 120 },
      },
      bisectionsStarted: 0,
    });
    // No read starts after the exporter's clock (START + 30 .. + 90) plus 60 s.
    expect(fake.testingReads.map((read) => read.since)).toEqual([
      iso(START),
      iso(START),
      iso(START),
    ]);
    expect(watcher.anomalies()).toEqual([
      { endpoint: 'v2/merge-queues/{id}/testing-results', kind: 'future_timestamp', count: 1 },
    ]);
    expect(watcher.lines.join('')).toContain(
      "testing results ended over 60 s after the exporter's clock",
    );
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
  return JSON.parse(
    readFileSync(new URL(`../../trunk/fixtures/v2/${name}`, import.meta.url), 'utf8'),
  );
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
  const read = readTestingResults({
    reader,
    queue: { id: 'mq_7f3a', repo: QUEUE_TARGET.repo, branch: QUEUE_TARGET.branch },
    previous,
    previousSnapshot: queueAt(readAt - INTERVAL, [1, 2]),
    current: queueAt(readAt, [2]),
    options: {},
    logger: capturingLogger().logger,
  });
  return read.then(({ value }) => value);
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
    ).attempts;
    expect(seriesOf(counted).at(-1)).toBe('failed/true:1');
    // A bisection step that started no split: the read's copy of the splits is not kept.
    expect(counted.reads.splits).toBe(NO_ENTRIES);
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
    ).attempts;
    expect(tallyOf(counted).series).toEqual({
      'passed/false': { count: 2, sum: 120 },
      'failed/false': { count: 1, sum: 60 },
      'failed/true': { count: 1, sum: 60 },
    });
  });
});
