// What the reads of issue 39 cost while Trunk answers them 500, how fast the histories call and
// which pull requests each call asks for:
// through the poll jobs as the exporter builds them (v2QueuePolls.ts) and the organization's shared
// reads, against a fake organization on loopback, on clocks the tests move. Trunk's definition of
// API v2 (trunk-api-v2.md): "Reads may be retried on 429, 500, 502, 503, 504 … with exponential
// backoff", so one failed read is the client's attempts (4 in these tests' client: makeClient);
// and "`GET /v2/pull-requests…` (single-PR reads, history, estimate): 5 per second per key".
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  QueueEntryHistoryReads,
  historySetAside,
} from '../../../src/poller/v2/v2QueueEntryHistoryRead.js';
import { SharedTestCollections } from '../../../src/poller/v2/v2TestCollectionsRead.js';
import { Secret } from '../../../src/secrets/secret.js';
import { TrunkV2Client } from '../../../src/trunk/v2Client.js';
import { startFakeV2, type FakeV2 } from '../../support/fakeTrunkV2.js';
import { WEB_QUEUE, entryRow, moveEntry, pullRequestIdOf } from '../../support/queueEntryRows.js';
import { INTERVAL, START, watchedQueue } from '../../support/v2QueuePolls.js';
import { run } from '../../support/verificationRunRows.js';
import { capturingLogger, cleanUp, makeClient } from '../../trunk/harness.js';

afterEach(cleanUp);

/**
 * Until `check` passes, for up to 10 s: a failing history read makes four attempts 200 ms apart
 * (Trunk's 5 a second per key), close to vi.waitFor's 1 s default even on a quiet machine.
 */
const eventually = (check: () => void) => vi.waitFor(check, { timeout: 10_000 });

const HISTORY = /^\/v2\/queue-entry-history$/;
const API_KEY = new Secret('trunk_v2_read-failure-cost-key');

/** The `pullRequestIds` of each history call the fake received. */
const historyIdsAsked = (fake: FakeV2) =>
  fake
    .requestsTo(HISTORY)
    .map((call) => new URL(call.url, 'http://fake').searchParams.get('pullRequestIds'));

describe('a read of issue 39 that fails', () => {
  it('verification runs: one read a poll while they answer 500, then one more once they answer, then none on a quiet poll', async () => {
    const pr1 = entryRow(1, 'testing', START - 300);
    const { fake, clock, poll } = await watchedQueue([pr1]);
    const runCalls = async () =>
      (await poll()).filter((read) => read === 'verification runs').length;
    // The first poll reads the runs: #1 is testing, its run in progress.
    expect(await runCalls()).toBe(1);
    fake.fail(/verification-runs$/, 500);
    // #1 passes: its run concluded, and the read that would count it fails.
    moveEntry(pr1, 'testsPassed', clock.now - 5);
    const calls: number[] = [];
    for (let index = 0; index < 5; index++) calls.push(await runCalls());
    fake.recover();
    calls.push(await runCalls(), await runCalls());
    // Five polls failing: one read each (the first for #1, the others as the last failed), four
    // attempts; the sixth reads once; the seventh sees nothing move and reads nothing.
    expect(calls).toEqual([4, 4, 4, 4, 4, 1, 0]);
  });

  it('verification runs: a read whose paging cannot be trusted costs its 50 pages once, and the next read starts from its poll', async () => {
    // A busy queue: 5,100 runs in the two hours before, while #1 has been testing. The read of the
    // first poll reaches back to #1's testing, 51 pages of 100 (V2_MAX_RUN_PAGES is 50).
    const pr1 = entryRow(1, 'testing', START - 7200);
    const { fake, clock, poll } = await watchedQueue([pr1]);
    fake.verificationRuns(WEB_QUEUE).push(
      ...Array.from({ length: 5100 }, (_, index) =>
        run({
          id: `run-${String(index)}`,
          status: 'succeeded',
          createdAt: START - 7000 + index,
          updatedAt: START - 6900 + index,
          tested: [2],
        }),
      ),
    );
    const runCalls = async () =>
      (await poll()).filter((read) => read === 'verification runs').length;
    const first = await runCalls();
    // #1 passes: a read is due, and none of the 5,100 runs is asked for again.
    moveEntry(pr1, 'testsPassed', clock.now - 5);
    expect([first, await runCalls()]).toEqual([50, 1]);
  });

  it('queue-entry histories: one read a merge-queue interval while they answer 500, however many polls ask in it', async () => {
    const pr1 = entryRow(1, 'pending', START - 300);
    const { fake, clock, pollNow, historyCalls, historyFailures } = await watchedQueue([pr1], {
      history: true,
    });
    await pollNow();
    fake.fail(HISTORY, 500);
    /**
     * The history calls of merge-queue interval `index`: #1 changes state, so its poll asks for
     * #1's history; once that read has ended, a poll 10 s later in the same interval (another
     * queue of the organization, as far as the read goes) asks again.
     */
    const interval = async (index: number, failures: number) => {
      const from = historyCalls();
      clock.now = START + index * INTERVAL;
      moveEntry(pr1, index % 2 === 1 ? 'testing' : 'pending', clock.now - 5);
      await pollNow();
      await eventually(() => {
        expect(historyFailures()).toBe(failures);
      });
      clock.now += 10;
      await pollNow();
      return historyCalls() - from;
    };
    const counted: number[] = [];
    for (let index = 1; index <= 4; index++) counted.push(await interval(index, index));
    fake.recover();
    counted.push(await interval(5, 4));
    // One call a merge-queue interval, failing or not.
    expect(counted).toEqual([1, 1, 1, 1, 1]);
    // Each failing one four attempts, the last one: 4 × 4 + 1 requests.
    await eventually(() => {
      expect(fake.requestsTo(HISTORY)).toHaveLength(17);
    });
    expect(historyFailures()).toBe(4);
  });

  it('test collections: one read a flaky-tests interval while they answer 500, however many targets ask', async () => {
    const fake = await startFakeV2({ testCollections: [] });
    fake.fail(/^\/v2\/test-collections$/, 500);
    const { client } = makeClient(fake.origin, { apiKey: API_KEY });
    const clock = { now: START };
    const collections = new SharedTestCollections(
      new TrunkV2Client(client),
      { maxAgeSeconds: 300, staleAfterSeconds: 600 },
      undefined,
      () => clock.now,
    );
    const counted: number[] = [];
    for (let interval = 0; interval < 3; interval++) {
      const from = fake.requestsTo(/test-collections/).length;
      clock.now = START + interval * 300;
      // Two flaky-tests targets ask at the interval's start, one again a minute on.
      await Promise.allSettled([collections.get({}), collections.get({})]);
      clock.now += 60;
      await collections.get({}).catch(() => undefined);
      counted.push(fake.requestsTo(/test-collections/).length - from);
    }
    expect(counted).toEqual([4, 4, 4]);
  });
});

describe("the queue-entry histories and Trunk's limit per key", () => {
  it('reads 120 pull requests in three calls of 50, 50 and 20, one at a time, each at least 200 ms after the one before', async () => {
    const fake = await startFakeV2({});
    const { client } = makeClient(fake.origin, { apiKey: API_KEY });
    const reads = new QueueEntryHistoryReads(
      new TrunkV2Client(client),
      { maxAgeSeconds: INTERVAL, staleAfterSeconds: 600 },
      () => START,
    );
    const ids = Array.from({ length: 120 }, (_, index) => pullRequestIdOf(index + 1));
    reads.ask(ids);
    reads.refresh({});
    await vi.waitFor(
      () => {
        expect(reads.take(ids.slice(-1)).size).toBe(1);
      },
      { timeout: 10_000 },
    );
    const calls = fake.requestsTo(HISTORY);
    expect(
      calls.map(
        (call) =>
          new URL(call.url, 'http://fake').searchParams.get('pullRequestIds')?.split(',').length,
      ),
    ).toEqual([50, 50, 20]);
    // 5 a second: each call 200 ms after the one before was answered, so received at least that
    // long after it.
    const gaps = calls
      .slice(1)
      .map((call, index) => call.receivedAt - (calls[index]?.receivedAt ?? 0));
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(200);
  });

  it('reads the other batches when Trunk refuses one with a 400, and never asks for an id that is not a uuid', async () => {
    // `pullRequestIds`: "A member that is not a uuid is a 400 naming it"; a pull request's `id` is
    // any string. The fake refuses every batch naming #3 as well (a 400 is not retried).
    const fake = await startFakeV2({});
    fake.fail(HISTORY, 400, pullRequestIdOf(3));
    const { client } = makeClient(fake.origin, { apiKey: API_KEY });
    const failures: Error[] = [];
    const reads = new QueueEntryHistoryReads(
      new TrunkV2Client(client),
      { maxAgeSeconds: INTERVAL, staleAfterSeconds: 600 },
      () => START,
      (error) => failures.push(error),
    );
    const ids = Array.from({ length: 120 }, (_, index) => pullRequestIdOf(index + 1));
    reads.ask(['pr-4901', ...ids]);
    reads.refresh({});
    await vi.waitFor(
      () => {
        expect(failures).toHaveLength(1);
      },
      { timeout: 10_000 },
    );
    expect(reads.take(ids.slice(50)).size).toBe(70);
    expect(reads.take(ids.slice(0, 50)).size).toBe(0);
    const asked = historyIdsAsked(fake).map((list) => list?.split(',') ?? []);
    expect(asked.map((list) => list.length)).toEqual([50, 50, 20]);
    expect(asked.flat()).not.toContain('pr-4901');
    expect(reads.shown()).toBe(true);
  });

  it("reads the others when one pull request's timeline alone is over trunk.maxResponseBytes, halving the batches that are, and sets that one aside", async () => {
    // The definition of `GET /v2/queue-entry-history`: "A page's byte size therefore follows the
    // data rather than a fixed row count: for a pull request with an exceptionally long timeline,
    // page within it using the single-pull-request endpoint instead"; `transitions` may hold up to
    // 10,000 items. #1's 2,000 (some 250 KB) are over the 64 KiB this client reads.
    const longTimeline = Array.from({ length: 2000 }, (_, index) => ({
      state: index % 2 === 0 ? 'pending' : 'testing',
      changedAt: new Date((START - 86_400 + index) * 1000).toISOString(),
      reason: index % 2 === 0 ? 'PREREQUISITE_MERGE_ITEM_FAILED' : null,
    }));
    const long = pullRequestIdOf(1);
    const fake = await startFakeV2({ histories: { [long]: longTimeline } });
    const { client } = makeClient(fake.origin, { apiKey: API_KEY, maxResponseBytes: 64 * 1024 });
    const { logger, lines } = capturingLogger();
    const failures: Error[] = [];
    let now = START;
    const reads = new QueueEntryHistoryReads(
      new TrunkV2Client(client),
      { maxAgeSeconds: INTERVAL, staleAfterSeconds: 600 },
      () => now,
      (error) => failures.push(error),
      historySetAside(logger),
    );
    const ids = Array.from({ length: 120 }, (_, index) => pullRequestIdOf(index + 1));
    const others = ids.slice(1);
    reads.ask(ids);
    reads.refresh({});
    const taken = new Set<string>();
    await vi.waitFor(
      () => {
        for (const id of reads.take(others).keys()) taken.add(id);
        expect(taken.size).toBe(119);
      },
      { timeout: 10_000 },
    );
    // The first batch halved down to #1 alone, each half that holds it asked first; then the
    // other halves and the other batches, 15 calls of the read's 20.
    expect(historyIdsAsked(fake).map((list) => list?.split(',').length)).toEqual([
      50, 25, 13, 7, 4, 2, 1, 1, 2, 3, 6, 12, 25, 50, 20,
    ]);
    expect(historyIdsAsked(fake)[6]).toBe(long);
    // Not a failed read: the histories stay shown. #1 has no answer, as a pull request whose
    // reads fail: its windows wait until they are given up.
    expect({ failures, shown: reads.shown(), long: reads.take([long]).size }).toEqual({
      failures: [],
      shown: true,
      long: 0,
    });
    const warned = lines.filter((line) => line.includes(long));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toContain('trunk.maxResponseBytes (65536 bytes)');
    expect(lines.join('')).not.toContain(API_KEY.reveal());
    // The polls keep asking for #1 (its windows wait): the next read asks only for #121.
    now += INTERVAL;
    reads.ask([long, pullRequestIdOf(121)]);
    reads.refresh({});
    await eventually(() => {
      expect(reads.take([pullRequestIdOf(121)]).size).toBe(1);
    });
    expect(historyIdsAsked(fake).slice(15)).toEqual([pullRequestIdOf(121)]);
  });

  it('asks for each pull request once while its read is in flight, however many polls list it as asked', async () => {
    const [pr1, pr2] = [entryRow(1, 'pending', START - 300), entryRow(2, 'pending', START - 300)];
    const { fake, clock, pollNow, historyAnswers } = await watchedQueue([pr1, pr2], {
      history: true,
    });
    await pollNow();
    fake.hold(HISTORY);
    /** The poll one merge-queue interval on, after `change`. */
    const nextPoll = async (change: () => void = () => undefined) => {
      clock.now += INTERVAL;
      change();
      await pollNow();
    };
    // #1 begins testing: its poll asks for #1's timeline, and the read starts (Trunk is slow).
    await nextPoll(() => {
      moveEntry(pr1, 'testing', clock.now - 5);
    });
    await eventually(() => {
      expect(fake.held()).toBe(1);
    });
    // #2 begins testing; then nothing moves: both polls still list #1 as asked, not answered.
    await nextPoll(() => {
      moveEntry(pr2, 'testing', clock.now - 5);
    });
    await nextPoll();
    fake.release(HISTORY);
    fake.hold(undefined);
    await eventually(() => {
      expect(historyAnswers()).toBe(1);
    });
    // The next polls take #1's answer, ask for #2's, and take it.
    await nextPoll();
    await eventually(() => {
      expect(historyAnswers()).toBe(2);
    });
    await nextPoll();
    await nextPoll();
    // Each asked once: #1 in the read that began when it was asked, #2 in the next read.
    expect(historyIdsAsked(fake)).toEqual([pullRequestIdOf(1), pullRequestIdOf(2)]);
  });

  it('leaves the answers an aborted poll would have taken to the next poll, and asks for them no more', async () => {
    const pr1 = entryRow(1, 'pending', START - 300);
    const { fake, clock, pollNow, historyAnswers } = await watchedQueue([pr1], { history: true });
    await pollNow();
    // #1 begins testing: its poll asks for #1's timeline, answered at once.
    clock.now += INTERVAL;
    moveEntry(pr1, 'testing', clock.now - 5);
    await pollNow();
    await eventually(() => {
      expect(historyAnswers()).toBe(1);
    });
    // #3 is enqueued testing (a run began: the runs are read); that read hangs and the poll is
    // aborted, so no ledger takes #1's answer.
    clock.now += INTERVAL;
    fake.entries(WEB_QUEUE).push(entryRow(3, 'testing', clock.now - 5));
    fake.hold(/verification-runs$/);
    const aborting = new AbortController();
    const aborted = pollNow(aborting.signal);
    await eventually(() => {
      expect(fake.held()).toBe(1);
    });
    aborting.abort();
    await aborted;
    fake.hold(undefined);
    fake.release();
    // The next polls: #1's ledger still asks for it, and takes the answer read already.
    for (let poll = 0; poll < 2; poll++) {
      clock.now += INTERVAL;
      await pollNow();
    }
    expect(historyIdsAsked(fake)).toEqual([pullRequestIdOf(1)]);
  });
});
