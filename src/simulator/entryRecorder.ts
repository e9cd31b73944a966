// Why a merge queue's entries move, as Trunk's queue-entry history and verification runs tell it:
// the queue model reports each transition with its cause, and this turns the cause into the
// definition's reason (null for `testing` and `pendingFailure`, which carry none, and now and then
// for the others, as for entries recorded before Trunk kept one), the entries it concerns and the
// run it belongs to. It draws from a stream of its own, so the queue's own draws stay as they were.
import {
  createEntryHistory,
  type EntryHistory,
  type EntryDetails as Details,
  type RestartReason,
  type TransitionReason,
} from './entryHistory.js';
import {
  closedByItsAuthor,
  type PullRequestState,
  type SimulatedPullRequest,
} from './pullRequest.js';
import type { MergeQueueSettings } from './queueSettings.js';
import type { Random } from './random.js';
import type { TestingOutcome } from './testingHistory.js';
import { createVerificationRuns, type VerificationRuns } from './verificationRuns.js';
import { isBot, pickPerson } from './vocabulary.js';

/** Share of transitions that would carry a reason but are recorded without one. */
const REASONLESS_SHARE = 0.01;
/** Share of submissions a Trunk admin made for the author. */
const ADMIN_SUBMISSIONS = 0.03;
/** Share of restarts without a given cause that a person asked for (the rest: the API). */
const RESTARTS_BY_A_PERSON = 0.6;
/** Shares of the causes of other cancellations. */
const CANCELLED_BY_AUTHOR = 0.7;
const CANCELLED_BY_A_PUSH = 0.15;
const CANCELLED_AS_DRAFT = 0.07;
/** Shares of merge conflicts Trunk traced to the target branch, to the entry ahead. */
const CONFLICT_ON_TARGET_BRANCH = 0.4;
const CONFLICT_WITH_ENTRY_AHEAD = 0.3;

/** The states of entries in the line: ready, testing, passed or failing, not yet out. */
const IN_LINE: readonly PullRequestState[] = [
  'pending',
  'testing',
  'tests_passed',
  'pending_failure',
];

/** Why the flow moved a pull request, when the state it moves to does not say it alone. */
export interface TransitionCause {
  readonly reason: RestartReason;
  /** The pull request ahead whose failure forced it (PREREQUISITE_MERGE_ITEM_FAILED). */
  readonly prerequisite?: SimulatedPullRequest | undefined;
}

/** What the recorder needs of its queue. */
export interface RecordedQueue {
  /** The stream of the queue's records (not the queue's own). */
  readonly random: Random;
  readonly settings: MergeQueueSettings;
  /** In queue order. */
  readonly active: readonly SimulatedPullRequest[];
  /** The queue's not-ready timeout (v2's `notReadyTimeoutMinutes`), in seconds. */
  readonly notReadyTimeoutSeconds: number;
  /** The required check a scripted incident fails every run on at `now`, if any. */
  failingCheck(now: number): string | undefined;
}

export interface EntryRecorder {
  readonly history: EntryHistory;
  readonly runs: VerificationRuns;
  /** `pr` was submitted (again) at `now`: it entered `not_ready`. */
  submitted(pr: SimulatedPullRequest, now: number): void;
  /**
   * `pr` moves from its current state to `to` at `now` (told before the move); a stretch of
   * testing that ends says how (`outcome`).
   */
  moving(
    pr: SimulatedPullRequest,
    to: PullRequestState,
    now: number,
    outcome: TestingOutcome | undefined,
    cause?: TransitionCause,
  ): void;
}

/** The recorder of one queue's entries and runs. */
export function createEntryRecorder(queue: RecordedQueue): EntryRecorder {
  const { random, active } = queue;
  const history = createEntryHistory();
  const runs = createVerificationRuns({ random, failingCheck: (now) => queue.failingCheck(now) });

  const oldestEnqueuedFirst = (a: SimulatedPullRequest, b: SimulatedPullRequest) =>
    a.queueSequence - b.queueSequence;
  /** The entries ahead of `pr` in the queue in one of `states`, oldest-enqueued first. */
  const aheadOf = (pr: SimulatedPullRequest, states: readonly PullRequestState[]) => {
    const index = active.indexOf(pr);
    return active
      .filter((other, at) => at < index && states.includes(other.state))
      .sort(oldestEnqueuedFirst);
  };
  /** A person behind a transition of `pr`: its author, or someone else for a bot's. */
  const person = (pr: SimulatedPullRequest) => (isBot(pr.author) ? pickPerson(random) : pr.author);
  const recorded = (reason: TransitionReason): TransitionReason | null =>
    random.chance(REASONLESS_SHARE) ? null : reason;

  const submission = (pr: SimulatedPullRequest): Details => {
    if (isBot(pr.author)) return { reason: recorded('API_REQUESTED') };
    const admin = random.chance(ADMIN_SUBMISSIONS);
    return {
      reason: recorded(admin ? 'TRUNK_ADMIN_REQUESTED' : 'USER_REQUESTED'),
      actor: admin ? pickPerson(random) : pr.author,
    };
  };

  const restart = (
    pr: SimulatedPullRequest,
    from: PullRequestState,
    cause: TransitionCause | undefined,
  ): Details => {
    const inLine = aheadOf(pr, IN_LINE);
    if (from === 'not_ready') return { ahead: inLine, reason: recorded('MERGE_ITEM_NOW_READY') };
    const reason =
      cause?.reason ??
      (random.chance(RESTARTS_BY_A_PERSON)
        ? 'TESTS_RESTARTED_BY_USER'
        : 'TESTS_RESTARTED_BY_API_REQUEST');
    const { prerequisite } = cause ?? {};
    // The failed pull request ahead has left the queue, but it was queued behind it all the same.
    const ahead =
      prerequisite === undefined || inLine.includes(prerequisite)
        ? inLine
        : [...inLine, prerequisite].sort(oldestEnqueuedFirst);
    return {
      reason: recorded(reason),
      ahead,
      ...(prerequisite === undefined ? {} : { prerequisite }),
      ...(reason === 'TESTS_RESTARTED_BY_USER' ? { actor: person(pr) } : {}),
    };
  };

  const failure = (pr: SimulatedPullRequest, from: PullRequestState): Details => {
    if (from === 'testing' || from === 'pending_failure') {
      return { reason: recorded(pr.failureReason), run: runs.run(pr.testingRun.batch) };
    }
    if (from === 'tests_passed') return { reason: recorded('GITHUB_API_MERGE_PR_FAILED') };
    // Failing before any test run: the test branch could not be built.
    const roll = random.next();
    const entryAhead = aheadOf(pr, IN_LINE).at(-1);
    const conflictCulprit =
      roll < CONFLICT_ON_TARGET_BRANCH
        ? 'baseBranch'
        : roll < CONFLICT_ON_TARGET_BRANCH + CONFLICT_WITH_ENTRY_AHEAD
          ? (entryAhead ?? 'baseBranch')
          : undefined;
    return {
      reason: recorded('START_TEST_RUN_MERGE_CONFLICT'),
      ...(conflictCulprit === undefined ? {} : { conflictCulprit }),
    };
  };

  const cancellation = (pr: SimulatedPullRequest, from: PullRequestState, now: number): Details => {
    if (closedByItsAuthor(pr)) return { reason: recorded('PR_CLOSED') };
    if (from === 'not_ready' && !pr.readiness.doesBaseBranchMatch) {
      return { reason: recorded('PR_BASE_BRANCH_CHANGED') };
    }
    if (from === 'not_ready' && now - pr.stateChangedAt >= queue.notReadyTimeoutSeconds) {
      return { reason: recorded('NOT_READY_TIMEOUT_EXPIRED') };
    }
    const roll = random.next();
    if (roll < CANCELLED_BY_AUTHOR) {
      return { reason: recorded('USER_REQUESTED'), actor: person(pr) };
    }
    if (roll < CANCELLED_BY_AUTHOR + CANCELLED_BY_A_PUSH) {
      return { reason: recorded('PR_PUSHED_TO') };
    }
    if (roll < CANCELLED_BY_AUTHOR + CANCELLED_BY_A_PUSH + CANCELLED_AS_DRAFT) {
      return { reason: recorded('PR_CONVERTED_TO_DRAFT') };
    }
    return { reason: recorded('TRUNK_ADMIN_REQUESTED'), actor: pickPerson(random) };
  };

  const details = (
    pr: SimulatedPullRequest,
    from: PullRequestState,
    to: PullRequestState,
    now: number,
    cause: TransitionCause | undefined,
  ): Details => {
    switch (to) {
      case 'not_ready':
        return submission(pr);
      case 'pending':
        return restart(pr, from, cause);
      case 'testing': {
        const dependent = aheadOf(pr, ['testing', 'tests_passed']);
        const run = runs.start(pr, now, queue.settings.requiredStatuses, dependent);
        return { reason: null, run };
      }
      case 'tests_passed':
        return {
          reason: recorded('TEST_RUN_PASSED'),
          run: runs.run(pr.testingRun.batch),
          ahead: aheadOf(pr, ['testing', 'tests_passed', 'pending_failure']),
        };
      case 'pending_failure':
        return {
          reason: null,
          run: runs.run(pr.testingRun.batch),
          ahead: aheadOf(pr, ['testing', 'pending_failure']),
          eventualFailure: pr.failureReason,
        };
      case 'failed':
        return failure(pr, from);
      case 'cancelled':
        return cancellation(pr, from, now);
      case 'merged':
        return {
          reason: recorded(pr.forceEnqueued ? 'MERGE_GRAPH_DIRECT_MERGE' : 'MERGE_GRAPH_MERGE'),
        };
    }
  };

  return {
    history,
    runs,
    submitted(pr, now) {
      history.record(pr, 'not_ready', now, submission(pr));
    },
    moving(pr, to, now, outcome, cause) {
      const from = pr.state;
      if (from === 'testing' && outcome !== undefined) runs.end(pr, outcome, now);
      history.record(pr, to, now, details(pr, from, to, now, cause));
    },
  };
}
