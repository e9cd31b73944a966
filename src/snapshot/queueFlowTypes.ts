// What the exporter derives about a merge queue's flow from consecutive successful polls: the
// cumulative counts the metrics layer renders, and what it must remember of the last poll to diff
// the next one against. Every value is immutable; each poll produces a new QueueFlow.
import type { HistogramCounts } from './histogram.js';
import type { ExitOutcome } from './exitOutcome.js';
import type { EntryHistory } from './entryHistoryTypes.js';
import type { ExitStays } from './prStayTypes.js';

export { EXIT_OUTCOMES, type ExitOutcome } from './exitOutcome.js';

/**
 * Distinct state values outside the documented ones that each flow family of one queue keeps as
 * label values; later new ones count as OTHER_STATE. A queue inventing a state per poll would
 * otherwise add series for ever.
 */
export const MAX_UNKNOWN_STATES = 20;

/** The label value of the unknown states past MAX_UNKNOWN_STATES. */
export const OTHER_STATE = 'other';

/**
 * Reads of concluded entries (API v2) in a row that may not list a departed PR before it is taken
 * to be in a queue-entry state Trunk added (QueueFlow.absent).
 */
export const MAX_EXIT_LOOKUP_ATTEMPTS = 3;

/**
 * What getSubmittedPullRequest (or API v2's concluded entries) said about a PR that left; `retry`
 * when the lookup failed; `not_concluded` when a read of API v2's concluded entries succeeded and
 * did not list it: it left the live entries for a state Trunk added, or has yet to be recorded.
 */
export type ExitLookup =
  | {
      readonly outcome: ExitOutcome;
      /** Unix seconds of its final state change, when the answer had a final state and a timestamp. */
      readonly leftAt: number | undefined;
    }
  | 'retry'
  | 'not_concluded';

/**
 * How long a PR that left the live entries without concluding (API v2) is remembered: back within
 * it, its stay goes on; concluded within it, its exit counts with the time it entered.
 */
export const ABSENT_PULL_REQUEST_KEEP_SECONDS = 6 * 3600;

/** At most this many such PRs are remembered per queue (the oldest are forgotten first). */
export const MAX_ABSENT_PULL_REQUESTS = 10_000;

/** A pull request as the last successful poll saw it. */
export interface TrackedPullRequest {
  readonly number: number;
  readonly state: string;
  /** Best estimate of when it entered the queue (unix seconds). */
  readonly enteredAt: number;
  /** When it entered its current state: its stateChangedAt, else the poll that first saw the state. */
  readonly stateSince: number;
  /** When the last poll that saw it finished. */
  readonly lastSeenAt: number;
  /**
   * Listed in a final state by the ledger's first poll (API v1 may list a PR that left): it left
   * before the exporter watched the queue, so its departure counts nothing.
   */
  readonly concludedBeforeStart?: true | undefined;
  /**
   * In its state since the ledger's first poll listed it: the stay it is part of began before the
   * exporter watched the queue, and so did any conclusion before that stay.
   */
  readonly sinceFirstPoll?: true | undefined;
}

/** A pull request that left but whose final state could not be looked up yet. */
export interface DepartedPullRequest extends TrackedPullRequest {
  /** When the first poll that no longer saw it finished. */
  readonly goneAt: number;
  /** Lookups that failed or did not find it concluded so far. */
  readonly failedLookups: number;
  /** The last lookup was `not_concluded`: it never concluded, so if it comes back its stay goes on. */
  readonly notConcluded?: boolean;
}

/** One `from` → `to` pair of trunk_merge_queue_state_transitions_total. */
export interface TransitionCount {
  readonly from: string;
  readonly to: string;
  readonly count: number;
}

/** Cumulative counters and histograms of one merge queue since the exporter started watching it. */
export interface QueueFlowCounts {
  readonly exited: ReadonlyMap<ExitOutcome, number>;
  /** Keyed by transitionKey(from, to). */
  readonly transitions: ReadonlyMap<string, TransitionCount>;
  readonly timeInQueue: ReadonlyMap<ExitOutcome, HistogramCounts>;
  /** Keyed by the state that was left. */
  readonly timeInState: ReadonlyMap<string, HistogramCounts>;
  /** Seconds per queue state. */
  readonly queueStateSeconds: ReadonlyMap<string, number>;
  /** Failed exits of a pull request within a day of an earlier failed exit of it (flow/evictions.ts). */
  readonly repeatedFailures: number;
}

/** The flow ledger of one merge queue: its counts, and the last poll the next one is compared with. */
export interface QueueFlow {
  readonly counts: QueueFlowCounts;
  /**
   * takenAt of the poll that started the ledger (exporter's clock): what happened before it is not
   * counted, whichever witness tells it later (a webhook event Svix redelivers after a restart).
   * Undefined for a ledger built without one (tests).
   */
  readonly startedAt?: number | undefined;
  /** takenAt of the last successful poll folded in. */
  readonly lastPollAt: number;
  /** Queue state at that poll. */
  readonly lastQueueState: string;
  /** Pull requests in the queue at that poll, by number. */
  readonly tracked: ReadonlyMap<number, TrackedPullRequest>;
  /** Pull requests that left and wait for a successful lookup, by number. */
  readonly departed: ReadonlyMap<number, DepartedPullRequest>;
  /**
   * API v2: pull requests that left the live entries and that no read of concluded entries listed
   * in MAX_EXIT_LOOKUP_ATTEMPTS polls (a state Trunk added); not counted as exits. Each is kept
   * ABSENT_PULL_REQUEST_KEEP_SECONDS from `goneAt`, by number.
   */
  readonly absent?: ReadonlyMap<number, DepartedPullRequest> | undefined;
  /**
   * Each PR's latest stay and counted exit, whether webhooks are on or not: what keeps an exit's
   * witnesses (event, poll, read of concluded entries) from counting it twice, across reloads too.
   */
  readonly exitStays?: ExitStays | undefined;
  /** Through API v2: where the reads of the queue's concluded entries have got to. */
  readonly concludedReads?: ConcludedReads | undefined;
  /**
   * Unix seconds of the latest merge known (flow/lastMerge.ts): from polls, events and concluded
   * entries; through API v2 also read when the ledger starts. Undefined until one is known.
   */
  readonly lastMergeAt?: number | undefined;
  /** Pull request number → when its latest counted failed exit left, for a day (flow/evictions.ts). */
  readonly failedExits?: ReadonlyMap<number, number> | undefined;
  /** API v2 with `reads.queueEntryHistory`: what the queue-entry histories counted (flow/entryHistory.ts). */
  readonly entryHistory?: EntryHistory | undefined;
  /**
   * The transitions this poll's diff held for the queue-entry history (FlowEvent.heldFor), until
   * the poll's history update gives each to its window or counts it.
   */
  readonly heldTransitions?: readonly HeldTransition[] | undefined;
}

/** A transition the polls saw that waits for its pull request's queue-entry history. */
export interface HeldTransition {
  readonly prNumber: number;
  readonly from: string;
  readonly to: string;
}

/**
 * Where a queue's reads of concluded entries (API v2) have got to: the next read continues from
 * the last one, so an entry that came and went between two polls is counted once.
 */
export interface ConcludedReads {
  /**
   * Unix seconds (Trunk's clock once a read saw an entry): an entry concluded at or after it that
   * no read has seen is an exit still to count; one concluded before it was a previous read's.
   */
  readonly countFrom: number;
  /** Entries concluded at or after countFrom that a read saw, by entryKey(), with their conclusion time. */
  readonly seen: ReadonlyMap<string, number>;
  /**
   * Pull request number → when the testing of its latest conclusion a read knows of had ended, on
   * Trunk's clock: a concluded row's stateChangedAt, or the end of the testing that ended an entry
   * listed resubmitted (v2Resubmissions.ts). Its entry concluded since only if it was tested since.
   */
  readonly lastConclusions: ReadonlyMap<number, number>;
  /** Successful polls since the last successful read. */
  readonly pollsSinceRead: number;
  /**
   * Unix seconds (the exporter's clock): the latest read that gave its window up, its walk past
   * its page bound. No later read reaches back before it (less the window's slack), and a departed
   * PR last seen before it that a read does not list may have concluded in that window: `retry`.
   */
  readonly abandonedAt?: number;
}

/**
 * A PR the polls list on and on whose queue entry concluded and was submitted again between them
 * (API v2: a read of concluded entries lists it in a live state). Its stay ends there, and a new
 * one begins.
 */
export interface Resubmission {
  /** How the entry ended, as Trunk's testing results tell (`entryConclusion`), else `unknown`. */
  readonly outcome: ExitOutcome;
  /** Best estimate of when it concluded (unix seconds): the earliest time it can have. */
  readonly leftAt: number;
  /** The state the previous poll saw was the ended stay's: its end is a transition from it. */
  readonly fromPolledState: boolean;
}

/** A concluded entry that no poll saw leave (it entered and left between two polls). */
export interface ConcludedExit {
  readonly prNumber: number;
  readonly outcome: ExitOutcome;
  /** Its entry's createdAt, else the last poll before it (unix seconds). */
  readonly enteredAt: number;
  /** Its entry's stateChangedAt. */
  readonly leftAt: number;
}

/** What one poll adds to the counts. */
export type FlowEvent =
  | {
      readonly kind: 'exit';
      readonly prNumber: number;
      readonly outcome: ExitOutcome;
      /** Best estimate of when it left (unix seconds). */
      readonly leftAt: number;
      readonly secondsInQueue: number;
    }
  | {
      readonly kind: 'transition';
      readonly from: string;
      readonly to: string;
      /**
       * Time in `from`, observed in the time-in-state histogram; undefined for a transition read
       * from a queue-entry history, which counts in the transitions alone.
       */
      readonly secondsInFrom: number | undefined;
      /**
       * The pull request whose queue-entry history will tell this transition (API v2 with
       * `reads.queueEntryHistory`): observed in the time-in-state histogram now, counted in the
       * transitions by its window of the history (QueueFlow.heldTransitions).
       */
      readonly heldFor?: number | undefined;
    }
  | { readonly kind: 'queue_state'; readonly state: string; readonly seconds: number };

/** Map key of a transition. */
export function transitionKey(from: string, to: string): string {
  return `${from}\u0000${to}`;
}
