// What the exporter has counted of a merge queue's queue-entry histories (API v2): exits by reason,
// restarts by cause, and what it must remember so that no transition and no failure counts twice.
// Kept in the queue's flow ledger (QueueFlow.entryHistory), which both the polls and the webhook
// events update, so either witness of a failure meets what the other counted, across reloads too.
import { NO_ENTRIES } from './noEntries.js';

/** Distinct reasons one queue keeps as label values per family; later new ones count as OTHER_REASON. */
export const MAX_REASONS_PER_FAMILY = 20;

/** The label value of the reasons past MAX_REASONS_PER_FAMILY. */
export const OTHER_REASON = 'other';

/** The label value of a transition without a reason ("`null` for `testing` and `pendingFailure`"). */
export const UNKNOWN_REASON = 'unknown';

/**
 * The label `reason` counts under in one of a queue's families whose counts are `counts`, beside
 * `alsoCounted` (the other witness's counts of the same family, for failures): UNKNOWN_REASON
 * always (no reason is not one of the reasons named), else its own while either names it or the
 * two together name fewer than MAX_REASONS_PER_FAMILY, else OTHER_REASON. The reasons named only
 * grow, so a reason once named stays named and one sent to OTHER_REASON stays there.
 */
export function reasonLabel(
  reason: string,
  counts: ReadonlyMap<string, number>,
  alsoCounted: ReadonlyMap<string, number> = NO_ENTRIES,
): string {
  if (reason === UNKNOWN_REASON || counts.has(reason) || alsoCounted.has(reason)) return reason;
  const named = new Set([...counts.keys(), ...alsoCounted.keys()]);
  named.delete(OTHER_REASON);
  named.delete(UNKNOWN_REASON);
  return named.size < MAX_REASONS_PER_FAMILY ? reason : OTHER_REASON;
}

/**
 * How long what a queue asked for, counted or saw fail is remembered: longer than a read can be
 * late (it fails for at most `polling.staleAfterSeconds` before its families hide) and than Svix
 * retries a webhook soon after its first delivery.
 */
export const ENTRY_HISTORY_KEEP_SECONDS = 6 * 3600;

/** Pull requests one queue waits for the history of at most (the longest waiting go first). */
export const MAX_ASKED_PULL_REQUESTS = 5000;

/**
 * Transitions (and pull requests with failures) one queue remembers as counted at most, the oldest
 * pull requests going first: those of the stays still open are kept, a few per pull request, and
 * a busy queue's failures of six hours (a hundred pull requests an hour).
 */
export const MAX_COUNTED_TRANSITIONS = 5000;

/**
 * Two witnesses of one pull request's failure (its webhook event's timestamp, its history's
 * changedAt) place it at most this far apart: both are Trunk's clock, or the event's receipt.
 */
export const SAME_FAILURE_SECONDS = 120;

/**
 * A stretch of one pull request's timeline that two polls saw change (its state, or when it
 * entered it) or end (it left the live entries), asked of its history.
 */
export interface AskedWindow {
  readonly prNumber: number;
  /** When the poll that saw the change ended (the exporter's clock): an answer read before it is too old. */
  readonly askedAt: number;
  /** The state the earlier poll saw, in the polls' spelling (`pending_failure`). */
  readonly from: string;
  /** When that state began (Trunk's clock where the poll had it): the window's transitions come after. */
  readonly after: number;
  /** The state the later poll saw; undefined when it no longer listed the pull request. */
  readonly to: string | undefined;
  /** When that state began: the window's last transition; undefined: up to the end of the stay. */
  readonly until: number | undefined;
  /**
   * For a pull request the later poll still listed: the state the polls counted a transition into
   * from `from` (the outcome of a stay that ended in between, or `to`), in their spelling;
   * undefined when they counted none.
   */
  readonly polledTo: string | undefined;
  /**
   * A pull request no earlier poll listed: only its current stay counts (what followed its last
   * conclusion, which an earlier stay, or another queue, owns).
   */
  readonly firstListing?: true | undefined;
  /**
   * The transition the poll's diff saw (from the state the earlier poll saw to `polledTo`) and held
   * for this window, not counted yet: the window's answer counts the steps of its chain instead,
   * each with its own states, and it counts as the poll saw it when its chain has no step into
   * `polledTo`, or when the window is never answered (given up, dropped, the read off or stale).
   */
  readonly held?: { readonly from: string; readonly to: string } | undefined;
}

/**
 * The transitions the history counted of one pull request, one line each: the time it happened
 * (unix milliseconds), the state it left and the state it entered (flow/countedTransitions.ts).
 */
export type CountedTransitions = string;

/** The two witnesses of a failure: its `pull_request.failed` webhook event, its queue-entry history. */
export type FailureWitness = 'event' | 'history';

/** A failure one witness counted. */
export interface WitnessedFailure {
  /** Unix seconds: the event's timestamp (or receipt), or the transition's changedAt. */
  readonly at: number;
  readonly by: FailureWitness;
}

/** A queue's counts from the queue-entry histories of its pull requests, and what they remember. */
export interface EntryHistory {
  /** Failures the history counted and no webhook event had, by reason (capped with the events' reasons). */
  readonly failed: ReadonlyMap<string, number>;
  /** Cancellations by reason (capped). */
  readonly cancelled: ReadonlyMap<string, number>;
  /** Entries sent back to `pending` from `testing`, `testsPassed` or `pendingFailure`, by reason (capped). */
  readonly restarts: ReadonlyMap<string, number>;
  /** Windows whose history is still to be read, by pull request id (lowercase). */
  readonly asked: ReadonlyMap<string, readonly AskedWindow[]>;
  /**
   * Transitions counted, by pull request id (lowercase): none counts twice. A pull request's are
   * forgotten once its stay concluded and no window waits for it.
   */
  readonly counted: ReadonlyMap<string, CountedTransitions>;
  /**
   * Failures one witness counted that the other has not met yet, by pull request number: a
   * failure either sees counts once, and two failures of one pull request count twice however
   * close together (an eviction loop fails it again within two minutes).
   */
  readonly failures: ReadonlyMap<number, readonly WitnessedFailure[]>;
  /**
   * False while the organization's history reads have failed for longer than
   * `polling.staleAfterSeconds`: the history's families are hidden, the rest of the queue's not.
   */
  readonly shown: boolean;
}

/** Nothing counted or asked yet; every family starts empty (a reason's series appears when first counted). */
export const EMPTY_ENTRY_HISTORY: EntryHistory = Object.freeze({
  failed: NO_ENTRIES,
  cancelled: NO_ENTRIES,
  restarts: NO_ENTRIES,
  asked: NO_ENTRIES,
  counted: NO_ENTRIES,
  failures: NO_ENTRIES,
  shown: true,
});

/**
 * The index among `prNumber`'s failures of the one the witness other than `by` counted closest to
 * `at` (unix seconds, at most SAME_FAILURE_SECONDS away) and `by` has not met, or -1: that failure
 * is the one `by` sees now.
 */
export function unmetFailureIndex(
  failures: EntryHistory['failures'] | undefined,
  prNumber: number,
  at: number,
  by: FailureWitness,
): number {
  let closest = -1;
  let distance = SAME_FAILURE_SECONDS;
  for (const [index, seen] of (failures?.get(prNumber) ?? []).entries()) {
    if (seen.by !== by && Math.abs(seen.at - at) <= distance) {
      closest = index;
      distance = Math.abs(seen.at - at);
    }
  }
  return closest;
}

/** Whether the witness other than `by` already counted the failure of `prNumber` at about `at`. */
export function failureCounted(
  history: EntryHistory | undefined,
  prNumber: number,
  at: number,
  by: FailureWitness,
): boolean {
  return unmetFailureIndex(history?.failures, prNumber, at, by) !== -1;
}
