// Eviction loops counted from a queue's exits, over scripted polls and events. The scenarios are
// written from Trunk's definition (trunk-openapi-v2.json), and every expected count by hand:
// - `pendingFailure`: "A failure is expected because an entry ahead failed, but this entry has not
//   been re-tested yet. Not terminal: it usually returns to `pending` or `testing`." A retest is no
//   exit, so no eviction.
// - `failed`: "Terminal — verification or the merge itself failed." Each failed exit is one
//   eviction; an eviction loop is a PR whose entry concluded `failed` at least twice within a day.
// - `entryConclusion`: "A pull request that fails and is resubmitted has a new entry", while the
//   queue entry's `id` says "an ordinary resubmission after a cancellation reuses it": the PR
//   number, not the entry, is what loops.
import { describe, expect, it } from 'vitest';
import { advanceQueueFlow, recordQueueEvent, startQueueFlow } from '../../src/flow/queueFlow.js';
import type { ExitLookup, QueueFlow } from '../../src/snapshot/queueFlowTypes.js';
import type { MergeQueueSnapshot } from '../../src/snapshot/types.js';
import { poll } from './scriptedPolls.js';

/** 2026-01-01T10:00:00Z. */
const TEN = 1_767_261_600;
const MINUTE = 60;
const DAY = 86_400;
const INTERVAL = 30;
const POLLS = {
  maxGapSeconds: DAY,
  lookupRetrySeconds: 600,
  intervalSeconds: INTERVAL,
  webhooks: false,
};
const WEBHOOKS = { ...POLLS, webhooks: true };

const failedAt = (leftAt: number): ExitLookup => ({ outcome: 'failed', leftAt });

/** The ledger after each poll in turn, each given the lookups of the PRs that left before it. */
function polled(
  first: MergeQueueSnapshot,
  later: readonly [MergeQueueSnapshot, [number, ExitLookup][]][],
  options: typeof POLLS | typeof WEBHOOKS = POLLS,
): QueueFlow {
  let flow = startQueueFlow(first);
  for (const [snapshot, lookups] of later) {
    flow = advanceQueueFlow(flow, snapshot, new Map(lookups), options);
  }
  return flow;
}

const exited = (flow: QueueFlow) => Object.fromEntries(flow.counts.exited);

describe('eviction loops from the exits', () => {
  it('counts a PR retested after a failure ahead of it as evicted once; its failure again after a resubmission is a loop; one a day later is not', () => {
    const flow = polled(poll(TEN - 30, 'running', [[10, 'testing', TEN - 10 * MINUTE]]), [
      // 10:00 #10 fails because of the PR ahead: pending failure, not an exit.
      [poll(TEN + 30, 'running', [[10, 'pending_failure', TEN]]), []],
      // Retested at 10:05.
      [poll(TEN + 10 * MINUTE, 'running', [[10, 'testing', TEN + 5 * MINUTE]]), []],
      // 10:20 it fails again and leaves: evicted once.
      [poll(TEN + 20 * MINUTE + 30, 'running', []), [[10, failedAt(TEN + 20 * MINUTE)]]],
      // Resubmitted at 10:30 (a new stay), it fails at 10:45: the second eviction within a day.
      [poll(TEN + 30 * MINUTE + 30, 'running', [[10, 'not_ready', TEN + 30 * MINUTE]]), []],
      [poll(TEN + 45 * MINUTE + 30, 'running', []), [[10, failedAt(TEN + 45 * MINUTE)]]],
      // Back the next day, it fails 24 h 5 min after the last one: not within a day of it.
      [poll(TEN + DAY + 46 * MINUTE, 'running', [[10, 'pending', TEN + DAY + 46 * MINUTE]]), []],
      [
        poll(TEN + DAY + 50 * MINUTE + 30, 'running', []),
        [[10, failedAt(TEN + DAY + 50 * MINUTE)]],
      ],
    ]);
    expect(exited(flow)).toMatchObject({ failed: 3 });
    expect(flow.counts.repeatedFailures).toBe(1);
  });

  it('counts no loop for a PR cancelled twice, nor for two PRs failing once each', () => {
    const flow = polled(
      poll(TEN, 'running', [
        [1, 'pending', TEN - MINUTE],
        [2, 'testing', TEN - MINUTE],
        [3, 'testing', TEN - MINUTE],
      ]),
      [
        [
          poll(TEN + 30, 'running', [[1, 'pending', TEN - MINUTE]]),
          [
            [2, failedAt(TEN + 10)],
            [3, failedAt(TEN + 20)],
          ],
        ],
        [poll(TEN + 60, 'running', []), [[1, { outcome: 'cancelled', leftAt: TEN + 40 }]]],
        [poll(TEN + 90, 'running', [[1, 'not_ready', TEN + 70]]), []],
        [poll(TEN + 120, 'running', []), [[1, { outcome: 'cancelled', leftAt: TEN + 100 }]]],
      ],
    );
    expect(exited(flow)).toMatchObject({ failed: 2, cancelled: 2 });
    expect(flow.counts.repeatedFailures).toBe(0);
  });

  it('with webhooks, counts each failed exit once whichever witness saw it first', () => {
    // #7 fails at 10:00:10: its event comes first, then the poll sees it gone (one exit).
    let flow = startQueueFlow(poll(TEN, 'running', [[7, 'testing', TEN - MINUTE]]));
    const failedEvent = (at: number, receivedAt: number) =>
      (flow = recordQueueEvent(
        flow,
        { kind: 'exit', prNumber: 7, outcome: 'failed', at },
        receivedAt,
        { intervalSeconds: INTERVAL },
      ));
    failedEvent(TEN + 10, TEN + 12);
    flow = advanceQueueFlow(flow, poll(TEN + 30, 'running', []), new Map(), WEBHOOKS);
    // Resubmitted, it fails at 10:01:40: this time the poll sees it first, then its event.
    flow = advanceQueueFlow(
      flow,
      poll(TEN + 60, 'running', [[7, 'not_ready', TEN + 50]]),
      new Map(),
      WEBHOOKS,
    );
    flow = advanceQueueFlow(
      flow,
      poll(TEN + 120, 'running', []),
      new Map([[7, failedAt(TEN + 100)]]),
      WEBHOOKS,
    );
    failedEvent(TEN + 100, TEN + 125);
    expect(exited(flow)).toMatchObject({ failed: 2 });
    expect(Object.fromEntries(flow.exitStays?.bySource ?? [])).toEqual({ event: 2, poll: 0 });
    expect(flow.counts.repeatedFailures).toBe(1);
  });
});
