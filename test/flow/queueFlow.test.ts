// The flow ledger over scripted sequences of polls: every count and histogram observation below is
// worked out by hand from the snapshots, not from the code under test.
import { describe, expect, it } from 'vitest';
import { advanceQueueFlow, countConcludedExits, startQueueFlow } from '../../src/flow/queueFlow.js';
import { NO_ENTRIES } from '../../src/snapshot/noEntries.js';
import type { ExitLookup } from '../../src/snapshot/queueFlowTypes.js';
import { poll, summary, transitions, type ScriptedPullRequest } from './scriptedPolls.js';

const T0 = 1_767_225_600;
const OPTIONS = {
  maxGapSeconds: 600,
  lookupRetrySeconds: 600,
  intervalSeconds: 30,
  webhooks: false,
};

const found = (outcome: 'merged' | 'failed' | 'cancelled', leftAt?: number): ExitLookup => ({
  outcome,
  leftAt,
});
const notFound: ExitLookup = { outcome: 'unknown', leftAt: undefined };
const retry = (prNumber: number) => new Map<number, ExitLookup>([[prNumber, 'retry']]);

describe('queue flow over a scripted sequence of polls', () => {
  // Poll 1 (the first since start): three PRs, nothing counted.
  const first = poll(T0, 'running', [
    [1, 'testing', T0 - 600],
    [2, 'pending', T0 - 120],
    [3, 'tests_passed', T0 - 900],
  ]);
  // Poll 2: 1 restarted, 2 started testing, 3 left (merged at T0+15), 4 arrived.
  const second = poll(T0 + 30, 'running', [
    [1, 'pending', T0 + 10],
    [2, 'testing', T0 + 20],
    [4, 'not_ready', T0 + 5],
  ]);
  // Poll 3: the queue paused at some point; 2 left (lookup fails), 4 left (404), 5 arrived.
  const third = poll(T0 + 60, 'paused', [
    [1, 'pending', T0 + 10],
    [5, 'pending', undefined],
  ]);
  // Poll 4: 2's lookup works now (failed at T0+45).
  const fourth = poll(T0 + 90, 'paused', [
    [1, 'pending', T0 + 10],
    [5, 'pending', undefined],
  ]);

  const flow1 = startQueueFlow(first);
  const flow2 = advanceQueueFlow(flow1, second, new Map([[3, found('merged', T0 + 15)]]), OPTIONS);
  const flow3 = advanceQueueFlow(
    flow2,
    third,
    new Map<number, ExitLookup>([
      [2, 'retry'],
      [4, notFound],
    ]),
    OPTIONS,
  );
  const flow4 = advanceQueueFlow(flow3, fourth, new Map([[2, found('failed', T0 + 45)]]), OPTIONS);

  it('counts nothing on the first poll, but has every outcome and known queue state at 0', () => {
    expect(Object.fromEntries(flow1.counts.exited)).toEqual({
      merged: 0,
      failed: 0,
      cancelled: 0,
      unknown: 0,
    });
    expect(Object.fromEntries(flow1.counts.queueStateSeconds)).toEqual({
      running: 0,
      paused: 0,
      draining: 0,
      switching_modes: 0,
    });
    expect(flow1.counts.transitions.size).toBe(0);
    expect(flow1.counts.timeInState.size).toBe(0);
    expect([...flow1.counts.timeInQueue.values()].map((h) => h.count)).toEqual([0, 0, 0, 0]);
  });

  it('remembers when it started, at its first poll, through every later poll', () => {
    expect([flow1, flow2, flow3, flow4].map((flow) => flow.startedAt)).toEqual([T0, T0, T0, T0]);
  });

  it('counts exits by the looked-up outcome, and a failed lookup only once it succeeds', () => {
    expect(Object.fromEntries(flow2.counts.exited)).toMatchObject({ merged: 1, unknown: 0 });
    expect(Object.fromEntries(flow3.counts.exited)).toEqual({
      merged: 1,
      failed: 0,
      cancelled: 0,
      unknown: 1,
    });
    expect([...flow3.departed.keys()]).toEqual([2]);
    expect(Object.fromEntries(flow4.counts.exited)).toEqual({
      merged: 1,
      failed: 1,
      cancelled: 0,
      unknown: 1,
    });
    expect(flow4.departed.size).toBe(0);
  });

  it('counts each state change seen between polls, and the final one of each known exit', () => {
    expect(transitions(flow4)).toEqual({
      'testing->pending': 1,
      'pending->testing': 1,
      'tests_passed->merged': 1,
      // 2 was last seen testing (at T0+30) and failed.
      'testing->failed': 1,
    });
  });

  it('observes time in queue from the earliest known start to the final state change', () => {
    // 3: queued at least since T0-900, merged at T0+15.
    expect(summary(flow4.counts.timeInQueue.get('merged'))).toMatchObject({ count: 1, sum: 915 });
    // 2: queued at least since T0-120, failed at T0+45.
    expect(summary(flow4.counts.timeInQueue.get('failed'))).toMatchObject({ count: 1, sum: 165 });
    // 4: entered T0+5; its lookup could not tell, so it left when a poll saw it gone (T0+60).
    expect(summary(flow4.counts.timeInQueue.get('unknown'))).toMatchObject({ count: 1, sum: 55 });
    expect(summary(flow4.counts.timeInQueue.get('cancelled'))).toMatchObject({ count: 0, sum: 0 });
    // 915 s lies in the (600, 1200] bucket.
    expect(summary(flow4.counts.timeInQueue.get('merged'))?.buckets.slice(1, 4)).toEqual([
      '600:0',
      '1200:1',
      '1800:1',
    ]);
  });

  it('observes time in state from stateChangedAt to stateChangedAt', () => {
    // testing: 1 from T0-600 to T0+10 (610 s); 2 from T0+20 to T0+45 (25 s).
    expect(summary(flow4.counts.timeInState.get('testing'))).toMatchObject({ count: 2, sum: 635 });
    // pending: 2 from T0-120 to T0+20.
    expect(summary(flow4.counts.timeInState.get('pending'))).toMatchObject({ count: 1, sum: 140 });
    // tests_passed: 3 from T0-900 to T0+15.
    expect(summary(flow4.counts.timeInState.get('tests_passed'))).toMatchObject({
      count: 1,
      sum: 915,
    });
  });

  it('attributes each interval between polls to the queue state seen at its start', () => {
    expect(Object.fromEntries(flow4.counts.queueStateSeconds)).toMatchObject({
      running: 60,
      paused: 30,
    });
  });

  it('does not attribute a gap longer than the limit to any state', () => {
    const late = poll(T0 + 90 + 601, 'paused', [
      [1, 'pending', T0 + 10],
      [5, 'pending', undefined],
    ]);
    const flow5 = advanceQueueFlow(flow4, late, new Map(), OPTIONS);
    expect(flow5.counts.queueStateSeconds).toEqual(flow4.counts.queueStateSeconds);
  });

  it('leaves the earlier ledgers as they were', () => {
    expect(Object.fromEntries(flow2.counts.exited)).toMatchObject({ failed: 0, unknown: 0 });
    expect(flow1.counts.transitions.size).toBe(0);
  });
});

describe('queue flow edge cases', () => {
  it('retries a PR whose lookups keep failing until it has been gone lookupRetrySeconds, then counts it unknown once, from when it was seen gone', () => {
    let flow = startQueueFlow(poll(T0, 'running', [[7, 'testing', T0 - 100]]));
    // Gone at T0+30; every lookup fails (429s, timeouts) until T0+630, 600 s later.
    for (let at = T0 + 30; at < T0 + 630; at += 30) {
      flow = advanceQueueFlow(flow, poll(at, 'running', []), new Map([[7, 'retry']]), OPTIONS);
    }
    expect(flow.counts.exited.get('unknown')).toBe(0);
    expect([...flow.departed.keys()]).toEqual([7]);
    flow = advanceQueueFlow(flow, poll(T0 + 630, 'running', []), new Map([[7, 'retry']]), OPTIONS);
    expect(flow.counts.exited.get('unknown')).toBe(1);
    expect(flow.departed.size).toBe(0);
    // From T0-100 to T0+30, the first poll that no longer listed it.
    expect(flow.counts.timeInQueue.get('unknown')).toMatchObject({ count: 1, sum: 130 });
    // Nobody knows its final state, so no transition is counted.
    expect(flow.counts.transitions.size).toBe(0);
    // A read of concluded entries that then lists it (it failed at T0+20) counts it no more.
    const read = countConcludedExits(
      flow,
      [{ prNumber: 7, outcome: 'failed', enteredAt: T0 - 100, leftAt: T0 + 20 }],
      T0 + 660,
      OPTIONS,
    );
    expect(Object.fromEntries(read.counts.exited)).toMatchObject({ unknown: 1, failed: 0 });
  });

  it('holds the one shared empty map where an update leaves the departed PRs, the tracked ones or the transitions empty', () => {
    const flow1 = startQueueFlow(poll(T0, 'running', [[7, 'testing', T0 - 100]]));
    // Gone at T0+30, its lookup fails: it waits in departed, and no transition is counted yet,
    // though the update copied the counts (30 s more of running).
    const flow2 = advanceQueueFlow(flow1, poll(T0 + 30, 'running', []), retry(7), OPTIONS);
    expect([...flow2.departed.keys()]).toEqual([7]);
    expect(flow2.counts.queueStateSeconds.get('running')).toBe(30);
    expect(flow2.tracked).toBe(NO_ENTRIES);
    expect(flow2.counts.transitions).toBe(NO_ENTRIES);
    expect(flow2.counts.timeInState).toBe(NO_ENTRIES);
    // Its lookup works now (merged at T0+40): nothing waits any more.
    const flow3 = advanceQueueFlow(
      flow2,
      poll(T0 + 60, 'running', []),
      new Map([[7, found('merged', T0 + 40)]]),
      OPTIONS,
    );
    expect(flow3.counts.exited.get('merged')).toBe(1);
    expect(flow3.departed).toBe(NO_ENTRIES);
    expect(flow3.tracked).toBe(NO_ENTRIES);
    expect(flow3.counts.transitions.size).toBe(1);
  });

  it('ends the stay of a listed PR whose entry concluded and was submitted again since, and begins a new one', () => {
    // #7 testing since T0-100; its entry failed at T0+20 and it is back in not_ready since T0+25.
    const first = startQueueFlow(poll(T0, 'running', [[7, 'testing', T0 - 100]]));
    const back = poll(T0 + 30, 'running', [[7, 'not_ready', T0 + 25]]);
    const failedAt = { outcome: 'failed' as const, leftAt: T0 + 20 };
    const seen = advanceQueueFlow(
      first,
      back,
      new Map(),
      OPTIONS,
      new Map([[7, { ...failedAt, fromPolledState: true }]]),
    );
    expect(Object.fromEntries(seen.counts.exited)).toMatchObject({ failed: 1 });
    // In the queue from T0-100 to T0+20; 120 s of testing, which it left for failed.
    expect(summary(seen.counts.timeInQueue.get('failed'))).toMatchObject({ count: 1, sum: 120 });
    expect(transitions(seen)).toEqual({ 'testing->failed': 1 });
    expect(seen.tracked.get(7)).toMatchObject({ state: 'not_ready', enteredAt: T0 + 25 });
    // Found by a later read, its stay's state then unknown: the exit alone counts.
    const later = advanceQueueFlow(
      first,
      back,
      new Map(),
      OPTIONS,
      new Map([[7, { ...failedAt, fromPolledState: false }]]),
    );
    expect(Object.fromEntries(later.counts.exited)).toMatchObject({ failed: 1 });
    expect(transitions(later)).toEqual({});
  });

  it('counts nothing for a PR the first poll lists already merged or failed, when it goes, however its lookup answers; one back in the queue is a stay again', () => {
    // After a restart, API v1's queue still lists #15 failed ten minutes ago and #16 merged while the
    // exporter was down; #17 failed before the start, is submitted again and fails again after it.
    const start = poll(T0, 'running', [
      [15, 'failed', T0 - 600],
      [16, 'merged', T0 - 60],
      [17, 'failed', T0 - 300],
    ]);
    const second = poll(T0 + 30, 'running', [[17, 'not_ready', T0 + 10]]);
    const third = poll(T0 + 60, 'running', []);
    const lookups = new Map<number, ExitLookup>([
      [15, found('failed', T0 - 600)],
      [16, found('merged', T0 - 60)],
    ]);
    const flow2 = advanceQueueFlow(startQueueFlow(start), second, lookups, OPTIONS);
    const flow3 = advanceQueueFlow(
      flow2,
      third,
      new Map([[17, found('failed', T0 + 50)]]),
      OPTIONS,
    );
    expect(Object.fromEntries(flow3.counts.exited)).toEqual({
      merged: 0,
      failed: 1,
      cancelled: 0,
      unknown: 0,
    });
    expect(transitions(flow3)).toEqual({ 'failed->not_ready': 1, 'not_ready->failed': 1 });
    expect(flow3.lastMergeAt).toBeUndefined();
  });

  it('places the exit of a PR listed in the final state it left in when it entered that state, however many polls list it after', () => {
    // #9 testing since T0 - 100, merged at T0 + 20; listed `merged` by the polls at T0 + 30, + 60
    // and + 90, gone at T0 + 120. Its stay: T0 - 100 to T0 + 20, 120 s.
    let flow = startQueueFlow(poll(T0, 'running', [[9, 'testing', T0 - 100]]));
    for (const at of [T0 + 30, T0 + 60, T0 + 90]) {
      flow = advanceQueueFlow(
        flow,
        poll(at, 'running', [[9, 'merged', T0 + 20]]),
        new Map(),
        OPTIONS,
      );
    }
    flow = advanceQueueFlow(
      flow,
      poll(T0 + 120, 'running', []),
      new Map([[9, found('merged', T0 + 20)]]),
      OPTIONS,
    );
    expect(flow.lastMergeAt).toBe(T0 + 20);
    expect(summary(flow.counts.timeInQueue.get('merged'))).toMatchObject({ count: 1, sum: 120 });
  });

  it('tracks a departed PR that comes back before its lookup succeeded as a new entry', () => {
    const start = startQueueFlow(poll(T0, 'running', [[7, 'testing', T0 - 100]]));
    const gone = advanceQueueFlow(
      start,
      poll(T0 + 30, 'running', []),
      new Map([[7, 'retry']]),
      OPTIONS,
    );
    const back = advanceQueueFlow(
      gone,
      poll(T0 + 60, 'running', [[7, 'not_ready', T0 + 50]]),
      new Map(),
      OPTIONS,
    );
    expect(back.departed.size).toBe(0);
    expect(back.tracked.get(7)).toEqual({
      number: 7,
      state: 'not_ready',
      enteredAt: T0 + 50,
      stateSince: T0 + 50,
      lastSeenAt: T0 + 60,
    });
    expect(Object.fromEntries(back.counts.exited)).toMatchObject({ unknown: 0, merged: 0 });
  });

  it('counts no transition into or out of a state the poll could not learn', () => {
    const start = startQueueFlow(poll(T0, 'running', [[7, 'unknown', T0 - 100]]));
    const next = advanceQueueFlow(
      start,
      poll(T0 + 30, 'running', [[7, 'testing', T0 + 20]]),
      new Map(),
      OPTIONS,
    );
    const after = advanceQueueFlow(
      next,
      poll(T0 + 60, 'running', []),
      new Map([[7, found('merged', T0 + 40)]]),
      OPTIONS,
    );
    expect(transitions(after)).toEqual({ 'testing->merged': 1 });
    expect(after.counts.timeInState.get('testing')).toMatchObject({ count: 1, sum: 20 });
  });

  it('places the unknown exit of a PR last seen in a state the poll could not learn between the polls around its departure', () => {
    // #7 in a state no poll could name since T0 - 100, gone at T0 + 30, its lookup telling nothing:
    // it left after T0 and by T0 + 30, so its stay ran from T0 - 100 to T0 + 30 at most.
    const start = startQueueFlow(poll(T0, 'running', [[7, 'unknown', T0 - 100]]));
    const after = advanceQueueFlow(
      start,
      poll(T0 + 30, 'running', []),
      new Map([[7, notFound]]),
      OPTIONS,
    );
    expect(Object.fromEntries(after.counts.exited)).toMatchObject({ unknown: 1 });
    expect(summary(after.counts.timeInQueue.get('unknown'))).toMatchObject({ count: 1, sum: 130 });
  });

  it('keeps timestamps from a skewed clock within the two polls that bound the change', () => {
    const start = startQueueFlow(poll(T0, 'running', [[7, 'pending', T0 - 100]]));
    // Trunk's clock says the change happened before the previous poll, then after this one.
    const next = advanceQueueFlow(
      start,
      poll(T0 + 30, 'running', [
        [7, 'testing', T0 - 500],
        [8, 'not_ready', T0 + 3600],
      ]),
      new Map(),
      OPTIONS,
    );
    expect(next.tracked.get(7)?.stateSince).toBe(T0);
    expect(next.counts.timeInState.get('pending')).toMatchObject({ count: 1, sum: 100 });
    expect(next.tracked.get(8)).toMatchObject({ enteredAt: T0 + 30, stateSince: T0 + 30 });
    const after = advanceQueueFlow(
      next,
      poll(T0 + 60, 'running', [[8, 'not_ready', T0 + 3600]]),
      new Map([[7, found('merged', T0 + 9999)]]),
      OPTIONS,
    );
    // Merged "in the future": it left no later than the poll that saw it gone.
    expect(after.counts.timeInQueue.get('merged')).toMatchObject({ count: 1, sum: 160 });
  });

  it('never counts a transition without a state change: a PR listed twice, an exit in its own state', () => {
    // PR 7 listed twice with two states, on an unchanging queue: nothing happens between polls.
    const twice: ScriptedPullRequest[] = [
      [7, 'testing', T0 - 50],
      [7, 'pending', T0 - 100],
    ];
    // PR 8 entered and merged after the first poll, and is listed `merged` from the second on.
    const listed: ScriptedPullRequest[] = [...twice, [8, 'merged', T0 + 20]];
    let flow = startQueueFlow(poll(T0, 'running', twice));
    for (let at = T0 + 30; at <= T0 + 150; at += 30) {
      flow = advanceQueueFlow(flow, poll(at, 'running', listed), new Map(), OPTIONS);
    }
    // PR 8 was already `merged` in the queue, and its lookup says merged: an exit, no transition.
    flow = advanceQueueFlow(
      flow,
      poll(T0 + 180, 'running', twice),
      new Map([[8, found('merged', T0 + 20)]]),
      OPTIONS,
    );
    expect(transitions(flow)).toEqual({});
    expect(flow.counts.exited.get('merged')).toBe(1);
  });

  it('keeps at most 20 unknown state values per family and queue, counting later ones as other', () => {
    // A queue and its PR that report a new, undocumented state on every one of 60 polls.
    const invented = (at: number) => `state_${at}`;
    let flow = startQueueFlow(poll(T0, invented(0), [[7, invented(0), T0]]));
    for (let at = 1; at <= 60; at++) {
      flow = advanceQueueFlow(
        flow,
        poll(T0 + 30 * at, invented(at), [[7, invented(at), T0 + 30 * at]]),
        new Map(),
        OPTIONS,
      );
    }
    const unknown = (values: Iterable<string>) =>
      new Set([...values].filter((value) => value.startsWith('state_')));
    const transitionValues = [...flow.counts.transitions.values()].flatMap(({ from, to }) => [
      from,
      to,
    ]);
    expect(unknown(transitionValues).size).toBe(20);
    expect(unknown(flow.counts.timeInState.keys()).size).toBe(20);
    expect(unknown(flow.counts.queueStateSeconds.keys()).size).toBe(20);
    // The first 20 keep their names; every later change still counts, as other.
    expect(flow.counts.timeInState.has('state_19')).toBe(true);
    expect(flow.counts.timeInState.get('other')?.count).toBe(60 - 20);
    expect(flow.counts.queueStateSeconds.get('other')).toBe(30 * (60 - 20));
    const counted = [...flow.counts.transitions.values()].reduce((total, t) => total + t.count, 0);
    expect(counted).toBe(60);
    // Series stay bounded: 20 named unknown states and other, on each side of a transition.
    expect(flow.counts.transitions.size).toBeLessThanOrEqual(21 * 21);
  });
});
