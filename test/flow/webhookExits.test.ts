// Exits counted once with webhooks on, over scripted polls and events: whichever witness comes
// first, the event or the poll, the other adds nothing; a poll-seen exit with no event within
// 2 × the interval counts from the poll. Every expected figure is worked out by hand.
import { describe, expect, it } from 'vitest';
import {
  advanceQueueFlow,
  exitsToLookUp,
  recordQueueEvent,
  startQueueFlow,
} from '../../src/flow/queueFlow.js';
import type { ExitLookup, ExitOutcome, QueueFlow } from '../../src/snapshot/queueFlowTypes.js';
import { SnapshotStore } from '../../src/snapshot/store.js';
import type { Target } from '../../src/snapshot/types.js';
import { MAX_REMEMBERED_EXITS } from '../../src/snapshot/prStayTypes.js';
import { poll, summary, transitions, type ScriptedPullRequest } from './scriptedPolls.js';

const T0 = 1_767_225_600;
const INTERVAL = 30;
const OPTIONS = {
  maxGapSeconds: 600,
  lookupRetrySeconds: 600,
  intervalSeconds: INTERVAL,
  webhooks: true,
};

// Poll 1: three PRs in the queue; later polls list what is left of them.
const FIRST = poll(T0, 'running', [
  [1, 'testing', T0 - 600],
  [2, 'pending', T0 - 120],
  [3, 'tests_passed', T0 - 900],
]);
const FIRST_AGAIN = (at: number, ...more: ScriptedPullRequest[]) =>
  poll(at, 'running', [
    ...FIRST.pullRequests.map((pr): ScriptedPullRequest => [
      pr.number,
      pr.state,
      pr.stateChangedAt,
    ]),
    ...more,
  ]);
const WITHOUT_3 = (at: number) =>
  poll(at, 'running', [
    [1, 'testing', T0 - 600],
    [2, 'pending', T0 - 120],
  ]);

function exited(flow: QueueFlow): Record<string, number> {
  return Object.fromEntries(flow.counts.exited);
}

function bySource(flow: QueueFlow): Record<string, number> {
  return Object.fromEntries(flow.exitStays?.bySource ?? []);
}

function exitEvent(
  flow: QueueFlow,
  prNumber: number,
  outcome: Exclude<ExitOutcome, 'unknown'>,
  at: number | undefined,
  receivedAt: number,
): QueueFlow {
  return recordQueueEvent(flow, { kind: 'exit', prNumber, outcome, at }, receivedAt, {
    intervalSeconds: INTERVAL,
  });
}

function entryEvent(
  flow: QueueFlow,
  kind: 'submitted' | 'queued',
  prNumber: number,
  at: number,
): QueueFlow {
  return recordQueueEvent(flow, { kind, prNumber, at }, at, { intervalSeconds: INTERVAL });
}

const lookups = (entries: [number, ExitLookup][] = []) => new Map<number, ExitLookup>(entries);
const merged = (leftAt: number): ExitLookup => ({ outcome: 'merged', leftAt });

describe('an exit seen by both its event and a poll counts once', () => {
  it('event first: counted at once, from the event; the poll adds nothing and looks nothing up', () => {
    const started = startQueueFlow(FIRST);
    expect(bySource(started)).toEqual({ event: 0, poll: 0 });
    const afterEvent = exitEvent(started, 3, 'merged', T0 + 15, T0 + 16);
    expect(exited(afterEvent)).toMatchObject({ merged: 1 });
    // 3 was queued at least since T0-900 (the ledger's best), merged at T0+15 (the event's time).
    expect(summary(afterEvent.counts.timeInQueue.get('merged'))).toMatchObject({
      count: 1,
      sum: 915,
    });
    expect(exitsToLookUp(afterEvent, WITHOUT_3(T0 + 30))).toEqual([]);
    const polled = advanceQueueFlow(afterEvent, WITHOUT_3(T0 + 30), lookups(), OPTIONS);
    const later = advanceQueueFlow(polled, WITHOUT_3(T0 + 200), lookups(), OPTIONS);
    expect(exited(later)).toEqual({ merged: 1, failed: 0, cancelled: 0, unknown: 0 });
    expect(later.counts.timeInQueue.get('merged')?.count).toBe(1);
    // The poll still counts the state change it saw, with the event's outcome.
    expect(transitions(later)).toEqual({ 'tests_passed->merged': 1 });
    expect(bySource(later)).toEqual({ event: 1, poll: 0 });
  });

  it('poll first: held for the event, which counts it; nothing more when the wait is over', () => {
    const started = startQueueFlow(FIRST);
    expect(exitsToLookUp(started, WITHOUT_3(T0 + 30))).toEqual([3]);
    const polled = advanceQueueFlow(
      started,
      WITHOUT_3(T0 + 30),
      lookups([[3, merged(T0 + 15)]]),
      OPTIONS,
    );
    expect(exited(polled)).toMatchObject({ merged: 0 });
    const afterEvent = exitEvent(polled, 3, 'merged', T0 + 15, T0 + 40);
    expect(exited(afterEvent)).toMatchObject({ merged: 1 });
    const later = advanceQueueFlow(
      advanceQueueFlow(afterEvent, WITHOUT_3(T0 + 60), lookups(), OPTIONS),
      WITHOUT_3(T0 + 200),
      lookups(),
      OPTIONS,
    );
    expect(exited(later)).toEqual({ merged: 1, failed: 0, cancelled: 0, unknown: 0 });
    expect(summary(later.counts.timeInQueue.get('merged'))).toMatchObject({ count: 1, sum: 915 });
    expect(bySource(later)).toEqual({ event: 1, poll: 0 });
  });

  it('event only: a PR in and out between two polls counts, its time from its two events', () => {
    const started = startQueueFlow(FIRST);
    const submitted = entryEvent(started, 'submitted', 7, T0 + 5);
    const gone = exitEvent(submitted, 7, 'merged', T0 + 20, T0 + 21);
    const polled = advanceQueueFlow(gone, FIRST_AGAIN(T0 + 30), lookups(), OPTIONS);
    expect(exited(polled)).toMatchObject({ merged: 1 });
    expect(summary(polled.counts.timeInQueue.get('merged'))).toMatchObject({ count: 1, sum: 15 });
    expect(bySource(polled)).toEqual({ event: 1, poll: 0 });
  });

  it('poll only: counted from the poll once 2 × the interval passed without an event', () => {
    const started = startQueueFlow(FIRST);
    const seenGone = advanceQueueFlow(
      started,
      WITHOUT_3(T0 + 30),
      lookups([[3, merged(T0 + 15)]]),
      OPTIONS,
    );
    // Due at T0+30 + 2 × 30 = T0+90.
    const waiting = advanceQueueFlow(seenGone, WITHOUT_3(T0 + 60), lookups(), OPTIONS);
    expect(exited(waiting)).toMatchObject({ merged: 0 });
    const counted = advanceQueueFlow(waiting, WITHOUT_3(T0 + 90), lookups(), OPTIONS);
    expect(exited(counted)).toMatchObject({ merged: 1 });
    expect(summary(counted.counts.timeInQueue.get('merged'))).toMatchObject({ count: 1, sum: 915 });
    expect(bySource(counted)).toEqual({ event: 0, poll: 1 });
    // The event, late (a redelivery), is not counted again.
    const late = exitEvent(counted, 3, 'merged', T0 + 15, T0 + 100);
    expect(exited(late)).toMatchObject({ merged: 1 });
    expect(bySource(late)).toEqual({ event: 0, poll: 1 });
  });

  it('a PR that re-enters after its exit is a new stay, whose exit counts again', () => {
    const started = startQueueFlow(FIRST);
    const failed = exitEvent(started, 2, 'failed', T0 + 25, T0 + 26);
    const gone = advanceQueueFlow(
      failed,
      poll(T0 + 30, 'running', [
        [1, 'testing', T0 - 600],
        [3, 'tests_passed', T0 - 900],
      ]),
      lookups(),
      OPTIONS,
    );
    const resubmitted = entryEvent(gone, 'submitted', 2, T0 + 40);
    const back = advanceQueueFlow(
      resubmitted,
      poll(T0 + 60, 'running', [
        [1, 'testing', T0 - 600],
        [2, 'pending', T0 + 45],
        [3, 'tests_passed', T0 - 900],
      ]),
      lookups(),
      OPTIONS,
    );
    const failedAgain = exitEvent(back, 2, 'failed', T0 + 70, T0 + 71);
    const end = [T0 + 90, T0 + 200].reduce(
      (flow, at) =>
        advanceQueueFlow(
          flow,
          poll(at, 'running', [
            [1, 'testing', T0 - 600],
            [3, 'tests_passed', T0 - 900],
          ]),
          lookups(),
          OPTIONS,
        ),
      failedAgain,
    );
    expect(exited(end)).toMatchObject({ failed: 2 });
    // First stay from T0-120 (the ledger) to T0+25; second from its submission T0+40 to T0+70.
    expect(summary(end.counts.timeInQueue.get('failed'))).toMatchObject({ count: 2, sum: 175 });
    expect(bySource(end)).toEqual({ event: 2, poll: 0 });
  });

  it('a PR out and back between two polls: a later poll still listing it begins a new stay', () => {
    const started = startQueueFlow(FIRST);
    const failed = exitEvent(started, 2, 'failed', T0 + 25, T0 + 26);
    // T0+30 may have read the queue before the event: its listing of 2 proves nothing.
    const maybeOld = advanceQueueFlow(failed, FIRST_AGAIN(T0 + 30), lookups(), OPTIONS);
    // T0+60 finished 34 s after the event, so it read the queue after it: 2 is back.
    const back = advanceQueueFlow(
      maybeOld,
      poll(T0 + 60, 'running', [
        [1, 'testing', T0 - 600],
        [2, 'pending', T0 + 50],
        [3, 'tests_passed', T0 - 900],
      ]),
      lookups(),
      OPTIONS,
    );
    expect(back.tracked.get(2)?.enteredAt).toBe(T0 + 50);
    const cancelled = advanceQueueFlow(
      back,
      poll(T0 + 90, 'running', [
        [1, 'testing', T0 - 600],
        [3, 'tests_passed', T0 - 900],
      ]),
      lookups([[2, { outcome: 'cancelled', leftAt: T0 + 80 }]]),
      OPTIONS,
    );
    const end = advanceQueueFlow(
      cancelled,
      poll(T0 + 150, 'running', [
        [1, 'testing', T0 - 600],
        [3, 'tests_passed', T0 - 900],
      ]),
      lookups(),
      OPTIONS,
    );
    expect(exited(end)).toMatchObject({ failed: 1, cancelled: 1 });
    // The second stay: from T0+50 to T0+80.
    expect(summary(end.counts.timeInQueue.get('cancelled'))).toMatchObject({ count: 1, sum: 30 });
    expect(bySource(end)).toEqual({ event: 1, poll: 1 });
  });

  it("takes time in queue from the PR's submitted event before the ledger's estimate", () => {
    const started = startQueueFlow(FIRST);
    const submitted = entryEvent(started, 'submitted', 4, T0 + 5);
    const listed = advanceQueueFlow(
      submitted,
      FIRST_AGAIN(T0 + 30, [4, 'not_ready', T0 + 8]),
      lookups(),
      OPTIONS,
    );
    expect(listed.tracked.get(4)?.enteredAt).toBe(T0 + 8);
    const mergedFlow = exitEvent(listed, 4, 'merged', T0 + 50, T0 + 51);
    expect(summary(mergedFlow.counts.timeInQueue.get('merged'))).toMatchObject({
      count: 1,
      sum: 45,
    });
  });

  it('remembers a bounded number of exits however many events come', () => {
    let flow = startQueueFlow(FIRST);
    const events = MAX_REMEMBERED_EXITS + 100;
    for (let pr = 10_000; pr < 10_000 + events; pr++) {
      flow = exitEvent(flow, pr, 'merged', T0 + 10, T0 + 10);
    }
    expect(exited(flow)).toMatchObject({ merged: events });
    expect(flow.exitStays?.stays.size).toBe(MAX_REMEMBERED_EXITS);
  });

  it('without webhooks, a poll-seen exit counts at once, and its event after a reload turned them on counts nothing', () => {
    const plain = { ...OPTIONS, webhooks: false };
    const flow = advanceQueueFlow(
      startQueueFlow(FIRST),
      WITHOUT_3(T0 + 30),
      lookups([[3, merged(T0 + 15)]]),
      plain,
    );
    expect(exited(flow)).toMatchObject({ merged: 1 });
    // Svix retries what the exporter refused while webhooks were off: the late event is the same exit.
    const late = exitEvent(flow, 3, 'merged', T0 + 15, T0 + 300);
    expect(exited(late)).toMatchObject({ merged: 1 });
    expect(bySource(late)).toEqual({ event: 0, poll: 1 });
  });
});

describe('store.updateQueueFlow', () => {
  const target: Target = { kind: 'merge_queue', repo: 'github.com/acme/web', branch: 'main' };

  it('changes nothing before the first successful poll, then replaces the ledger', () => {
    const store = new SnapshotStore(600, () => T0);
    store.setTargets([target]);
    const count = (flow: QueueFlow) => exitEvent(flow, 3, 'merged', T0 + 15, T0 + 16);
    expect(store.updateQueueFlow(target, count)).toBe(false);
    store.recordSuccess(target, FIRST, 0.1, startQueueFlow(FIRST));
    const version = store.version;
    expect(store.updateQueueFlow(target, count)).toBe(true);
    expect(store.version).toBe(version + 1);
    expect(exited(store.queueFlow(target) as QueueFlow)).toMatchObject({ merged: 1 });
  });
});
