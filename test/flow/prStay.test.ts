// A PR's stay through every order its witnesses can come in: each row is a script of polls, events
// and reloads through the queue-flow entry points, and the exits it must count (by outcome, by
// witness, and the time in queue they add up to). Every figure is worked out by hand.
import { describe, expect, it } from 'vitest';
import {
  advanceQueueFlow,
  exitsToLookUp,
  recordQueueEvent,
  startQueueFlow,
  type QueueFlowOptions,
} from '../../src/flow/queueFlow.js';
import type { PullRequestQueueEvent } from '../../src/snapshot/prStayTypes.js';
import type { ExitLookup, QueueFlow } from '../../src/snapshot/queueFlowTypes.js';
import { poll, type ScriptedPullRequest } from './scriptedPolls.js';

const T0 = 1_767_225_600;
const INTERVAL = 30;
const PLAIN: QueueFlowOptions = {
  maxGapSeconds: 600,
  lookupRetrySeconds: 600,
  intervalSeconds: INTERVAL,
  webhooks: false,
};
const WEBHOOKS: QueueFlowOptions = { ...PLAIN, webhooks: true };

/** PR 1 stays in the queue throughout; PR 2 is the one whose stay each row follows. */
const STAYER: ScriptedPullRequest = [1, 'testing', T0 - 600];
const PR2: ScriptedPullRequest = [2, 'tests_passed', T0 - 100];

type Step =
  /** A successful poll at T0 + `at` listing `prs`, with the lookups of the PRs it saw gone. */
  | {
      readonly poll: number;
      readonly prs: readonly ScriptedPullRequest[];
      readonly lookups?: readonly [number, ExitLookup][];
      readonly options?: QueueFlowOptions;
    }
  /** A webhook event received at T0 + `received`; `event.at` is absolute. */
  | { readonly event: PullRequestQueueEvent; readonly received: number }
  /** The exporter restarts: the next poll starts a new ledger. */
  | { readonly restart: true }
  /** What must hold at this point of the script. */
  | { readonly check: Expected };

interface Expected {
  readonly exited: Partial<Record<'merged' | 'failed' | 'cancelled' | 'unknown', number>>;
  readonly bySource: { readonly event: number; readonly poll: number };
  /** Sum of the time in queue of every exit counted. */
  readonly secondsInQueue?: number;
  /** PRs the last poll had to look up. */
  readonly lookedUp?: readonly number[];
}

interface Row {
  readonly name: string;
  readonly steps: readonly Step[];
}

const merged = (at: number): PullRequestQueueEvent => ({
  kind: 'exit',
  prNumber: 2,
  outcome: 'merged',
  at,
});
const listed = (at: number, options?: QueueFlowOptions): Step => ({
  poll: at,
  prs: [STAYER, PR2],
  ...(options === undefined ? {} : { options }),
});
const gone = (at: number, lookup?: ExitLookup, options?: QueueFlowOptions): Step => ({
  poll: at,
  prs: [STAYER],
  ...(lookup === undefined ? {} : { lookups: [[2, lookup]] }),
  ...(options === undefined ? {} : { options }),
});
const NONE = { event: 0, poll: 0 };

const ROWS: readonly Row[] = [
  {
    name: 'event before the poll sees it gone: the event counts, the poll looks nothing up',
    steps: [
      listed(0),
      { event: merged(T0 + 15), received: 16 },
      { check: { exited: { merged: 1 }, bySource: { event: 1, poll: 0 }, secondsInQueue: 115 } },
      gone(30),
      { check: { exited: { merged: 1 }, bySource: { event: 1, poll: 0 }, lookedUp: [] } },
      gone(300),
      { check: { exited: { merged: 1 }, bySource: { event: 1, poll: 0 }, secondsInQueue: 115 } },
    ],
  },
  {
    name: 'poll sees it gone first: held, then the event counts it with the poll-seen start',
    steps: [
      listed(0),
      gone(30, { outcome: 'merged', leftAt: T0 + 15 }),
      { check: { exited: { merged: 0 }, bySource: NONE, lookedUp: [2] } },
      { event: merged(T0 + 15), received: 40 },
      gone(60),
      gone(300),
      { check: { exited: { merged: 1 }, bySource: { event: 1, poll: 0 }, secondsInQueue: 115 } },
    ],
  },
  {
    name: 'an untimed event within the hold is the exit the poll saw',
    steps: [
      listed(0),
      gone(30, { outcome: 'failed', leftAt: T0 + 20 }),
      // Received more than an interval after that poll: only its lack of a time ties it to the exit.
      { event: { kind: 'exit', prNumber: 2, outcome: 'failed', at: undefined }, received: 70 },
      gone(300),
      // Its receipt stands in for its time: T0-100 → T0+70.
      { check: { exited: { failed: 1 }, bySource: { event: 1, poll: 0 }, secondsInQueue: 170 } },
    ],
  },
  {
    name: 'a duplicate event (a redelivery) counts nothing more',
    steps: [
      listed(0),
      { event: merged(T0 + 15), received: 16 },
      { event: merged(T0 + 15), received: 20 },
      gone(30),
      { event: merged(T0 + 15), received: 3600 },
      { check: { exited: { merged: 1 }, bySource: { event: 1, poll: 0 }, secondsInQueue: 115 } },
    ],
  },
  {
    name: 'an event for a PR no poll listed counts, from the last poll on',
    steps: [
      listed(0),
      {
        event: { kind: 'exit', prNumber: 9, outcome: 'cancelled', at: T0 + 25 },
        received: 26,
      },
      listed(30),
      listed(60),
      { check: { exited: { cancelled: 1 }, bySource: { event: 1, poll: 0 }, secondsInQueue: 25 } },
    ],
  },
  {
    name: 'gone without an event: held until 2 × the interval, then counted from the poll once',
    steps: [
      listed(0),
      gone(30, { outcome: 'merged', leftAt: T0 + 15 }),
      gone(60),
      { check: { exited: { merged: 0 }, bySource: NONE } },
      gone(90),
      { check: { exited: { merged: 1 }, bySource: { event: 0, poll: 1 }, secondsInQueue: 115 } },
      // The event, late, is the same exit.
      { event: merged(T0 + 15), received: 100 },
      gone(120),
      { check: { exited: { merged: 1 }, bySource: { event: 0, poll: 1 } } },
    ],
  },
  // Trunk's clock may run up to a minute ahead of the exporter's (docs/metrics.md: an exit event's
  // timestamp "over 60 s after" its receipt is "Trunk's clock ahead"). Here it runs 45 s ahead: PR 2
  // leaves at T0+20 by the exporter's clock, T0+65 by Trunk's (the lookup's and the event's time).
  // "the PR's event within that time [the hold] counts it (and the poll does not) ... An event
  // arriving after that is not counted again": one exit either way.
  {
    name: "Trunk's clock ahead: the event within the hold is the exit the poll saw",
    steps: [
      listed(0),
      gone(30, { outcome: 'failed', leftAt: T0 + 65 }),
      { event: { kind: 'exit', prNumber: 2, outcome: 'failed', at: T0 + 65 }, received: 40 },
      gone(60),
      gone(300),
      // T0-100 → T0+65, both Trunk's times.
      { check: { exited: { failed: 1 }, bySource: { event: 1, poll: 0 }, secondsInQueue: 165 } },
    ],
  },
  {
    name: "Trunk's clock ahead: the event after the hold is the exit the poll counted",
    steps: [
      listed(0),
      gone(30, { outcome: 'failed', leftAt: T0 + 65 }),
      gone(60),
      gone(90),
      { check: { exited: { failed: 1 }, bySource: { event: 0, poll: 1 } } },
      { event: { kind: 'exit', prNumber: 2, outcome: 'failed', at: T0 + 65 }, received: 100 },
      gone(120),
      { check: { exited: { failed: 1 }, bySource: { event: 0, poll: 1 } } },
    ],
  },
  {
    // "A PR that comes back to the queue after its exit (its submitted/queued event, ...) is a new
    // stay, counted again when it leaves": the held exit, and the new stay's by its event.
    name: 'submitted again while its exit is held: the next exit event is the new stay’s',
    steps: [
      listed(0),
      gone(30, { outcome: 'failed', leftAt: T0 + 20 }),
      { event: { kind: 'submitted', prNumber: 2, at: T0 + 35 }, received: 35 },
      { event: { kind: 'exit', prNumber: 2, outcome: 'failed', at: T0 + 50 }, received: 51 },
      gone(60),
      gone(300),
      { check: { exited: { failed: 2 }, bySource: { event: 1, poll: 1 } } },
    ],
  },
  {
    name: 'a failed lookup is retried; the exit is then held like any other',
    steps: [
      listed(0),
      gone(30, 'retry'),
      { check: { exited: { merged: 0 }, bySource: NONE, lookedUp: [2] } },
      gone(60, { outcome: 'merged', leftAt: T0 + 15 }),
      // Held from the poll that saw it gone (T0+30): due at T0+90.
      gone(90),
      { check: { exited: { merged: 1 }, bySource: { event: 0, poll: 1 }, secondsInQueue: 115 } },
    ],
  },
  {
    name: 'resubmitted after its exit: a new stay, whose exit counts again',
    steps: [
      listed(0),
      { event: { kind: 'exit', prNumber: 2, outcome: 'failed', at: T0 + 10 }, received: 11 },
      gone(30),
      { event: { kind: 'submitted', prNumber: 2, at: T0 + 40 }, received: 40 },
      { poll: 60, prs: [STAYER, [2, 'pending', T0 + 45]] },
      { event: { kind: 'exit', prNumber: 2, outcome: 'failed', at: T0 + 70 }, received: 71 },
      gone(90),
      gone(300),
      // T0-100 → T0+10, then T0+40 (its submission) → T0+70.
      { check: { exited: { failed: 2 }, bySource: { event: 2, poll: 0 }, secondsInQueue: 140 } },
    ],
  },
  {
    name: 'out and back between two polls: a poll well after the event begins a new stay',
    steps: [
      listed(0),
      { event: { kind: 'exit', prNumber: 2, outcome: 'failed', at: T0 + 25 }, received: 26 },
      listed(30),
      { poll: 60, prs: [STAYER, [2, 'pending', T0 + 50]] },
      gone(90, { outcome: 'cancelled', leftAt: T0 + 80 }),
      gone(150),
      // T0-100 → T0+25 from the event; T0+50 → T0+80 from the poll.
      {
        check: {
          exited: { failed: 1, cancelled: 1 },
          bySource: { event: 1, poll: 1 },
          secondsInQueue: 155,
        },
      },
    ],
  },
  {
    name: "a later stay's event while an earlier exit is held: both count, each once",
    steps: [
      listed(0),
      gone(30, { outcome: 'failed', leftAt: T0 + 20 }),
      { event: { kind: 'queued', prNumber: 2, at: T0 + 45 }, received: 45 },
      // Well after the held exit (T0+30 + the interval): another stay's.
      { event: merged(T0 + 75), received: 76 },
      gone(300),
      {
        check: {
          exited: { failed: 1, merged: 1 },
          bySource: { event: 1, poll: 1 },
          // Held: T0-100 → T0+20; the event's stay from the last poll (T0+30) to T0+75.
          secondsInQueue: 165,
        },
      },
    ],
  },
  {
    name: 'restarted in the queue right after its exit: the next exit is a new stay',
    steps: [
      listed(0),
      { event: { kind: 'exit', prNumber: 2, outcome: 'failed', at: T0 + 10 }, received: 11 },
      { event: { kind: 'queued', prNumber: 2, at: T0 + 12 }, received: 12 },
      // Within an interval of the first exit, yet after the restart: not a redelivery.
      { event: { kind: 'exit', prNumber: 2, outcome: 'failed', at: T0 + 35 }, received: 36 },
      gone(60),
      gone(300),
      // A queued event does not move the start the polls know: T0-100 → T0+10, T0-100 → T0+35.
      { check: { exited: { failed: 2 }, bySource: { event: 2, poll: 0 }, secondsInQueue: 245 } },
    ],
  },
  {
    name: 'a reload that turns webhooks off counts a held exit from its poll at once',
    steps: [
      listed(0),
      gone(30, { outcome: 'merged', leftAt: T0 + 15 }),
      gone(45, undefined, PLAIN),
      { check: { exited: { merged: 1 }, bySource: { event: 0, poll: 1 }, secondsInQueue: 115 } },
    ],
  },
  {
    name: 'a reload that keeps webhooks on keeps the stays: the late event still counts nothing',
    steps: [
      listed(0),
      { event: merged(T0 + 15), received: 16 },
      gone(30, undefined, { ...WEBHOOKS, maxGapSeconds: 60 }),
      gone(60, undefined, { ...WEBHOOKS, maxGapSeconds: 60 }),
      { event: merged(T0 + 15), received: 70 },
      { check: { exited: { merged: 1 }, bySource: { event: 1, poll: 0 } } },
    ],
  },
];

function snapshotOf(step: { poll: number; prs: readonly ScriptedPullRequest[] }) {
  return poll(T0 + step.poll, 'running', step.prs);
}

function run(steps: readonly Step[]): void {
  let flow: QueueFlow | undefined;
  let lookedUp: number[] = [];
  for (const [index, step] of steps.entries()) {
    if ('poll' in step) {
      const current = snapshotOf(step);
      const options = step.options ?? WEBHOOKS;
      if (flow === undefined) {
        flow = startQueueFlow(current);
        continue;
      }
      lookedUp = exitsToLookUp(flow, current);
      flow = advanceQueueFlow(flow, current, new Map(step.lookups ?? []), options);
    } else if ('event' in step) {
      if (flow === undefined) throw new Error(`step ${index}: an event before the first poll`);
      flow = recordQueueEvent(flow, step.event, T0 + step.received, { intervalSeconds: INTERVAL });
    } else if ('restart' in step) {
      flow = undefined;
    } else {
      if (flow === undefined) throw new Error(`step ${index}: a check before the first poll`);
      const want = step.check;
      const where = `after step ${index}`;
      expect(Object.fromEntries(flow.counts.exited), where).toMatchObject(want.exited);
      expect(Object.fromEntries(flow.exitStays?.bySource ?? []), where).toEqual(want.bySource);
      if (want.secondsInQueue !== undefined) {
        const sum = [...flow.counts.timeInQueue.values()].reduce((all, h) => all + h.sum, 0);
        expect(sum, where).toBe(want.secondsInQueue);
      }
      if (want.lookedUp !== undefined) expect(lookedUp, where).toEqual(want.lookedUp);
    }
  }
}

describe("a PR's stay counts its exit once, whatever order the witnesses come in", () => {
  it.each(ROWS.map((row) => [row.name, row] as const))('%s', (_name, row) => {
    run(row.steps);
  });
});
