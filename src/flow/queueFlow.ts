// The flow ledger of one merge queue, poll by poll: started by the first successful poll (which can
// only establish what is there, so it counts nothing), advanced by each later one, and with webhooks
// on also by each merge-queue event of the queue.
import type { MergeQueueSnapshot } from '../snapshot/types.js';
import { applyFlowEvents, emptyFlowCounts } from './flowCounts.js';
import {
  departedPullRequests,
  diffQueuePoll,
  seenOnFirstPoll,
  type DepartedExit,
  type QueueDiffOptions,
} from './queueDiff.js';
import type {
  ConcludedExit,
  ExitLookup,
  FlowEvent,
  QueueFlow,
  TrackedPullRequest,
} from '../snapshot/queueFlowTypes.js';
import type { PullRequestQueueEvent, WebhookExitSettings } from '../snapshot/prStayTypes.js';
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
  /** Webhooks on: exits are reconciled with their events (prStay.ts); off: counted as polled. */
  readonly webhooks?: WebhookExitSettings | undefined;
}

/** The ledger after the first successful poll since the exporter started: zero counts, every PR tracked. */
export function startQueueFlow(first: MergeQueueSnapshot, options?: QueueFlowOptions): QueueFlow {
  return {
    counts: emptyFlowCounts(),
    lastPollAt: first.takenAt,
    lastQueueState: first.state,
    tracked: firstEntries(first),
    departed: new Map(),
    ...(options?.webhooks === undefined ? {} : { webhookExits: emptyExitStays() }),
  };
}

/** The departed PRs whose final state must be looked up: those no event has told about. */
export function exitsToLookUp(flow: QueueFlow, current: MergeQueueSnapshot): number[] {
  const departed = departedPullRequests(flow, current);
  const known = exitsKnownFromEvents(flow, departed);
  return departed.filter((pr) => !known.has(pr.number)).map((pr) => pr.number);
}

/** The ledger after one more successful poll, given the lookups of the PRs that departed. */
export function advanceQueueFlow(
  flow: QueueFlow,
  current: MergeQueueSnapshot,
  lookups: ReadonlyMap<number, ExitLookup>,
  options: QueueFlowOptions,
): QueueFlow {
  // Webhooks turned off by a reload still settle what the events counted, with no more waiting.
  const reconcile =
    options.webhooks ?? (flow.webhookExits === undefined ? undefined : { intervalSeconds: 0 });
  const before = reconcile === undefined ? flow : beginNewStays(flow, current, reconcile);
  // What an event said of a departed PR stands in for (and beats) its lookup.
  const known = exitsKnownFromEvents(before, departedPullRequests(before, current));
  const diff = diffQueuePoll(before, current, new Map([...lookups, ...known]), options);
  const next = {
    lastPollAt: current.takenAt,
    lastQueueState: current.state,
    tracked: diff.tracked,
    departed: diff.departed,
    ...(diff.absent.size === 0 ? {} : { absent: diff.absent }),
    // A departure's leftAt lies between two polls: never after this one.
    lastMergeAt: latestMerge(flow.lastMergeAt, mergeTimes(diff.exits, current.takenAt)),
  };
  if (reconcile === undefined) {
    return {
      ...next,
      ...withEvents(flow, [...diff.events, ...diff.exits.map(exitEvent)], current.takenAt),
    };
  }
  const settled = settlePollExits(
    before.webhookExits ?? emptyExitStays(),
    diff.exits,
    next,
    current.takenAt,
    reconcile,
  );
  if (options.webhooks === undefined) {
    const held = countHeldExits(settled.webhookExits, current.takenAt);
    return {
      ...next,
      ...withEvents(flow, [...diff.events, ...settled.events, ...held], current.takenAt),
    };
  }
  return {
    ...next,
    ...withEvents(flow, [...diff.events, ...settled.events], current.takenAt),
    webhookExits: settled.webhookExits,
  };
}

/**
 * The ledger after a read of concluded entries (API v2) found exits no poll saw leave, as of the
 * poll taken at `takenAt`: with webhooks on each counts unless its event did; off, each counts.
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
  if (options.webhooks === undefined || merged.webhookExits === undefined) {
    return { ...merged, ...withEvents(flow, exits.map(exitEvent), takenAt) };
  }
  const recorded = recordConcludedExits(merged.webhookExits, exits, takenAt, options.webhooks);
  return {
    ...merged,
    ...withEvents(flow, recorded.events, takenAt),
    webhookExits: recorded.webhookExits,
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
  const recorded = recordPullRequestEvent(flow, event, receivedAt, settings);
  const mergedAt =
    event.kind === 'exit' ? eventMergeTime(recorded.webhookExits, event.prNumber) : undefined;
  return {
    ...withMerges(flow, [mergedAt]),
    ...withEvents(flow, recorded.events, receivedAt),
    webhookExits: recorded.webhookExits,
  };
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

function exitEvent(exit: DepartedExit | ConcludedExit): FlowEvent {
  const { prNumber, outcome, leftAt } = exit;
  return { kind: 'exit', prNumber, outcome, leftAt, secondsInQueue: leftAt - exit.enteredAt };
}

/** Every PR tracked from its first entry, as diffQueuePoll keeps it (a repeated number counts once). */
function firstEntries(first: MergeQueueSnapshot): Map<number, TrackedPullRequest> {
  const tracked = new Map<number, TrackedPullRequest>();
  for (const pr of first.pullRequests) {
    if (!tracked.has(pr.number)) tracked.set(pr.number, seenOnFirstPoll(pr, first.takenAt));
  }
  return tracked;
}
