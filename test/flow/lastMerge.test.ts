// A queue's last merge over scripted polls, concluded entries and events: the latest merge any of
// them told of, by Trunk's time where it is plausible. Every expected value is worked out by hand.
import { describe, expect, it } from 'vitest';
import { MERGE_TIME_SLACK_SECONDS } from '../../src/flow/lastMerge.js';
import {
  advanceQueueFlow,
  countConcludedExits,
  recordQueueEvent,
  startQueueFlow,
} from '../../src/flow/queueFlow.js';
import type { ExitLookup } from '../../src/snapshot/queueFlowTypes.js';
import { poll } from './scriptedPolls.js';

const T0 = 1_767_225_600;
const INTERVAL = 30;
const POLLS = {
  maxGapSeconds: 600,
  lookupRetrySeconds: 600,
  intervalSeconds: INTERVAL,
  webhooks: false,
};
const WEBHOOKS = { ...POLLS, webhooks: true };

const FIRST = poll(T0, 'running', [
  [1, 'tests_passed', T0 - 60],
  [2, 'testing', T0 - 30],
  [3, 'pending', T0 - 10],
]);
const lookups = (entries: [number, ExitLookup][]) => new Map<number, ExitLookup>(entries);

describe("a merge queue's last merge", () => {
  it('is the latest merge the polls, the concluded entries and the events told of, never earlier', () => {
    const started = startQueueFlow(FIRST);
    expect(started.lastMergeAt).toBeUndefined();
    // 2 failed and 3 was cancelled: not merges.
    const noMerge = advanceQueueFlow(
      started,
      poll(T0 + 30, 'running', [[1, 'tests_passed', T0 - 60]]),
      lookups([
        [2, { outcome: 'failed', leftAt: T0 + 20 }],
        [3, { outcome: 'cancelled', leftAt: T0 + 25 }],
      ]),
      POLLS,
    );
    expect(noMerge.lastMergeAt).toBeUndefined();
    const polled = advanceQueueFlow(
      noMerge,
      poll(T0 + 60, 'running', []),
      lookups([[1, { outcome: 'merged', leftAt: T0 + 40 }]]),
      POLLS,
    );
    expect(polled.lastMergeAt).toBe(T0 + 40);
    // A PR in and out between two polls, found by a read of concluded entries.
    const concluded = countConcludedExits(
      polled,
      [
        { prNumber: 9, outcome: 'merged', enteredAt: T0 + 61, leftAt: T0 + 70 },
        { prNumber: 8, outcome: 'failed', enteredAt: T0 + 61, leftAt: T0 + 80 },
      ],
      T0 + 90,
      POLLS,
    );
    expect(concluded.lastMergeAt).toBe(T0 + 70);
    // An older merge learned later changes nothing.
    const older = countConcludedExits(
      concluded,
      [{ prNumber: 7, outcome: 'merged', enteredAt: T0, leftAt: T0 + 50 }],
      T0 + 120,
      POLLS,
    );
    expect(older.lastMergeAt).toBe(T0 + 70);
  });

  it("takes no concluded entry's time in the future; an event's counts when it came, once", () => {
    const start = startQueueFlow(FIRST);
    const takenAt = T0 + 30;
    const ahead = countConcludedExits(
      start,
      [
        {
          prNumber: 9,
          outcome: 'merged',
          enteredAt: T0,
          leftAt: takenAt + MERGE_TIME_SLACK_SECONDS + 1,
        },
      ],
      takenAt,
      WEBHOOKS,
    );
    expect(ahead.lastMergeAt).toBeUndefined();
    const withinSlack = countConcludedExits(
      start,
      [{ prNumber: 9, outcome: 'merged', enteredAt: T0, leftAt: takenAt + 10 }],
      takenAt,
      WEBHOOKS,
    );
    expect(withinSlack.lastMergeAt).toBe(takenAt + 10);
    const settings = { intervalSeconds: INTERVAL };
    const event = (at: number | undefined) => ({
      kind: 'exit' as const,
      prNumber: 1,
      outcome: 'merged' as const,
      at,
    });
    // An event an hour ahead, received at T0 + 40: counted then.
    const futureEvent = recordQueueEvent(start, event(T0 + 3640), T0 + 40, settings);
    expect(futureEvent.lastMergeAt).toBe(T0 + 40);
    // Without a timestamp, when it came; its redelivery later counts nothing and moves nothing.
    const untimed = recordQueueEvent(start, event(undefined), T0 + 45, settings);
    expect(untimed.lastMergeAt).toBe(T0 + 45);
    expect(recordQueueEvent(untimed, event(undefined), T0 + 400, settings).lastMergeAt).toBe(
      T0 + 45,
    );
    // A failed exit's event is no merge.
    const failed = recordQueueEvent(
      start,
      { ...event(T0 + 20), outcome: 'failed' },
      T0 + 50,
      settings,
    );
    expect(failed.lastMergeAt).toBeUndefined();
  });
});
