// A queue's counts from its pull requests' queue-entry histories, over scripted polls and timelines
// written by hand from Trunk's definition of `QueueEntryStateTransition`:
// - `reason`: "Why the entry entered this state. `null` for `testing` and `pendingFailure`, which
//   carry no reason … This is an open set"; for `pending`, "these are what distinguish a restart's
//   cause" (`PREREQUISITE_MERGE_ITEM_FAILED`: "An entry ahead of this one failed, so this one must
//   re-test"; `MERGE_ITEM_NOW_READY`: "A readiness condition became satisfied", no restart).
// - `changedAt`: "When the entry entered this state."
// A restart is an entry sent back to `pending` from `testing`, `testsPassed` or `pendingFailure`.
import { describe, expect, it } from 'vitest';
import { foldAnswers, type AnsweredTimeline } from '../../src/flow/entryHistory.js';
import {
  askWindows,
  changedWindows,
  countHeldTransitions,
  holdTransitions,
  withPolledTransitions,
} from '../../src/flow/entryHistoryWindows.js';
import {
  advanceQueueFlow,
  startQueueFlow,
  type QueueFlowOptions,
} from '../../src/flow/queueFlow.js';
import { recordEventFailure } from '../../src/flow/failureWitnesses.js';
import {
  EMPTY_ENTRY_HISTORY,
  ENTRY_HISTORY_KEEP_SECONDS,
  failureCounted,
  type EntryHistory,
} from '../../src/snapshot/entryHistoryTypes.js';
import { NO_ENTRIES } from '../../src/snapshot/noEntries.js';
import type { ExitLookup, Resubmission } from '../../src/snapshot/queueFlowTypes.js';
import type { MergeQueueSnapshot } from '../../src/snapshot/types.js';
import type { EntryTransition } from '../../src/trunk/v2EntryHistorySchemas.js';
import { poll, transitions } from './scriptedPolls.js';

/** 2026-01-01T10:00:00Z. */
const TEN = 1_767_261_600;
const ID = (number: number) => `0f8fad5b-d9cb-469f-a165-${String(number).padStart(12, '0')}`;

/** A scripted poll whose PRs carry their ids. */
function polled(takenAt: number, prs: Parameters<typeof poll>[2]): MergeQueueSnapshot {
  const snapshot = poll(takenAt, 'running', prs);
  return {
    ...snapshot,
    pullRequests: snapshot.pullRequests.map((pr) => ({ ...pr, pullRequestId: ID(pr.number) })),
  };
}

const step = (state: string, at: number, reason: string | null = null): EntryTransition => ({
  state,
  at,
  reason: reason ?? undefined,
});

/**
 * The history after the two polls' windows are answered by a read begun `readAt`, the queue's
 * webhook events having counted `eventReasons`.
 */
function answered(
  before: MergeQueueSnapshot,
  after: MergeQueueSnapshot,
  timelines: Record<string, readonly EntryTransition[]>,
  history: EntryHistory = EMPTY_ENTRY_HISTORY,
  readAt = after.takenAt + 1,
  eventReasons: ReadonlyMap<string, number> = new Map(),
) {
  const { history: asked } = askWindows(history, changedWindows(before, after));
  const answers = new Map(
    Object.entries(timelines).map(([id, transitions]): [string, AnsweredTimeline] => [
      id,
      { readStartedAt: readAt, transitions },
    ]),
  );
  return foldAnswers(asked, (id) => answers.get(id), readAt, eventReasons);
}

const pairs = (transitions: readonly { from: string; to: string }[]) =>
  transitions.map(({ from, to }) => `${from}->${to}`);

describe('queue-entry history counts', () => {
  it('asks for the PRs two polls saw change state, enter their state again, or leave; not the others', () => {
    const before = polled(TEN, [
      [1, 'testing', TEN - 60],
      [2, 'testing', TEN - 60],
      [3, 'pending', TEN - 60],
      [4, 'pending', TEN - 60],
    ]);
    const after = polled(TEN + 30, [
      [1, 'testing', TEN + 20],
      [2, 'tests_passed', TEN + 25],
      [4, 'pending', TEN - 60],
    ]);
    const windows = changedWindows(before, after);
    expect(windows.map((window) => window.prNumber)).toEqual([1, 2, 3]);
    expect(windows[2]).toEqual({
      pullRequestId: ID(3),
      prNumber: 3,
      askedAt: TEN + 30,
      from: 'pending',
      after: TEN - 60,
      to: undefined,
      until: undefined,
    });
  });

  it('counts of a pull request listed for the first time only its stay since the poll before', () => {
    // Hand-written from the definition (a transition's changedAt: "When the entry entered this
    // state"; a restart: sent back to pending). #7 failed an hour before and was submitted again
    // after the first poll: listed in notReady, it went through nothing this queue has to count.
    // #8 entered after the first poll and was restarted by a push to main before it was listed.
    // #9 failed just before the exporter's first poll, which Trunk's clock (5 s ahead) dates after
    // it; submitted again, it is first listed in notReady: the failure was before the exporter
    // watched. #11 was cancelled in another queue as its base branch changed, then submitted to
    // this one: the cancellation and what led to it are the other queue's.
    const first = polled(TEN, []);
    const second = polled(TEN + 30, [
      [7, 'not_ready', TEN + 10],
      [8, 'testing', TEN + 20],
      [9, 'not_ready', TEN + 25],
      [11, 'pending', TEN + 14],
    ]);
    const folded = answered(first, second, {
      [ID(7)]: [
        step('notReady', TEN - 3600, 'USER_REQUESTED'),
        step('pending', TEN - 3590, 'MERGE_ITEM_NOW_READY'),
        step('testing', TEN - 3580),
        step('failed', TEN - 3500, 'TEST_RUN_TIMEOUT'),
        step('notReady', TEN + 10, 'USER_REQUESTED'),
      ],
      [ID(8)]: [
        step('notReady', TEN + 5, 'USER_REQUESTED'),
        step('pending', TEN + 6, 'MERGE_ITEM_NOW_READY'),
        step('testing', TEN + 7),
        step('pending', TEN + 8, 'MANUAL_PUSH_TO_TARGET_BRANCH'),
        step('testing', TEN + 20),
      ],
      [ID(9)]: [
        step('pending', TEN - 200, 'MERGE_ITEM_NOW_READY'),
        step('testing', TEN - 100),
        step('failed', TEN + 2, 'TEST_RUN_TIMEOUT'),
        step('notReady', TEN + 25, 'USER_REQUESTED'),
      ],
      [ID(11)]: [
        step('pending', TEN - 120, 'MERGE_ITEM_NOW_READY'),
        step('testing', TEN - 60),
        step('cancelled', TEN + 10, 'PR_BASE_BRANCH_CHANGED'),
        step('notReady', TEN + 12, 'USER_REQUESTED'),
        step('pending', TEN + 14, 'MERGE_ITEM_NOW_READY'),
      ],
    });
    expect(folded.history.failed).toEqual(new Map());
    expect(folded.history.cancelled).toEqual(new Map());
    expect(folded.history.restarts).toEqual(new Map([['MANUAL_PUSH_TO_TARGET_BRANCH', 1]]));
    expect(pairs(folded.transitions as readonly { from: string; to: string }[]).sort()).toEqual(
      [
        'not_ready->pending',
        'pending->testing',
        'testing->pending',
        'pending->testing',
        'not_ready->pending',
      ].sort(),
    );
  });

  it('counts of a pull request listed for the first time the stays that began after the poll before', () => {
    // Hand-written from the definition. #12 was submitted after the first poll, tested, failed
    // (a timeout) and submitted again, all before the second poll, which lists it in notReady for
    // the first time: the failure, with its reason, and every step of that stay happened in this
    // queue between the two polls ("each failure once, whichever witness sees it first").
    const first = polled(TEN, []);
    const second = polled(TEN + 30, [[12, 'not_ready', TEN + 12]]);
    const folded = answered(first, second, {
      [ID(12)]: [
        step('notReady', TEN + 3, 'USER_REQUESTED'),
        step('pending', TEN + 4, 'MERGE_ITEM_NOW_READY'),
        step('testing', TEN + 5),
        step('failed', TEN + 8, 'TEST_RUN_TIMEOUT'),
        step('notReady', TEN + 12, 'USER_REQUESTED'),
      ],
    });
    expect(folded.history.failed).toEqual(new Map([['TEST_RUN_TIMEOUT', 1]]));
    expect(pairs(folded.transitions as readonly { from: string; to: string }[]).sort()).toEqual(
      ['not_ready->pending', 'pending->testing', 'testing->failed', 'failed->not_ready'].sort(),
    );
  });

  it('counts each of 10,000 restarts between two polls once, in one pass over the timeline', () => {
    // 10,000 times sent back to pending by a push to main and tested again between two polls: each
    // restart counts once. A fold that copied the PR's counted transitions at each transition took
    // over a minute here, past the test's timeout.
    const before = polled(TEN, [[1, 'testing', TEN - 60]]);
    const after = polled(TEN + 20_030, [[1, 'testing', TEN + 19_999]]);
    const timeline = [step('testing', TEN - 60)];
    for (let n = 0; n < 10_000; n++) {
      const at = TEN + 2 * n;
      timeline.push(step('pending', at, 'MANUAL_PUSH_TO_TARGET_BRANCH'), step('testing', at + 1));
    }
    const folded = answered(before, after, { [ID(1)]: timeline });
    expect(folded.history.restarts).toEqual(new Map([['MANUAL_PUSH_TO_TARGET_BRANCH', 10_000]]));
    // Between the polls, which saw testing both times and counted nothing: 10,000 × (testing->
    // pending, pending->testing).
    expect(folded.transitions).toHaveLength(20_000);
  });

  it('remembers at most 5,000 counted transitions per queue, forgetting the oldest pull requests first', () => {
    // Three PRs restarted between two polls: 3,000 + 3,000 + 10 transitions are more than the
    // queue remembers, so #1's go; #2's and #3's stay, and a read answering #2 again counts nothing.
    const at = (ids: number[], since: number) =>
      ids.map((number): [number, string, number] => [number, 'testing', since]);
    const before = polled(TEN, at([1, 2, 3], TEN - 60));
    const after = polled(TEN + 20_030, at([1, 2, 3], TEN + 19_999));
    const restarted = (times: number) => {
      const timeline = [step('testing', TEN - 60)];
      for (let n = 0; n < times; n++) {
        timeline.push(step('pending', TEN + 2 * n, 'MANUAL_PUSH_TO_TARGET_BRANCH'));
        timeline.push(step('testing', TEN + 2 * n + 1));
      }
      return timeline;
    };
    const timelines = { [ID(1)]: restarted(1500), [ID(2)]: restarted(1500), [ID(3)]: restarted(5) };
    const folded = answered(before, after, timelines);
    expect(folded.history.restarts).toEqual(new Map([['MANUAL_PUSH_TO_TARGET_BRANCH', 3005]]));
    expect([...folded.history.counted.keys()]).toEqual([ID(2), ID(3)]);
    const again = answered(before, after, { [ID(2)]: timelines[ID(2)] ?? [] }, folded.history);
    expect(again.history.restarts).toEqual(new Map([['MANUAL_PUSH_TO_TARGET_BRANCH', 3005]]));
  });

  it('counts a restart between two polls by its cause, and both of its transitions', () => {
    const before = polled(TEN, [[1, 'testing', TEN - 60]]);
    const after = polled(TEN + 30, [[1, 'testing', TEN + 20]]);
    const folded = answered(before, after, {
      [ID(1)]: [
        step('pending', TEN - 120, 'MERGE_ITEM_NOW_READY'),
        step('testing', TEN - 60),
        step('pending', TEN + 10, 'PREREQUISITE_MERGE_ITEM_FAILED'),
        step('testing', TEN + 20),
      ],
    });
    expect(folded.history.restarts).toEqual(new Map([['PREREQUISITE_MERGE_ITEM_FAILED', 1]]));
    // The polls saw testing both times and counted nothing.
    expect(pairs(folded.transitions as readonly { from: string; to: string }[])).toEqual([
      'testing->pending',
      'pending->testing',
    ]);
    // Nothing waits, failed or was cancelled: the history holds the shared empty map for each.
    expect(folded.history.asked).toBe(NO_ENTRIES);
    expect(folded.history.failed).toBe(NO_ENTRIES);
    expect(folded.history.cancelled).toBe(NO_ENTRIES);
  });

  it('leaves out the transition the polls counted: the last into the state the later poll saw', () => {
    // pending → testing → pending → testing → tests_passed between two polls: the polls counted
    // pending->tests_passed once; the history adds the four steps but the last.
    const before = polled(TEN, [[1, 'pending', TEN - 60]]);
    const after = polled(TEN + 30, [[1, 'tests_passed', TEN + 25]]);
    const folded = answered(before, after, {
      [ID(1)]: [
        step('pending', TEN - 60, 'MERGE_ITEM_NOW_READY'),
        step('testing', TEN + 5),
        step('pending', TEN + 10, 'SKIP_THE_LINE_INTERRUPTED'),
        step('testing', TEN + 15),
        step('testsPassed', TEN + 25, 'TEST_RUN_PASSED'),
      ],
    });
    expect(pairs(folded.transitions as readonly { from: string; to: string }[])).toEqual([
      'pending->testing',
      'testing->pending',
      'pending->testing',
    ]);
    expect(folded.history.restarts).toEqual(new Map([['SKIP_THE_LINE_INTERRUPTED', 1]]));
  });

  it('counts a departed PR up to the end of its stay: its reason, not its final transition again', () => {
    const before = polled(TEN, [
      [1, 'testing', TEN - 60],
      [2, 'not_ready', TEN - 60],
    ]);
    const after = polled(TEN + 30, []);
    const folded = answered(before, after, {
      [ID(1)]: [
        step('testing', TEN - 60),
        step('pendingFailure', TEN + 5),
        step('failed', TEN + 10, 'TEST_RUN_REQUIRED_STATUS_FAILED'),
        // Submitted again later: another stay, not this window's.
        step('notReady', TEN + 40, 'USER_REQUESTED'),
      ],
      [ID(2)]: [step('notReady', TEN - 60, 'USER_REQUESTED'), step('cancelled', TEN + 20, null)],
    });
    expect(folded.history.failed).toEqual(new Map([['TEST_RUN_REQUIRED_STATUS_FAILED', 1]]));
    // A null reason is counted as unknown.
    expect(folded.history.cancelled).toEqual(new Map([['unknown', 1]]));
    // The polls count testing->failed and not_ready->cancelled from the exit reads.
    expect(pairs(folded.transitions as readonly { from: string; to: string }[])).toEqual([
      'testing->pending_failure',
    ]);
  });

  it('forgets what it counted of a stay that concluded, and counts its failure once when the PR is back and asked for again', () => {
    // #1 fails between two polls; #2 goes on testing (its restart stays remembered).
    const before = polled(TEN, [
      [1, 'testing', TEN - 60],
      [2, 'testing', TEN - 60],
    ]);
    const gone = polled(TEN + 30, [[2, 'pending', TEN + 15]]);
    const failure = [step('testing', TEN - 60), step('failed', TEN + 10, 'TEST_RUN_TIMEOUT')];
    const restart = [
      step('testing', TEN - 60),
      step('pending', TEN + 15, 'PREREQUISITE_MERGE_ITEM_FAILED'),
    ];
    const first = answered(before, gone, { [ID(1)]: failure, [ID(2)]: restart });
    expect(first.history.failed).toEqual(new Map([['TEST_RUN_TIMEOUT', 1]]));
    // "When the entry entered this state": #1's entry ended; nothing waits for it any more.
    expect([...first.history.counted.keys()]).toEqual([ID(2)]);
    // Submitted again at TEN + 50, testing at TEN + 70: its history still lists the failure.
    const back = polled(TEN + 60, [[1, 'pending', TEN + 50]]);
    const testing = polled(TEN + 90, [[1, 'testing', TEN + 70]]);
    const again = answered(
      back,
      testing,
      {
        [ID(1)]: [
          ...failure,
          step('pending', TEN + 50, 'USER_REQUESTED'),
          step('testing', TEN + 70),
        ],
      },
      first.history,
    );
    expect(again.history.failed).toEqual(new Map([['TEST_RUN_TIMEOUT', 1]]));
    expect(again.history.restarts).toEqual(new Map([['PREREQUISITE_MERGE_ITEM_FAILED', 1]]));
  });

  it('keeps a window a read made before it was asked waiting, and counts a transition read twice once', () => {
    const before = polled(TEN, [[1, 'testing', TEN - 60]]);
    const after = polled(TEN + 30, [[1, 'pending', TEN + 10]]);
    const timeline = [
      step('testing', TEN - 60),
      step('pending', TEN + 10, 'MANUAL_PUSH_TO_TARGET_BRANCH'),
    ];
    const early = answered(before, after, { [ID(1)]: timeline }, EMPTY_ENTRY_HISTORY, TEN + 29);
    expect(early.history.restarts.size).toBe(0);
    expect(early.history.asked.get(ID(1))).toHaveLength(1);
    const once = answered(before, after, { [ID(1)]: timeline });
    const twice = answered(before, after, { [ID(1)]: timeline }, once.history);
    expect(twice.history.restarts).toEqual(new Map([['MANUAL_PUSH_TO_TARGET_BRANCH', 1]]));
    expect(twice.transitions).toEqual([]);
  });

  it('keeps 20 reasons per family as labels and counts the rest as other', () => {
    const before = polled(
      TEN,
      Array.from({ length: 22 }, (_, index) => [index + 1, 'pending', TEN - 60] as const),
    );
    const after = polled(TEN + 30, []);
    const timelines = Object.fromEntries(
      Array.from({ length: 22 }, (_, index) => [
        ID(index + 1),
        [step('pending', TEN - 60), step('cancelled', TEN + 10, `REASON_${String(index + 1)}`)],
      ]),
    );
    const { cancelled } = answered(before, after, timelines).history;
    expect(cancelled.size).toBe(21);
    expect(cancelled.get('REASON_20')).toBe(1);
    expect(cancelled.get('REASON_21')).toBeUndefined();
    expect(cancelled.get('other')).toBe(2);
  });

  it('counts a reason Trunk did not give as unknown, however many reasons are named', () => {
    // "a null or unknown reason counts as `unknown`": 20 named cancellation reasons, then one
    // without a reason, and one without a reason before any.
    const before = polled(
      TEN,
      Array.from({ length: 22 }, (_, index) => [index + 1, 'pending', TEN - 60] as const),
    );
    const after = polled(TEN + 30, []);
    const reasonOf = (number: number) =>
      number === 1 || number === 22 ? null : `REASON_${String(number)}`;
    const timelines = Object.fromEntries(
      Array.from({ length: 22 }, (_, index) => [
        ID(index + 1),
        [step('pending', TEN - 60), step('cancelled', TEN + 10, reasonOf(index + 1))],
      ]),
    );
    const { cancelled } = answered(before, after, timelines).history;
    expect(cancelled.get('unknown')).toBe(2);
    expect(cancelled.get('other')).toBeUndefined();
    expect(cancelled.size).toBe(21);
  });

  it('caps failure reasons at 20 together with the reasons the webhook events counted', () => {
    // The events counted 15 reasons (and some `other`); 8 PRs then fail in their histories, in
    // the order the earlier poll listed them.
    const eventReasons = new Map([
      ...Array.from({ length: 15 }, (_, i): [string, number] => [`EVENT_${String(i + 1)}`, 1]),
      ['other', 4],
    ]);
    const reasons = ['H_1', 'H_2', 'H_3', 'H_4', 'H_5', 'H_6', 'EVENT_3', 'H_7'];
    const before = polled(
      TEN,
      reasons.map((_, index) => [index + 1, 'testing', TEN - 60] as const),
    );
    const after = polled(TEN + 30, []);
    const timelines = Object.fromEntries(
      reasons.map((reason, index) => [
        ID(index + 1),
        [step('testing', TEN - 60), step('failed', TEN + 10, reason)],
      ]),
    );
    const folded = answered(before, after, timelines, EMPTY_ENTRY_HISTORY, TEN + 31, eventReasons);
    // H_1 to H_5 make 20 named; H_6 and H_7 are `other`; EVENT_3, named by the events, keeps its own.
    expect(folded.history.failed).toEqual(
      new Map([
        ['H_1', 1],
        ['H_2', 1],
        ['H_3', 1],
        ['H_4', 1],
        ['H_5', 1],
        ['other', 2],
        ['EVENT_3', 1],
      ]),
    );
  });

  it('leaves a failure a webhook event counted to the event, and the event one the history counted', () => {
    const before = polled(TEN, [
      [1, 'testing', TEN - 60],
      [2, 'testing', TEN - 60],
    ]);
    const after = polled(TEN + 30, []);
    const evented = recordEventFailure(EMPTY_ENTRY_HISTORY, 1, TEN + 10, TEN + 11);
    const folded = answered(
      before,
      after,
      {
        [ID(1)]: [step('testing', TEN - 60), step('failed', TEN + 10, 'TEST_RUN_TIMEOUT')],
        [ID(2)]: [step('testing', TEN - 60), step('failed', TEN + 12, 'TEST_RUN_TIMEOUT')],
      },
      evented,
    );
    expect(folded.history.failed).toEqual(new Map([['TEST_RUN_TIMEOUT', 1]]));
    expect(failureCounted(folded.history, 2, TEN + 12, 'event')).toBe(true);
    // A failure of #2 hours later is another failure.
    expect(failureCounted(folded.history, 2, TEN + 3600, 'event')).toBe(false);
  });

  it('counts two failures of one PR 90 s apart twice, and meets an event with one failure only', () => {
    // An eviction loop: #1 fails testing, is submitted again 30 s later, fails again at +90 s.
    // "changedAt: When the entry entered this state": two entries into `failed`, two failures.
    const before = polled(TEN, [[1, 'testing', TEN - 60]]);
    const after = polled(TEN + 120, [[1, 'not_ready', TEN + 115]]);
    const timeline = [
      step('testing', TEN - 60),
      step('pendingFailure', TEN + 5),
      step('failed', TEN + 10, 'TEST_RUN_REQUIRED_STATUS_FAILED'),
      step('notReady', TEN + 40, 'USER_REQUESTED'),
      step('pending', TEN + 45, 'MERGE_ITEM_NOW_READY'),
      step('testing', TEN + 50),
      step('pendingFailure', TEN + 95),
      step('failed', TEN + 100, 'TEST_RUN_REQUIRED_STATUS_FAILED'),
      step('notReady', TEN + 115, 'USER_REQUESTED'),
    ];
    const alone = answered(before, after, { [ID(1)]: timeline });
    expect(alone.history.failed).toEqual(new Map([['TEST_RUN_REQUIRED_STATUS_FAILED', 2]]));
    // The first failure's webhook event came first: the history counts only the second.
    const evented = recordEventFailure(EMPTY_ENTRY_HISTORY, 1, TEN + 10, TEN + 11);
    const met = answered(before, after, { [ID(1)]: timeline }, evented);
    expect(met.history.failed).toEqual(new Map([['TEST_RUN_REQUIRED_STATUS_FAILED', 1]]));
    // The second failure's event, late, meets the history's count; a third failure is new.
    expect(failureCounted(met.history, 1, TEN + 100, 'event')).toBe(true);
    const late = recordEventFailure(met.history, 1, TEN + 100, TEN + 130);
    expect(failureCounted(late, 1, TEN + 100, 'event')).toBe(false);
  });
});

const OPTIONS: QueueFlowOptions = {
  maxGapSeconds: 600,
  lookupRetrySeconds: 600,
  intervalSeconds: 30,
  webhooks: false,
};

/**
 * The transitions both witnesses count between two polls, as `from->to`: the poll's diff (with the
 * exit reads' `lookups` and `resubmissions`) and the history of the windows it asked for.
 */
function bothWitnesses(
  before: MergeQueueSnapshot,
  after: MergeQueueSnapshot,
  timelines: Record<string, readonly EntryTransition[]>,
  exitReads: {
    lookups?: ReadonlyMap<number, ExitLookup>;
    resubmissions?: ReadonlyMap<number, Resubmission>;
  } = {},
) {
  const resubmissions = exitReads.resubmissions ?? new Map<number, Resubmission>();
  const ledger = startQueueFlow(before);
  const polledFlow = advanceQueueFlow(
    ledger,
    after,
    exitReads.lookups ?? new Map(),
    OPTIONS,
    resubmissions,
  );
  const windows = withPolledTransitions(
    changedWindows(before, after),
    ledger,
    after,
    resubmissions,
  );
  const answers = new Map(
    Object.entries(timelines).map(([id, steps]): [string, AnsweredTimeline] => [
      id,
      { readStartedAt: after.takenAt + 1, transitions: steps },
    ]),
  );
  const folded = foldAnswers(
    askWindows(EMPTY_ENTRY_HISTORY, windows).history,
    (id) => answers.get(id),
    after.takenAt + 1,
    new Map(),
  );
  const counts = transitions(polledFlow);
  for (const { from, to } of folded.transitions as readonly { from: string; to: string }[]) {
    counts[`${from}->${to}`] = (counts[`${from}->${to}`] ?? 0) + 1;
  }
  return { counts, history: folded.history };
}

describe('each transition between two polls once, whichever witness counts it', () => {
  // testing → failed → notReady → pending → testing between two polls that both saw `testing`:
  // "a failure and a resubmission", five states entered, four transitions.
  const failedAndBack = [
    step('testing', TEN - 60),
    step('failed', TEN + 5, 'START_TEST_RUN_MERGE_CONFLICT'),
    step('notReady', TEN + 8, 'USER_REQUESTED'),
    step('pending', TEN + 10, 'MERGE_ITEM_NOW_READY'),
    step('testing', TEN + 20),
  ];
  const fourSteps = {
    'testing->failed': 1,
    'failed->not_ready': 1,
    'not_ready->pending': 1,
    'pending->testing': 1,
  };

  it('a failure and a resubmission the exit reads have not found yet: the history counts all four', () => {
    const before = polled(TEN, [[1, 'testing', TEN - 60]]);
    const after = polled(TEN + 30, [[1, 'testing', TEN + 20]]);
    const { counts, history } = bothWitnesses(before, after, { [ID(1)]: failedAndBack });
    expect(counts).toEqual(fourSteps);
    expect(history.failed).toEqual(new Map([['START_TEST_RUN_MERGE_CONFLICT', 1]]));
  });

  it.each([
    [
      true,
      'ended from the state the earlier poll saw: the polls count the failure, the history the rest',
    ],
    [false, 'not knowing the state it ended from: the history counts all four'],
  ])("the same found by this poll's exit read (fromPolledState %s), %s", (fromPolledState) => {
    const before = polled(TEN, [[1, 'testing', TEN - 60]]);
    const after = polled(TEN + 30, [[1, 'testing', TEN + 20]]);
    const resubmissions = new Map([
      [1, { outcome: 'failed' as const, leftAt: TEN + 5, fromPolledState }],
    ]);
    const { counts } = bothWitnesses(before, after, { [ID(1)]: failedAndBack }, { resubmissions });
    expect(counts).toEqual(fourSteps);
  });

  it('a failure and a resubmission the later poll sees in `pending`: its pair stands for the last step into pending', () => {
    const before = polled(TEN, [[1, 'testing', TEN - 60]]);
    const after = polled(TEN + 30, [[1, 'pending', TEN + 10]]);
    const { counts } = bothWitnesses(before, after, {
      [ID(1)]: failedAndBack.slice(0, 4),
    });
    // The polls' testing->pending is no step of the timeline; it stands for not_ready->pending.
    expect(counts).toEqual({
      'testing->failed': 1,
      'failed->not_ready': 1,
      'testing->pending': 1,
    });
  });

  it("a PR gone whose failure Trunk's clock dates after the poll that saw it gone: its reason still counts", () => {
    // Trunk's clock 20 s ahead of the exporter's: the failure is dated TEN + 50, after the poll at
    // TEN + 30 that no longer listed the PR.
    const before = polled(TEN, [[1, 'testing', TEN - 60]]);
    const after = polled(TEN + 30, []);
    const lookups = new Map([[1, { outcome: 'failed' as const, leftAt: TEN + 30 }]]);
    const timeline = [step('testing', TEN - 60), step('failed', TEN + 50, 'TEST_RUN_TIMEOUT')];
    const { counts, history } = bothWitnesses(before, after, { [ID(1)]: timeline }, { lookups });
    expect(counts).toEqual({ 'testing->failed': 1 });
    expect(history.failed).toEqual(new Map([['TEST_RUN_TIMEOUT', 1]]));
  });

  it('a PR that failed, was submitted again and failed again between two polls, then gone: both failures by reason, each step once', () => {
    const before = polled(TEN, [[1, 'testing', TEN - 60]]);
    const after = polled(TEN + 30, []);
    const timeline = [
      step('testing', TEN - 60),
      step('failed', TEN + 2, 'TEST_RUN_TIMEOUT'),
      step('notReady', TEN + 4, 'USER_REQUESTED'),
      step('pending', TEN + 6, 'MERGE_ITEM_NOW_READY'),
      step('testing', TEN + 8),
      step('failed', TEN + 20, 'TEST_RUN_REQUIRED_STATUS_FAILED'),
    ];
    // The exit reads: it left failed (its latest conclusion).
    const lookups = new Map([[1, { outcome: 'failed' as const, leftAt: TEN + 20 }]]);
    const { counts, history } = bothWitnesses(before, after, { [ID(1)]: timeline }, { lookups });
    expect(counts).toEqual({
      'testing->failed': 2,
      'failed->not_ready': 1,
      'not_ready->pending': 1,
      'pending->testing': 1,
    });
    expect(history.failed).toEqual(
      new Map([
        ['TEST_RUN_TIMEOUT', 1],
        ['TEST_RUN_REQUIRED_STATUS_FAILED', 1],
      ]),
    );
  });
});

/**
 * Two polls through API v2 with the history read on: the transition the diff saw between them is
 * held for its window (holdForHistory), which the read answers with `timelines` at `now` (none
 * answered when empty). Returns the ledger's transitions, the ones the fold counted, and the history.
 */
function heldForHistory(
  before: MergeQueueSnapshot,
  after: MergeQueueSnapshot,
  timelines: Record<string, readonly EntryTransition[]>,
  now: number,
  lookups: ReadonlyMap<number, ExitLookup> = new Map(),
) {
  const ledger = startQueueFlow(before);
  const { heldTransitions, ...polledFlow } = advanceQueueFlow(ledger, after, lookups, {
    ...OPTIONS,
    holdForHistory: true,
  });
  const windows = withPolledTransitions(changedWindows(before, after), ledger, after, new Map());
  const asked = askWindows(EMPTY_ENTRY_HISTORY, windows);
  const held = holdTransitions(asked.history, heldTransitions ?? [], after.takenAt);
  const answers = new Map(
    Object.entries(timelines).map(([id, steps]): [string, AnsweredTimeline] => [
      id,
      { readStartedAt: after.takenAt + 1, transitions: steps },
    ]),
  );
  const folded = foldAnswers(held.history, (id) => answers.get(id), now, new Map());
  const counts = transitions(polledFlow);
  for (const { from, to } of [...held.transitions, ...folded.transitions] as readonly {
    from: string;
    to: string;
  }[]) {
    counts[`${from}->${to}`] = (counts[`${from}->${to}`] ?? 0) + 1;
  }
  return { polledFlow, polled: transitions(polledFlow), counts, history: folded.history };
}

describe('the transition a poll saw, held for its history', () => {
  // testing → testsPassed → pending between two polls that saw testing, then pending: the polls'
  // testing->pending is no transition of the timeline ("When the entry entered this state").
  const before = polled(TEN, [[1, 'testing', TEN - 60]]);
  const after = polled(TEN + 30, [[1, 'pending', TEN + 10]]);
  const timeline = [
    step('testing', TEN - 60),
    step('testsPassed', TEN + 5, 'TEST_RUN_PASSED'),
    step('pending', TEN + 10, 'PREREQUISITE_MERGE_ITEM_MANUALLY_MERGED'),
  ];

  it('counts the steps of its answered window with their own states, the time in testing observed at once', () => {
    const {
      polled: atOnce,
      counts,
      polledFlow,
    } = heldForHistory(before, after, { [ID(1)]: timeline }, TEN + 31);
    expect(atOnce).toEqual({});
    expect(polledFlow.counts.timeInState.get('testing')?.count).toBe(1);
    expect(counts).toEqual({ 'testing->tests_passed': 1, 'tests_passed->pending': 1 });
  });

  it('counts a departure from the steps of its window: no testing->failed that never happened', () => {
    const gone = polled(TEN + 30, []);
    const lookups = new Map([[1, { outcome: 'failed' as const, leftAt: TEN + 10 }]]);
    const failing = [
      step('testing', TEN - 60),
      step('pendingFailure', TEN + 5),
      step('failed', TEN + 10, 'TEST_RUN_REQUIRED_STATUS_FAILED'),
    ];
    const { counts } = heldForHistory(before, gone, { [ID(1)]: failing }, TEN + 31, lookups);
    expect(counts).toEqual({ 'testing->pending_failure': 1, 'pending_failure->failed': 1 });
  });

  it('counts it once, as the poll saw it, when its window is given up unanswered', () => {
    const waiting = heldForHistory(before, after, {}, TEN + 30 + ENTRY_HISTORY_KEEP_SECONDS);
    expect(waiting.counts).toEqual({});
    const givenUp = foldAnswers(
      waiting.history,
      () => undefined,
      TEN + 31 + ENTRY_HISTORY_KEEP_SECONDS,
      new Map(),
    );
    expect(pairs(givenUp.transitions as readonly { from: string; to: string }[])).toEqual([
      'testing->pending',
    ]);
    expect(givenUp.history.asked.size).toBe(0);
    const later = foldAnswers(
      givenUp.history,
      () => undefined,
      TEN + 2 * ENTRY_HISTORY_KEEP_SECONDS,
      new Map(),
    );
    expect(later.transitions).toEqual([]);
  });

  it('counts it once, as the poll saw it, when the read stops answering (off or stale); an answer after counts the rest', () => {
    const { history } = heldForHistory(before, after, {}, TEN + 31);
    const unanswered = countHeldTransitions(history);
    expect(pairs(unanswered.transitions as readonly { from: string; to: string }[])).toEqual([
      'testing->pending',
    ]);
    expect(countHeldTransitions(unanswered.history).transitions).toEqual([]);
    const answered = foldAnswers(
      unanswered.history,
      () => ({ readStartedAt: TEN + 40, transitions: timeline }),
      TEN + 41,
      new Map(),
    );
    expect(pairs(answered.transitions as readonly { from: string; to: string }[])).toEqual([
      'testing->tests_passed',
    ]);
  });
});
