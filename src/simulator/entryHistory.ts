// Every state change of a merge queue's entries and why it happened (v2's queue-entry history):
// recorded by the queue model as the world moves, kept while the queue remembers the pull request,
// at most ENTRY_HISTORY_TRANSITIONS per entry and none older than ENTRY_HISTORY_SECONDS.
import type { FailureReason, PullRequestState, SimulatedPullRequest } from './pullRequest.js';
import type { VerificationRun } from './verificationRuns.js';

/** Why an entry went (back) to `pending` from testing or a failure: what restarts its testing. */
export type RestartReason =
  | 'TESTS_RESTARTED_BY_USER'
  | 'TESTS_RESTARTED_BY_API_REQUEST'
  | 'MANUAL_PUSH_TO_TARGET_BRANCH'
  | 'PREREQUISITE_MERGE_ITEM_FAILED'
  | 'SKIP_THE_LINE_INTERRUPTED'
  | 'BISECTION_REQUIRED';

/**
 * The reasons the simulated engine gives, in the definition's vocabulary
 * (`QueueEntryStateTransition.reason`, an open set of which these are the ones the model causes).
 */
export type TransitionReason =
  // notReady: who submitted it
  | 'USER_REQUESTED'
  | 'TRUNK_ADMIN_REQUESTED'
  | 'API_REQUESTED'
  // pending: why it (re)entered the line
  | 'MERGE_ITEM_NOW_READY'
  | RestartReason
  // testsPassed
  | 'TEST_RUN_PASSED'
  // failed
  | FailureReason
  | 'START_TEST_RUN_MERGE_CONFLICT'
  | 'GITHUB_API_MERGE_PR_FAILED'
  // cancelled (and USER_REQUESTED, TRUNK_ADMIN_REQUESTED)
  | 'PR_CLOSED'
  | 'PR_BASE_BRANCH_CHANGED'
  | 'PR_PUSHED_TO'
  | 'PR_CONVERTED_TO_DRAFT'
  | 'NOT_READY_TIMEOUT_EXPIRED'
  // merged
  | 'MERGE_GRAPH_MERGE'
  | 'MERGE_GRAPH_DIRECT_MERGE';

/** One state change of an entry. */
export interface EntryTransition {
  /** Counts the entry's transitions from 1: the row's place in its timeline. */
  readonly sequence: number;
  readonly state: PullRequestState;
  /** Unix seconds. */
  readonly at: number;
  readonly reason: TransitionReason | null;
  /** The GitHub login of the person who caused it, when one did. */
  readonly actor?: string;
  /** The verification run it concerns. */
  readonly run?: VerificationRun | undefined;
  /** For a PREREQUISITE_* reason: the pull request ahead whose outcome forced it. */
  readonly prerequisite?: SimulatedPullRequest;
  /**
   * `pending`: the entries ahead it was queued behind; `testsPassed` and `pendingFailure`: the
   * entries ahead it waits for. Oldest-enqueued first.
   */
  readonly ahead?: readonly SimulatedPullRequest[];
  /** `pendingFailure`: the reason it will fail with. */
  readonly eventualFailure?: FailureReason;
  /** `failed` on a merge conflict: what the conflict was traced to, once Trunk found it. */
  readonly conflictCulprit?: SimulatedPullRequest | 'baseBranch';
}

/** What a transition records besides its place, state and time. */
export type EntryDetails = Omit<EntryTransition, 'sequence' | 'state' | 'at'>;

/** One entry's timeline, oldest first. */
export interface EntryTimeline {
  readonly pr: SimulatedPullRequest;
  readonly transitions: readonly EntryTransition[];
}

/** How far back an entry's transitions are kept: the window of v2's testing results. */
export const ENTRY_HISTORY_SECONDS = 45 * 86_400;
/** At most this many transitions per entry (an entry that keeps bouncing stays small). */
export const ENTRY_HISTORY_TRANSITIONS = 300;

export interface EntryHistory {
  /** The timeline of the pull request `id` (lowercase), if the queue remembers it. */
  timeline(id: string): EntryTimeline | undefined;
  /** Appends a transition of `pr` to `state` at `at` (unix seconds). */
  record(
    pr: SimulatedPullRequest,
    state: PullRequestState,
    at: number,
    details: EntryDetails,
  ): void;
  /** Drops the timeline of a pull request the queue no longer remembers. */
  forget(pr: SimulatedPullRequest): void;
}

/** An empty history. */
export function createEntryHistory(): EntryHistory {
  const timelines = new Map<string, { pr: SimulatedPullRequest; transitions: EntryTransition[] }>();
  return {
    timeline: (id) => timelines.get(id),
    record(pr, state, at, details) {
      let timeline = timelines.get(pr.id);
      if (timeline === undefined) {
        timeline = { pr, transitions: [] };
        timelines.set(pr.id, timeline);
      }
      const { transitions } = timeline;
      const sequence = (transitions.at(-1)?.sequence ?? 0) + 1;
      transitions.push({ sequence, state, at, ...details });
      while (
        transitions.length > ENTRY_HISTORY_TRANSITIONS ||
        (transitions[0] !== undefined && transitions[0].at < at - ENTRY_HISTORY_SECONDS)
      ) {
        transitions.shift();
      }
    },
    forget(pr) {
      timelines.delete(pr.id);
    },
  };
}
