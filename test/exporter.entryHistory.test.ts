// Why pull requests fail, are removed and restart (issue 39 item 1), through a real exporter holding
// an API key and polling a fake organization whose queue and queue-entry histories the test writes
// by hand. From Trunk's definition of `GET /v2/queue-entry-history`: it "Returns up to 50 pull
// requests' complete queue-entry timelines in one response", each transition's `reason` telling "Why
// the entry entered this state" — for `pending`, "these are what distinguish a restart's cause"
// (`MANUAL_PUSH_TO_TARGET_BRANCH`: "Someone pushed to the target branch, invalidating the tested
// state"); for `failed`, e.g. `TEST_RUN_TIMEOUT`; for `cancelled`, e.g. `PR_CLOSED` — and "`null`
// for `testing` and `pendingFailure`, which carry no reason".
import { afterEach, describe, expect, it } from 'vitest';
import {
  byLabel,
  failed,
  failedEvent,
  live,
  record,
  recordTesting,
  webExporter,
} from './support/entryHistoryExporter.js';
import { select, sum, type Sample } from './support/exposition.js';
import type { EntryRow } from './support/fakeTrunkV2.js';
import {
  WEB_QUEUE,
  entryRow,
  moveEntry,
  pullRequestIdOf,
  resubmitEntry,
  startFakeWebQueue,
  testingResult,
} from './support/queueEntryRows.js';
import { pollsFromNow, transitionsOf } from './support/webQueueSamples.js';
import { cleanUp } from './trunk/harness.js';

afterEach(cleanUp);

const QUEUE = { repo: 'github.com/acme/web', branch: 'main' };
const now = () => Date.now() / 1000;

const cancelled = (samples: readonly Sample[]) =>
  byLabel(samples, 'trunk_merge_queue_pull_requests_cancelled_total', 'reason');
const restarts = (samples: readonly Sample[]) =>
  byLabel(samples, 'trunk_merge_queue_restarts_total', 'cause');

describe('queue-entry histories through a real exporter', () => {
  it('counts failures, cancellations and restarts by reason, and the transitions no poll saw, once each', async () => {
    const start = now() - 600;
    const [pr50, pr51, pr52, pr53] = [50, 51, 52, 53].map((n) => entryRow(n, 'testing', start)) as [
      EntryRow,
      EntryRow,
      EntryRow,
      EntryRow,
    ];
    const fake = await startFakeWebQueue([pr50, pr51, pr52, pr53]);
    for (const number of [50, 51, 53]) recordTesting(fake, number, start);
    record(fake, 52, 'notReady', start - 30, 'USER_REQUESTED');
    record(fake, 52, 'pending', start, 'MERGE_ITEM_NOW_READY');
    moveEntry(pr52, 'pending', start);
    const { exporter } = await webExporter(fake, false);
    await exporter.waitFor((samples) => live(samples) === 4, 'four entries polled');
    await pollsFromNow(exporter, 1);
    // Between two polls: #50 is sent back to pending by a push to main and tested again (the poll
    // sees it testing, since later); #51 times out and fails; #52 is cancelled as its PR closed;
    // #53 fails a required check and its author submits it again.
    const at = now();
    record(fake, 50, 'pending', at - 4, 'MANUAL_PUSH_TO_TARGET_BRANCH');
    record(fake, 50, 'testing', at - 3, null);
    moveEntry(pr50, 'testing', at - 3);
    record(fake, 51, 'failed', at - 2, 'TEST_RUN_TIMEOUT');
    moveEntry(pr51, 'failed', at - 2);
    record(fake, 52, 'cancelled', at - 2, 'PR_CLOSED');
    moveEntry(pr52, 'cancelled', at - 2);
    record(fake, 53, 'failed', at - 2, 'TEST_RUN_REQUIRED_STATUS_FAILED');
    record(fake, 53, 'notReady', at - 1, 'USER_REQUESTED');
    fake.testingResults(WEB_QUEUE).push(testingResult(53, at - 2, 'failed', 'failed'));
    resubmitEntry(pr53, at - 2, at - 1);
    const counted = await exporter.waitFor(
      (samples) =>
        sum(samples, 'trunk_merge_queue_restarts_total', QUEUE) === 1 &&
        sum(samples, 'trunk_merge_queue_pull_requests_failed_total', QUEUE) === 2 &&
        sum(samples, 'trunk_merge_queue_pull_requests_cancelled_total', QUEUE) === 1,
      'the histories read',
    );
    await pollsFromNow(exporter, 3);
    const later = await exporter.samples();
    for (const samples of [counted, later]) {
      expect(failed(samples)).toEqual({ TEST_RUN_TIMEOUT: 1, TEST_RUN_REQUIRED_STATUS_FAILED: 1 });
      expect(cancelled(samples)).toEqual({ PR_CLOSED: 1 });
      expect(restarts(samples)).toEqual({ MANUAL_PUSH_TO_TARGET_BRANCH: 1 });
    }
    // The polls saw #51 and #53 leave testing for failed and #52 pending for cancelled; the
    // histories add what happened between the polls: #50's restart and return, #53's resubmission.
    expect(transitionsOf(later)).toEqual({
      'testing->failed': 2,
      'pending->cancelled': 1,
      'testing->pending': 1,
      'pending->testing': 1,
      'failed->not_ready': 1,
    });
    // One batched read per change seen, every id of the queue's changes in one call.
    const reads = fake.requestsTo(/^\/v2\/queue-entry-history$/);
    expect(reads.length).toBeGreaterThan(0);
    const asked = reads.flatMap((request) =>
      (new URL(request.url, 'http://fake').searchParams.get('pullRequestIds') ?? '').split(','),
    );
    expect(new Set(asked)).toEqual(new Set([50, 51, 52, 53].map(pullRequestIdOf)));
  });

  it('counts what a pull request went through between the polls before the first one that lists it', async () => {
    const start = now() - 600;
    const rows = [entryRow(60, 'testing', start)];
    const fake = await startFakeWebQueue(rows);
    recordTesting(fake, 60, start);
    const { exporter } = await webExporter(fake, false);
    await exporter.waitFor((samples) => live(samples) === 1, 'one entry polled');
    await pollsFromNow(exporter, 1);
    // After a poll that did not list it, #61 is submitted, becomes ready, is tested, is sent back
    // to pending by a push to main and is tested again; the first poll to list it sees it testing.
    // Dated a little ahead, so that no poll that missed it ends after its first transition.
    const at = now() + 0.5;
    record(fake, 61, 'notReady', at, 'USER_REQUESTED');
    record(fake, 61, 'pending', at + 0.1, 'MERGE_ITEM_NOW_READY');
    record(fake, 61, 'testing', at + 0.2, null);
    record(fake, 61, 'pending', at + 0.3, 'MANUAL_PUSH_TO_TARGET_BRANCH');
    record(fake, 61, 'testing', at + 0.4, null);
    rows.push(entryRow(61, 'testing', at + 0.4));
    const counted = await exporter.waitFor(
      (samples) => sum(samples, 'trunk_merge_queue_restarts_total', QUEUE) === 1,
      'the history of the pull request listed first',
    );
    await pollsFromNow(exporter, 3);
    const later = await exporter.samples();
    for (const samples of [counted, later]) {
      expect(restarts(samples)).toEqual({ MANUAL_PUSH_TO_TARGET_BRANCH: 1 });
    }
    expect(transitionsOf(later)).toEqual({
      'not_ready->pending': 1,
      'pending->testing': 2,
      'testing->pending': 1,
    });
  });

  it('counts an empty reason as unknown and cuts one too long for a label value, reporting it', async () => {
    // The definition types `reason` as `string | null`: "" is allowed and tells no reason, as null
    // does (`unknown`). Trunk's reasons are short identifiers; 5,000 characters is no reason a page
    // should carry per queue, so the label keeps its first 199 characters and an ellipsis.
    const start = now() - 600;
    const rows = [60, 61, 62].map((n) => entryRow(n, 'testing', start)) as [
      EntryRow,
      EntryRow,
      EntryRow,
    ];
    const [pr60, pr61, pr62] = rows;
    const fake = await startFakeWebQueue(rows);
    for (const number of [60, 61, 62]) recordTesting(fake, number, start);
    const { exporter } = await webExporter(fake, false);
    await exporter.waitFor((samples) => live(samples) === 3, 'three entries polled');
    await pollsFromNow(exporter, 1);
    const at = now();
    const long = `TEST_RUN_${'X'.repeat(4_991)}`;
    record(fake, 60, 'cancelled', at - 2, '');
    moveEntry(pr60, 'cancelled', at - 2);
    record(fake, 61, 'failed', at - 2, long);
    moveEntry(pr61, 'failed', at - 2);
    record(fake, 62, 'pending', at - 2, '');
    moveEntry(pr62, 'pending', at - 2);
    const samples = await exporter.waitFor(
      (page) =>
        sum(page, 'trunk_merge_queue_restarts_total', QUEUE) === 1 &&
        sum(page, 'trunk_merge_queue_pull_requests_failed_total', QUEUE) === 1 &&
        sum(page, 'trunk_merge_queue_pull_requests_cancelled_total', QUEUE) === 1,
      'the histories read',
    );
    expect(cancelled(samples)).toEqual({ unknown: 1 });
    expect(restarts(samples)).toEqual({ unknown: 1 });
    expect(failed(samples)).toEqual({ [`TEST_RUN_${'X'.repeat(190)}…`]: 1 });
    expect(
      sum(samples, 'trunk_exporter_api_anomalies_total', {
        endpoint: 'v2/queue-entry-history',
        kind: 'invalid_field',
      }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('counts a failure once when its webhook event comes first, when its history comes first, and across a reload turning webhooks off', async () => {
    const start = now() - 600;
    const [pr60, pr61, pr62] = [60, 61, 62].map((n) => entryRow(n, 'testing', start)) as [
      EntryRow,
      EntryRow,
      EntryRow,
    ];
    const fake = await startFakeWebQueue([pr60, pr61, pr62]);
    for (const number of [60, 61, 62]) recordTesting(fake, number, start);
    const { exporter, reload } = await webExporter(fake, true);
    await exporter.waitFor((samples) => live(samples) === 3, 'three entries polled');
    // #60: its event first, then the poll sees it gone and its history lists the failure.
    const failedAt60 = now();
    await failedEvent(exporter, 60, failedAt60, 'TEST_RUN_REQUIRED_STATUS_FAILED');
    record(fake, 60, 'failed', failedAt60, 'TEST_RUN_REQUIRED_STATUS_FAILED');
    moveEntry(pr60, 'failed', failedAt60);
    await exporter.waitFor((samples) => live(samples) === 2, '#60 seen gone');
    await pollsFromNow(exporter, 3);
    expect(failed(await exporter.samples())).toEqual({ TEST_RUN_REQUIRED_STATUS_FAILED: 1 });
    // #61: its history first (the poll sees it gone), then its event, late.
    const failedAt61 = now();
    record(fake, 61, 'failed', failedAt61, 'TEST_RUN_TIMEOUT');
    moveEntry(pr61, 'failed', failedAt61);
    await exporter.waitFor((samples) => failed(samples).TEST_RUN_TIMEOUT === 1, '#61 read');
    await failedEvent(exporter, 61, failedAt61, 'TEST_RUN_TIMEOUT');
    await pollsFromNow(exporter, 2);
    expect(failed(await exporter.samples())).toEqual({
      TEST_RUN_REQUIRED_STATUS_FAILED: 1,
      TEST_RUN_TIMEOUT: 1,
    });
    // #62: its event, then a reload turns webhooks off, then its history lists the failure.
    const failedAt62 = now();
    await failedEvent(exporter, 62, failedAt62, 'START_TEST_RUN_MERGE_CONFLICT');
    await reload(false);
    record(fake, 62, 'failed', failedAt62, 'START_TEST_RUN_MERGE_CONFLICT');
    moveEntry(pr62, 'failed', failedAt62);
    await exporter.waitFor((samples) => live(samples) === 0, '#62 seen gone');
    await pollsFromNow(exporter, 3);
    const after = await exporter.samples();
    expect(failed(after)).toEqual({
      TEST_RUN_REQUIRED_STATUS_FAILED: 1,
      TEST_RUN_TIMEOUT: 1,
      START_TEST_RUN_MERGE_CONFLICT: 1,
    });
    expect(fake.requestsTo(/^\/v2\/queue-entry-history$/).length).toBeGreaterThanOrEqual(3);
  });

  it('hides only its own families while its reads fail past staleAfterSeconds, one call per interval, and shows them again once one succeeds', async () => {
    const start = now() - 600;
    const pr70 = entryRow(70, 'testing', start);
    const fake = await startFakeWebQueue([pr70]);
    recordTesting(fake, 70, start);
    const intervalSeconds = 0.2;
    const { exporter } = await webExporter(fake, false, { staleAfterSeconds: 1, intervalSeconds });
    await exporter.waitFor((samples) => live(samples) === 1, '#70 polled');
    const restart = (at: number) => {
      record(fake, 70, 'pending', at - 0.1, 'MANUAL_PUSH_TO_TARGET_BRANCH');
      record(fake, 70, 'testing', at, null);
      moveEntry(pr70, 'testing', at);
    };
    restart(now());
    await exporter.waitFor(
      (samples) => restarts(samples).MANUAL_PUSH_TO_TARGET_BRANCH === 1,
      'one restart',
    );
    // The reads answer 400 (not retried) from now on, and #70 restarts again.
    fake.fail(/^\/v2\/queue-entry-history$/, 400);
    const failingFrom = now();
    const before = fake.requestsTo(/^\/v2\/queue-entry-history$/).length;
    restart(now());
    const hidden = await exporter.waitFor(
      (samples) => select(samples, 'trunk_merge_queue_restarts_total', QUEUE).length === 0,
      'the restarts hidden',
    );
    // The queue's other families stay.
    expect(live(hidden)).toBe(1);
    expect(sum(hidden, 'trunk_exporter_target_up', { ...QUEUE, kind: 'merge_queue' })).toBe(1);
    const calls = fake.requestsTo(/^\/v2\/queue-entry-history$/).length - before;
    expect(calls).toBeGreaterThan(0);
    expect(calls).toBeLessThanOrEqual((now() - failingFrom) / intervalSeconds + 1);
    fake.recover();
    const back = await exporter.waitFor(
      (samples) => restarts(samples).MANUAL_PUSH_TO_TARGET_BRANCH === 2,
      'the restarts back',
    );
    expect(restarts(back)).toEqual({ MANUAL_PUSH_TO_TARGET_BRANCH: 2 });
  });
});

/** Starts a fake with PRs `numbers` in `state` since ten minutes ago and an exporter that has polled them. */
async function setUp(numbers: number[], state = 'testing', webhooks = false) {
  const start = now() - 600;
  const rows = numbers.map((n) => entryRow(n, state, start));
  const fake = await startFakeWebQueue(rows);
  for (const n of numbers) if (state === 'testing') recordTesting(fake, n, start);
  const { exporter, reload } = await webExporter(fake, webhooks);
  await exporter.waitFor((s) => live(s) === numbers.length, 'entries polled');
  await pollsFromNow(exporter, 1);
  const row = (n: number) => rows[numbers.indexOf(n)] as EntryRow;
  return { fake, exporter, reload, row };
}

/**
 * The read of concluded entries is made on a poll that sees a PR leave (else every
 * PERIODIC_EXIT_READ_POLLS-th poll): PR `number`, listed testing, merges, at `at`.
 */
function merge(fake: Awaited<ReturnType<typeof setUp>>['fake'], row: EntryRow, at: number) {
  record(fake, row.number, 'merged', at, null);
  moveEntry(row, 'merged', at);
}

/**
 * PR `number`'s timeline: submitted, ready, tested and failed at once on a merge conflict, dated a
 * little ahead (so that no poll that missed it ends after its first transition); returns when it
 * was submitted.
 */
function failsOnMergeConflict(fake: Awaited<ReturnType<typeof setUp>>['fake'], number: number) {
  const at = now() + 0.3;
  record(fake, number, 'notReady', at, 'USER_REQUESTED');
  record(fake, number, 'pending', at + 0.05, 'MERGE_ITEM_NOW_READY');
  record(fake, number, 'testing', at + 0.1, null);
  record(fake, number, 'failed', at + 0.15, 'START_TEST_RUN_MERGE_CONFLICT');
  return at;
}

/** Lets reads and polls run long enough for every answer to be taken. */
async function settle(exporter: Awaited<ReturnType<typeof setUp>>['exporter']) {
  await pollsFromNow(exporter, 8);
  return exporter.samples();
}

// Trunk's transition is an entry of the timeline ("When the entry entered this state"): when more
// than one happened between two polls, the pair of states the polls saw is none of them.
describe('the transitions between two polls as the timeline has them, not as the polls paired them', () => {
  it('R2 restart from testsPassed, the poll seeing pending', async () => {
    const { fake, exporter, row } = await setUp([11]);
    const at = now();
    record(fake, 11, 'testsPassed', at - 3, 'TEST_RUN_PASSED');
    record(fake, 11, 'pending', at - 2, 'PREREQUISITE_MERGE_ITEM_MANUALLY_MERGED');
    moveEntry(row(11), 'pending', at - 2);
    const s = await settle(exporter);
    expect(restarts(s)).toEqual({ PREREQUISITE_MERGE_ITEM_MANUALLY_MERGED: 1 });
    expect(transitionsOf(s)).toEqual({ 'testing->tests_passed': 1, 'tests_passed->pending': 1 });
  });

  it('R2b pending -> testing -> testsPassed between polls, the poll seeing testsPassed', async () => {
    const { fake, exporter, row } = await setUp([17], 'pending');
    const at = now();
    record(fake, 17, 'pending', at - 600, 'MERGE_ITEM_NOW_READY');
    record(fake, 17, 'testing', at - 3, null);
    record(fake, 17, 'testsPassed', at - 2, 'TEST_RUN_PASSED');
    moveEntry(row(17), 'testsPassed', at - 2);
    const s = await settle(exporter);
    expect(transitionsOf(s)).toEqual({ 'pending->testing': 1, 'testing->tests_passed': 1 });
  });

  it('R2c testing -> pendingFailure -> failed between polls (gone)', async () => {
    const { fake, exporter, row } = await setUp([18]);
    const at = now();
    record(fake, 18, 'pendingFailure', at - 3, null);
    record(fake, 18, 'failed', at - 2, 'TEST_RUN_REQUIRED_STATUS_FAILED');
    moveEntry(row(18), 'failed', at - 2);
    const s = await settle(exporter);
    expect(failed(s)).toEqual({ TEST_RUN_REQUIRED_STATUS_FAILED: 1 });
    expect(transitionsOf(s)).toEqual({
      'testing->pending_failure': 1,
      'pending_failure->failed': 1,
    });
  });

  it.each([
    [
      'R6 testing -> failed -> notReady (resubmitted) -> pending is no restart, no testing->pending',
      16,
      false,
    ],
    ['R6b as R6 with the failed testing result the poll can see', 19, true],
  ] as const)('%s', async (_, number, withTestingResult) => {
    const { fake, exporter, row } = await setUp([number]);
    const at = now();
    record(fake, number, 'failed', at - 4, 'TEST_RUN_TIMEOUT');
    record(fake, number, 'notReady', at - 3, 'USER_REQUESTED');
    record(fake, number, 'pending', at - 2, 'MERGE_ITEM_NOW_READY');
    if (withTestingResult) {
      fake.testingResults(WEB_QUEUE).push(testingResult(number, at - 4, 'failed', 'failed'));
    }
    resubmitEntry(row(number), at - 4, at - 3);
    moveEntry(row(number), 'pending', at - 2);
    const s = await settle(exporter);
    expect(restarts(s)).toEqual({});
    expect(failed(s)).toEqual({ TEST_RUN_TIMEOUT: 1 });
    expect(transitionsOf(s)).toEqual({
      'testing->failed': 1,
      'failed->not_ready': 1,
      'not_ready->pending': 1,
    });
  });

  it('counts the pair the polls saw once, as they saw it, when its history never answers and a reload turns the read off', async () => {
    const { fake, exporter, reload, row } = await setUp([20]);
    fake.fail(/^\/v2\/queue-entry-history$/, 400);
    const at = now();
    record(fake, 20, 'testsPassed', at - 3, 'TEST_RUN_PASSED');
    record(fake, 20, 'pending', at - 2, 'PREREQUISITE_MERGE_ITEM_MANUALLY_MERGED');
    moveEntry(row(20), 'pending', at - 2);
    // Held for its history, which does not answer.
    expect(transitionsOf(await settle(exporter))).toEqual({});
    await reload(false, false);
    await exporter.waitFor(
      (s) => transitionsOf(s)['testing->pending'] === 1,
      'the pair counted once the read is off',
    );
    expect(transitionsOf(await settle(exporter))).toEqual({ 'testing->pending': 1 });
  });

  it('counts the pair the polls saw once, as they saw it, once the reads have failed past staleAfterSeconds; their answer after counts the other step', async () => {
    const start = now() - 600;
    const pr21 = entryRow(21, 'testing', start);
    const fake = await startFakeWebQueue([pr21]);
    recordTesting(fake, 21, start);
    const { exporter } = await webExporter(fake, false, { staleAfterSeconds: 1 });
    await exporter.waitFor((s) => live(s) === 1, '#21 polled');
    await pollsFromNow(exporter, 1);
    fake.fail(/^\/v2\/queue-entry-history$/, 400);
    const at = now();
    record(fake, 21, 'testsPassed', at - 3, 'TEST_RUN_PASSED');
    record(fake, 21, 'pending', at - 2, 'PREREQUISITE_MERGE_ITEM_MANUALLY_MERGED');
    moveEntry(pr21, 'pending', at - 2);
    await exporter.waitFor(
      (s) => transitionsOf(s)['testing->pending'] === 1,
      'the pair counted once the reads are stale',
    );
    fake.recover();
    await exporter.waitFor(
      (s) => restarts(s).PREREQUISITE_MERGE_ITEM_MANUALLY_MERGED === 1,
      'the history read',
    );
    // The pair counted stands for the last step into pending; the answer adds the step before.
    expect(transitionsOf(await settle(exporter))).toEqual({
      'testing->pending': 1,
      'testing->tests_passed': 1,
    });
  });
});

// A pull request submitted and concluded between two polls is in no poll's listing: the read of
// the queue's concluded entries counts its exit, and its queue-entry history ("the PRs whose entry
// changed or left since the last read") tells why, each failure once whichever witness sees it first.
describe('a pull request that entered and concluded between two polls, never listed', () => {
  it('F7 submitted and failed on a merge conflict between two polls: its failure counts, by reason, with its transitions', async () => {
    const { fake, exporter, row } = await setUp([27]);
    const at = failsOnMergeConflict(fake, 28);
    const pr28 = entryRow(28, 'failed', at + 0.15);
    await new Promise((resolve) => setTimeout(resolve, 400));
    fake.entries(WEB_QUEUE).push(pr28);
    merge(fake, row(27), now());
    const s = await settle(exporter);
    expect(failed(s)).toEqual({ START_TEST_RUN_MERGE_CONFLICT: 1 });
    expect(sum(s, 'trunk_merge_queue_pull_requests_exited_total', QUEUE)).toBe(2);
    expect(transitionsOf(s)).toEqual({
      'not_ready->pending': 1,
      'pending->testing': 1,
      'testing->failed': 1,
      'testing->merged': 1,
    });
  });

  it('submitted and cancelled as its PR closed while not ready, between two polls: its cancellation counts', async () => {
    const { fake, exporter, row } = await setUp([29]);
    const at = now() + 0.3;
    record(fake, 30, 'notReady', at, 'USER_REQUESTED');
    record(fake, 30, 'cancelled', at + 0.1, 'PR_CLOSED');
    await new Promise((resolve) => setTimeout(resolve, 400));
    fake.entries(WEB_QUEUE).push(entryRow(30, 'cancelled', at + 0.1));
    merge(fake, row(29), now());
    const s = await settle(exporter);
    expect(cancelled(s)).toEqual({ PR_CLOSED: 1 });
    expect(failed(s)).toEqual({});
    expect(transitionsOf(s)).toEqual({ 'not_ready->cancelled': 1, 'testing->merged': 1 });
  });

  it('counts a failure once when its webhook event counted it first, never listed or seen leaving with no read', async () => {
    const { fake, exporter, row } = await setUp([31, 33], 'testing', true);
    // #31, listed: its event first, then the poll sees it gone; its exit known from the event, no
    // read of concluded entries is made, and its history (the poll's window of a departure) meets
    // the event. A later read lists its conclusion as no poll's: not read, nor counted, again.
    const failedAt31 = now();
    await failedEvent(exporter, 31, failedAt31, 'TEST_RUN_REQUIRED_STATUS_FAILED');
    record(fake, 31, 'failed', failedAt31, 'TEST_RUN_REQUIRED_STATUS_FAILED');
    moveEntry(row(31), 'failed', failedAt31);
    await exporter.waitFor((samples) => live(samples) === 1, '#31 seen gone');
    await pollsFromNow(exporter, 3);
    // #32, never listed: submitted and failed between two polls, its event first.
    const at = failsOnMergeConflict(fake, 32);
    await new Promise((resolve) => setTimeout(resolve, 400));
    await failedEvent(exporter, 32, at + 0.15, 'START_TEST_RUN_MERGE_CONFLICT');
    fake.entries(WEB_QUEUE).push(entryRow(32, 'failed', at + 0.15));
    merge(fake, row(33), now());
    const s = await settle(exporter);
    expect(failed(s)).toEqual({
      TEST_RUN_REQUIRED_STATUS_FAILED: 1,
      START_TEST_RUN_MERGE_CONFLICT: 1,
    });
    expect(sum(s, 'trunk_merge_queue_pull_requests_exited_total', QUEUE)).toBe(3);
  });
});
