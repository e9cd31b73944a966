// The flow ledger of one merge queue, poll by poll: started by the first successful poll (which can
// only establish what is there, so it counts nothing), advanced by each later one, and with webhooks
// on also by each merge-queue event of the queue.
import { NO_ENTRIES, orShared } from '../snapshot/noEntries.js';
import type { MergeQueueSnapshot } from '../snapshot/types.js';
import { applyFlowEvents, emptyFlowCounts } from './flowCounts.js';
import {
  departedPullRequests,
  diffQueuePoll,
  seenOnFirstPoll,
  type QueueDiffOptions,
} from './queueDiff.js';
import type {
  ConcludedExit,
  ExitLookup,
  FlowEvent,
  HeldTransition,
  QueueFlow,
  Resubmission,
  TrackedPullRequest,
} from '../snapshot/queueFlowTypes.js';
import type {
  StayContext,
  PullRequestQueueEvent,
  WebhookExitSettings,
} from '../snapshot/prStayTypes.js';
import {
  beginNewStays,
  countHeldExits,
  emptyExitStays,
  exitsKnownFromEvents,
  recordConcludedExits,
  recordPullRequestEvent,
  settlePollExits,
} from './exitStays.js';
import { countEvictions } from './evictions.js';
import { eventMergeTime, latestMerge, mergeTimes, withMerges } from './lastMerge.js';

export interface QueueFlowOptions extends QueueDiffOptions {
  /**
   * mergeQueueIntervalSeconds: how far apart two witnesses of one exit may place it, and with
   * webhooks on half the time a poll-seen exit waits for its event.
   */
  readonly intervalSeconds: number;
  /** webhooks.enabled: a poll-seen exit waits for its event (prStay.ts); off, it counts at once. */
  readonly webhooks: boolean;
}

/** Folds a poll into the queue's ledger as it is when the poll is recorded. */
export type QueueFlowUpdate = (latest: QueueFlow | undefined) => QueueFlow;

/** The ledger after the first successful poll since the exporter started: zero counts, every PR tracked. */
export function startQueueFlow(first: MergeQueueSnapshot): QueueFlow {
  return {
    counts: emptyFlowCounts(),
    startedAt: first.takenAt,
    lastPollAt: first.takenAt,
    lastQueueState: first.state,
    tracked: orShared(firstEntries(first)),
    departed: NO_ENTRIES,
    exitStays: emptyExitStays(),
  };
}

/** The departed PRs whose final state must be looked up: those no event has told about. */
export function exitsToLookUp(flow: QueueFlow, current: MergeQueueSnapshot): number[] {
  const departed = departedPullRequests(flow, current);
  const known = exitsKnownFromEvents(flow, departed);
  return departed.filter((pr) => !known.has(pr.number)).map((pr) => pr.number);
}

/**
 * The ledger after one more successful poll, given the lookups of the PRs that departed and the
 * listed PRs whose entry concluded and was submitted again since the previous poll. Every
 * counted exit is remembered whether webhooks are on or not, so a reload that turns them on or
 * off counts no exit a second time: the events and the reads of concluded entries each meet the
 * exits the other counted.
 */
export function advanceQueueFlow(
  flow: QueueFlow,
  current: MergeQueueSnapshot,
  lookups: ReadonlyMap<number, ExitLookup>,
  options: QueueFlowOptions,
  resubmissions?: ReadonlyMap<number, Resubmission>,
): QueueFlow {
  const settings = stayContext(flow, options);
  const before = beginNewStays(flow, current, settings);
  // What an event said of a departed PR stands in for (and beats) its lookup.
  const known = exitsKnownFromEvents(before, departedPullRequests(before, current));
  const diff = diffQueuePoll(
    before,
    current,
    new Map([...lookups, ...known]),
    options,
    resubmissions,
  );
  const next = {
    startedAt: flow.startedAt,
    lastPollAt: current.takenAt,
    lastQueueState: current.state,
    tracked: diff.tracked,
    departed: diff.departed,
    ...(diff.absent.size === 0 ? {} : { absent: diff.absent }),
    // A departure's leftAt lies between two polls: never after this one.
    lastMergeAt: latestMerge(flow.lastMergeAt, mergeTimes(diff.exits, current.takenAt)),
  };
  const settled = settlePollExits(
    before.exitStays ?? emptyExitStays(),
    diff.exits,
    next,
    current.takenAt,
    settings,
  );
  // Without webhooks no event is waited for: a poll-seen exit (or one held when a reload turned
  // them off) counts now.
  const counted = options.webhooks ? settled : countHeldExits(settled.exitStays, current.takenAt);
  const events = options.webhooks ? settled.events : [...settled.events, ...counted.events];
  const held = heldTransitions(diff.events);
  return {
    ...next,
    ...withEvents(flow, [...diff.events, ...events], current.takenAt),
    exitStays: counted.exitStays,
    ...(held.length === 0 ? {} : { heldTransitions: held }),
  };
}

/**
 * The ledger after a read of concluded entries (API v2) found exits no poll saw leave, as of the
 * poll taken at `takenAt`: each counts unless its event, or an earlier read, counted it.
 */
export function countConcludedExits(
  ledger: QueueFlow,
  concluded: readonly ConcludedExit[],
  takenAt: number,
  options: QueueFlowOptions,
): QueueFlow {
  if (concluded.length === 0) return ledger;
  const { flow, exits } = concludeAbsent(ledger, concluded);
  const merged = withMerges(flow, mergeTimes(exits, takenAt));
  const recorded = recordConcludedExits(
    merged.exitStays ?? emptyExitStays(),
    exits,
    takenAt,
    stayContext(flow, options),
  );
  return {
    ...merged,
    ...withEvents(flow, recorded.events, takenAt),
    exitStays: recorded.exitStays,
  };
}

/**
 * The concluded exits with an absent PR's (QueueFlow.absent) entry time from its stay, which the
 * polls saw begin; those PRs are absent no more.
 */
function concludeAbsent(
  flow: QueueFlow,
  exits: readonly ConcludedExit[],
): { readonly flow: QueueFlow; readonly exits: readonly ConcludedExit[] } {
  const { absent } = flow;
  if (absent === undefined || !exits.some((exit) => absent.has(exit.prNumber))) {
    return { flow, exits };
  }
  const remaining = new Map(absent);
  const resolved = exits.map((exit): ConcludedExit => {
    const stay = remaining.get(exit.prNumber);
    if (stay === undefined) return exit;
    remaining.delete(exit.prNumber);
    return { ...exit, enteredAt: Math.min(stay.enteredAt, exit.leftAt) };
  });
  return {
    flow: { ...flow, absent: remaining.size === 0 ? undefined : remaining },
    exits: resolved,
  };
}

/** The ledger after one merge-queue event of its queue (webhooks on). */
export function recordQueueEvent(
  flow: QueueFlow,
  event: PullRequestQueueEvent,
  receivedAt: number,
  settings: WebhookExitSettings,
): QueueFlow {
  const recorded = recordPullRequestEvent(flow, event, receivedAt, {
    ...settings,
    readFrom: flow.concludedReads?.countFrom,
  });
  const mergedAt =
    event.kind === 'exit' ? eventMergeTime(recorded.exitStays, event.prNumber) : undefined;
  return {
    ...withMerges(flow, [mergedAt]),
    ...withEvents(flow, recorded.events, receivedAt),
    exitStays: recorded.exitStays,
  };
}

/** What the ledger's stays are stepped with: the interval, and how far back the reads of concluded entries reach. */
function stayContext(flow: QueueFlow, options: QueueFlowOptions): StayContext {
  return { intervalSeconds: options.intervalSeconds, readFrom: flow.concludedReads?.countFrom };
}

/** The counts and failed exits of `flow` with `events` folded in at `now`. */
function withEvents(
  flow: QueueFlow,
  events: readonly FlowEvent[],
  now: number,
): Pick<QueueFlow, 'counts' | 'failedExits'> {
  const counts = applyFlowEvents(flow.counts, events);
  const evictions = countEvictions(flow.failedExits, events, now);
  return {
    counts:
      evictions.repeated === 0
        ? counts
        : { ...counts, repeatedFailures: counts.repeatedFailures + evictions.repeated },
    ...(evictions.failedExits === undefined ? {} : { failedExits: evictions.failedExits }),
  };
}

/** The transitions of `events` held for the queue-entry history (FlowEvent.heldFor). */
function heldTransitions(events: readonly FlowEvent[]): HeldTransition[] {
  const held: HeldTransition[] = [];
  for (const event of events) {
    if (event.kind === 'transition' && event.heldFor !== undefined) {
      held.push({ prNumber: event.heldFor, from: event.from, to: event.to });
    }
  }
  return held;
}

/** Every PR tracked from its first entry, as diffQueuePoll keeps it (a repeated number counts once). */
function firstEntries(first: MergeQueueSnapshot): Map<number, TrackedPullRequest> {
  const tracked = new Map<number, TrackedPullRequest>();
  for (const pr of first.pullRequests) {
    if (!tracked.has(pr.number)) tracked.set(pr.number, seenOnFirstPoll(pr, first.takenAt));
  }
  return tracked;
}
