// The difference between two successful polls of one merge queue, as flow events. Pure: the same
// ledger, snapshot and lookups always give the same events. What happens between two polls is
// invisible to the polls: a PR that enters and leaves in between is never seen (API v2's reads of
// concluded entries count it: v2ExitLookup.ts), and a PR that moves through several states in
// between shows one transition from the first to the last.
import {
  UNKNOWN_STATE,
  type MergeQueueSnapshot,
  type PullRequestSnapshot,
} from '../snapshot/types.js';
import {
  ABSENT_PULL_REQUEST_KEEP_SECONDS,
  MAX_ABSENT_PULL_REQUESTS,
  MAX_EXIT_LOOKUP_ATTEMPTS,
  type DepartedPullRequest,
  type ExitLookup,
  type ExitOutcome,
  type FlowEvent,
  type QueueFlow,
  type Resubmission,
  type TrackedPullRequest,
} from '../snapshot/queueFlowTypes.js';
import { FINAL_PR_STATES } from '../snapshot/exitOutcome.js';
import { orShared } from '../snapshot/noEntries.js';

/** A pull request a poll saw gone, with what its lookup (or its event) said. */
export interface DepartedExit {
  readonly prNumber: number;
  readonly outcome: ExitOutcome;
  /** Best estimate of when it entered the queue. */
  readonly enteredAt: number;
  /** Best estimate of when it left: within the two polls around its departure. */
  readonly leftAt: number;
  /** takenAt of the first poll that no longer listed it. */
  readonly goneAt: number;
}

export interface QueueDiff {
  /** Transitions and queue-state time; exits are apart, since webhooks may have counted them. */
  readonly events: readonly FlowEvent[];
  readonly exits: readonly DepartedExit[];
  readonly tracked: ReadonlyMap<number, TrackedPullRequest>;
  readonly departed: ReadonlyMap<number, DepartedPullRequest>;
  /** QueueFlow.absent after this poll. */
  readonly absent: ReadonlyMap<number, DepartedPullRequest>;
}

export interface QueueDiffOptions {
  /** Longer gaps between two polls are not attributed to any queue state: nobody watched. */
  readonly maxGapSeconds: number;
  /**
   * polling.staleAfterSeconds: a departed PR whose lookups keep failing is looked up again on each
   * poll for this long after the poll that saw it gone, and counted as `unknown` then.
   */
  readonly lookupRetrySeconds: number;
  /**
   * API v2 with `reads.queueEntryHistory`: the transition of a listed PR with an id between the
   * states two polls saw, and a departed PR's into its outcome, are held for its history
   * (FlowEvent.heldFor), which tells the steps in between; counted at once otherwise.
   */
  readonly holdForHistory?: boolean | undefined;
}

/** Pull requests of the previous poll (or still awaiting a lookup) that the current poll no longer lists. */
export function departedPullRequests(
  flow: QueueFlow,
  current: MergeQueueSnapshot,
): DepartedPullRequest[] {
  const present = new Set(current.pullRequests.map((pr) => pr.number));
  const departed: DepartedPullRequest[] = [];
  for (const pr of flow.tracked.values()) {
    if (!present.has(pr.number))
      departed.push({ ...pr, goneAt: current.takenAt, failedLookups: 0 });
  }
  for (const pr of flow.departed.values()) {
    // A PR back in the queue before its lookup succeeded is simply tracked again as a new entry.
    if (!present.has(pr.number)) departed.push(pr);
  }
  return departed;
}

/**
 * What happened between the poll `flow` last saw and `current`, given the lookups of departed PRs
 * and the listed PRs whose entry concluded and was submitted again in between.
 */
export function diffQueuePoll(
  flow: QueueFlow,
  current: MergeQueueSnapshot,
  lookups: ReadonlyMap<number, ExitLookup>,
  options: QueueDiffOptions,
  resubmissions: ReadonlyMap<number, Resubmission> = new Map(),
): QueueDiff {
  const events: FlowEvent[] = [];
  const exits: DepartedExit[] = [];
  const now = current.takenAt;

  // Sample and hold: the interval counts for the state seen at its start. A change in between
  // is thus counted late by up to one interval, and early by as much when it changes back.
  const gap = now - flow.lastPollAt;
  if (gap > 0 && gap <= options.maxGapSeconds) {
    events.push({ kind: 'queue_state', state: flow.lastQueueState, seconds: gap });
  }

  const tracked = new Map<number, TrackedPullRequest>();
  for (const pr of current.pullRequests) {
    // The client keeps one entry per PR number; were there two, the second must not count again.
    if (tracked.has(pr.number)) continue;
    const seen = flow.tracked.get(pr.number);
    if (seen === undefined) {
      const resumed = unconcluded(flow, pr.number);
      tracked.set(
        pr.number,
        resumed === undefined ? firstSeen(pr, flow.lastPollAt, now) : resume(resumed, pr, now),
      );
      continue;
    }
    const resubmission = resubmissions.get(pr.number);
    if (resubmission !== undefined) {
      // Its stay ended (after the previous poll, when that poll saw the ended stay's state) and a
      // new one began, in whatever state this poll lists.
      const { outcome } = resubmission;
      const notBefore = resubmission.fromPolledState ? seen.lastSeenAt : seen.enteredAt;
      const leftAt = clamp(resubmission.leftAt, notBefore, now);
      exits.push({ prNumber: pr.number, outcome, enteredAt: seen.enteredAt, leftAt, goneAt: now });
      const to = polledTransitionTo(seen, pr, resubmission);
      if (to !== undefined) {
        pushTransition(events, seen.state, to, leftAt - seen.stateSince, heldFor(pr, options));
      }
      tracked.set(pr.number, firstSeen(pr, leftAt, now));
      continue;
    }
    if (seen.state === pr.state) {
      tracked.set(pr.number, seenAgain(seen, pr, now));
      continue;
    }
    const since = clamp(pr.stateChangedAt ?? now, seen.lastSeenAt, now);
    pushTransition(events, seen.state, pr.state, since - seen.stateSince, heldFor(pr, options));
    // Neither concludedBeforeStart nor sinceFirstPoll: a state the exporter saw it enter.
    tracked.set(pr.number, trackedPullRequest(seen.number, pr.state, seen.enteredAt, since, now));
  }

  const departed = new Map<number, DepartedPullRequest>();
  const absent = stillAbsent(flow, current);
  for (const pr of departedPullRequests(flow, current)) {
    if (pr.concludedBeforeStart === true) continue;
    let lookup = lookups.get(pr.number) ?? 'retry';
    if (lookup === 'retry' || lookup === 'not_concluded') {
      const failedLookups = pr.failedLookups + 1;
      const notConcluded = lookup === 'not_concluded';
      // A lookup that fails (a 429, a timeout) says nothing of the exit: it is asked again until
      // the PR has been gone as long as a target's data may be stale.
      const retried = notConcluded
        ? failedLookups < MAX_EXIT_LOOKUP_ATTEMPTS
        : now - pr.goneAt < options.lookupRetrySeconds;
      if (retried) {
        departed.set(pr.number, { ...pr, failedLookups, notConcluded });
        continue;
      }
      // Read and not concluded, again and again: in a state Trunk added, not an exit.
      if (notConcluded) {
        absent.set(pr.number, { ...pr, failedLookups, notConcluded });
        continue;
      }
      lookup = { outcome: 'unknown', leftAt: undefined };
    }
    // It left after the last poll that saw it and before the first one that did not; or, listed
    // in the final state it left in, when it entered that state.
    const leftAt =
      pr.state === lookup.outcome && FINAL_PR_STATES.has(pr.state)
        ? pr.stateSince
        : clamp(lookup.leftAt ?? pr.goneAt, pr.lastSeenAt, pr.goneAt);
    exits.push({
      prNumber: pr.number,
      outcome: lookup.outcome,
      enteredAt: pr.enteredAt,
      leftAt,
      goneAt: pr.goneAt,
    });
    if (lookup.outcome !== 'unknown') {
      const held = options.holdForHistory === true ? pr.number : undefined;
      pushTransition(events, pr.state, lookup.outcome, leftAt - pr.stateSince, held);
    }
  }

  return {
    events,
    exits,
    tracked: orShared(tracked),
    departed: orShared(departed),
    absent: keepNewest(absent),
  };
}

/**
 * The state the diff counts a listed PR's transition into from the state the previous poll saw
 * (`seen`, its ledger's): the outcome of a stay that ended in between, when the resubmission says it
 * ended from that state and how; else the state `pr` is listed in, when another; undefined when it
 * counts none (a PR its ledger did not track, a state it cannot name).
 */
export function polledTransitionTo(
  seen: TrackedPullRequest | undefined,
  pr: PullRequestSnapshot,
  resubmission: Resubmission | undefined,
): string | undefined {
  if (seen === undefined) return undefined;
  const to =
    resubmission === undefined
      ? pr.state
      : resubmission.fromPolledState && resubmission.outcome !== 'unknown'
        ? resubmission.outcome
        : undefined;
  if (to === undefined || to === seen.state || to === UNKNOWN_STATE) return undefined;
  return seen.state === UNKNOWN_STATE ? undefined : to;
}

/**
 * The PR that polls saw leave and that API v2's reads say never concluded: absent, or departed
 * with a `not_concluded` answer. Back in the live entries, its stay goes on.
 */
function unconcluded(flow: QueueFlow, prNumber: number): TrackedPullRequest | undefined {
  const departed = flow.departed.get(prNumber);
  return departed?.notConcluded === true ? departed : flow.absent?.get(prNumber);
}

/** The stay of a PR back from a state the poll could not see: no transition into or out of it counts. */
function resume(
  stay: TrackedPullRequest,
  pr: PullRequestSnapshot,
  takenAt: number,
): TrackedPullRequest {
  const since = clamp(pr.stateChangedAt ?? takenAt, stay.lastSeenAt, takenAt);
  return trackedPullRequest(
    pr.number,
    pr.state,
    stay.enteredAt,
    pr.state === stay.state ? stay.stateSince : since,
    takenAt,
  );
}

/** The absent PRs still remembered at `current`: not back, and gone less than the keep time. */
function stillAbsent(
  flow: QueueFlow,
  current: MergeQueueSnapshot,
): Map<number, DepartedPullRequest> {
  const absent = new Map<number, DepartedPullRequest>();
  if (flow.absent === undefined) return absent;
  const present = new Set(current.pullRequests.map((pr) => pr.number));
  for (const [number, pr] of flow.absent) {
    if (present.has(number)) continue;
    if (current.takenAt - pr.goneAt <= ABSENT_PULL_REQUEST_KEEP_SECONDS) absent.set(number, pr);
  }
  return absent;
}

/** At most MAX_ABSENT_PULL_REQUESTS, the ones gone most recently. */
function keepNewest(
  absent: Map<number, DepartedPullRequest>,
): ReadonlyMap<number, DepartedPullRequest> {
  if (absent.size <= MAX_ABSENT_PULL_REQUESTS) return absent;
  const newest = [...absent].sort(([, a], [, b]) => b.goneAt - a.goneAt);
  return new Map(newest.slice(0, MAX_ABSENT_PULL_REQUESTS));
}

/**
 * Whether the lookup of `prNumber` answered now ends its lookups: the attempt that makes a `retry`
 * an `unknown` exit and a `not_concluded` an absence.
 */
export function isLastLookup(flow: QueueFlow, prNumber: number): boolean {
  return (flow.departed.get(prNumber)?.failedLookups ?? 0) + 1 >= MAX_EXIT_LOOKUP_ATTEMPTS;
}

/** Tracking for a PR on the first poll: it has been queued at least since its current state began. */
export function seenOnFirstPoll(pr: PullRequestSnapshot, takenAt: number): TrackedPullRequest {
  const seen = firstSeen(pr, Number.NEGATIVE_INFINITY, takenAt);
  const concluded = FINAL_PR_STATES.has(pr.state) ? true : undefined;
  return trackedPullRequest(
    seen.number,
    seen.state,
    seen.enteredAt,
    seen.stateSince,
    seen.lastSeenAt,
    true,
    concluded,
  );
}

/**
 * A PR seen for the first time. The API gives no enqueue time of its stay; its stateChangedAt is
 * when it entered its current state (for a newcomer usually the queue itself), kept after
 * `notBefore` (the previous poll, which did not list it) and before this poll against clock skew.
 */
export function firstSeen(
  pr: PullRequestSnapshot,
  notBefore: number,
  takenAt: number,
): TrackedPullRequest {
  const since = clamp(pr.stateChangedAt ?? takenAt, notBefore, takenAt);
  return trackedPullRequest(pr.number, pr.state, since, since, takenAt);
}

/**
 * A state the poll could not learn is no state: no transition into or out of it is counted; nor
 * is a "transition" that changes nothing (a PR still `merged` whose lookup says merged).
 */
function pushTransition(
  events: FlowEvent[],
  from: string,
  to: string,
  secondsInFrom: number,
  held?: number,
): void {
  if (from === UNKNOWN_STATE || to === UNKNOWN_STATE || from === to) return;
  const seconds = Math.max(0, secondsInFrom);
  events.push(
    held === undefined
      ? { kind: 'transition', from, to, secondsInFrom: seconds }
      : { kind: 'transition', from, to, secondsInFrom: seconds, heldFor: held },
  );
}

/** The PR number a listed PR's transition is held for (QueueDiffOptions.holdForHistory), if it is. */
function heldFor(pr: PullRequestSnapshot, options: QueueDiffOptions): number | undefined {
  return options.holdForHistory === true && pr.pullRequestId !== undefined ? pr.number : undefined;
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(Math.max(value, low), high);
}

/**
 * A tracked PR, every field written in one order whether set or not: V8 then gives every tracked
 * PR one shape with its fields inside the object, where a spread or an added optional field gives
 * it a property store of its own.
 */
function trackedPullRequest(
  number: number,
  state: string,
  enteredAt: number,
  stateSince: number,
  lastSeenAt: number,
  sinceFirstPoll?: true,
  concludedBeforeStart?: true,
): TrackedPullRequest {
  return { number, state, enteredAt, stateSince, lastSeenAt, sinceFirstPoll, concludedBeforeStart };
}

/**
 * `seen` as the poll that finished at `now` saw it again in the same state: since the same
 * instant, or since one after the poll that last saw it (`stateChangedAt` is "When the entry
 * entered its current state": it left the state and came back in between, a restart), from which
 * its time in the state then runs, as for a state the exporter saw it enter.
 */
function seenAgain(
  seen: TrackedPullRequest,
  pr: PullRequestSnapshot,
  now: number,
): TrackedPullRequest {
  const changedAt = pr.stateChangedAt;
  const entered = changedAt !== undefined && changedAt > seen.lastSeenAt;
  return trackedPullRequest(
    seen.number,
    seen.state,
    seen.enteredAt,
    entered ? Math.min(changedAt, now) : seen.stateSince,
    now,
    // Entered again: no longer in its state since the first poll listed it.
    entered ? undefined : seen.sinceFirstPoll,
    seen.concludedBeforeStart,
  );
}
