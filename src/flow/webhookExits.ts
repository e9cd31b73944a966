// Each exit counted once when webhooks and polls both witness it (webhookExitTypes.ts). The event
// counts at once; a poll that sees a PR gone holds the exit for 2 × the poll interval, then counts
// it itself unless the event came. Either way the exit is remembered, so the other witness, when it
// comes, adds nothing. Pure: every function returns new values.
import {
  COUNTED_EXIT_RETENTION_SECONDS,
  EXIT_SOURCES,
  MAX_REMEMBERED_EXITS,
  type CountedExit,
  type ExitSource,
  type PendingExit,
  type PullRequestQueueEvent,
  type WebhookExitSettings,
  type WebhookExits,
} from '../snapshot/webhookExitTypes.js';
import type {
  DepartedPullRequest,
  ExitLookup,
  ExitOutcome,
  FlowEvent,
  QueueFlow,
  TrackedPullRequest,
} from '../snapshot/queueFlowTypes.js';
import type { MergeQueueSnapshot } from '../snapshot/types.js';
import { firstSeen, type DepartedExit } from './queueDiff.js';

/** No exits counted yet; both sources at 0 from the start, so the first one is an increase. */
export function emptyWebhookExits(): WebhookExits {
  return {
    counted: new Map(),
    pending: new Map(),
    enteredAt: new Map(),
    bySource: new Map(EXIT_SOURCES.map((source) => [source, 0])),
  };
}

/** The mutable copy one update works on; frozen back into WebhookExits at the end. */
interface Working {
  readonly counted: Map<number, CountedExit>;
  readonly pending: Map<number, PendingExit>;
  readonly enteredAt: Map<number, number>;
  readonly bySource: Map<ExitSource, number>;
  /** The exits counted by this update, for the ledger's counts. */
  readonly events: FlowEvent[];
}

function working(state: WebhookExits | undefined): Working {
  const from = state ?? emptyWebhookExits();
  return {
    counted: new Map(from.counted),
    pending: new Map(from.pending),
    enteredAt: new Map(from.enteredAt),
    bySource: new Map(from.bySource),
    events: [],
  };
}

function settled(work: Working): WebhookExits {
  const { counted, pending, enteredAt, bySource } = work;
  return { counted, pending, enteredAt, bySource };
}

/** Counts one exit and remembers it, as the PR's latest (a Map keeps the order of counting). */
function countExit(
  work: Working,
  prNumber: number,
  secondsInQueue: number,
  exit: CountedExit,
): void {
  work.events.push({ kind: 'exit', outcome: exit.outcome, secondsInQueue });
  work.bySource.set(exit.source, (work.bySource.get(exit.source) ?? 0) + 1);
  work.counted.delete(prNumber);
  work.counted.set(prNumber, exit);
  work.enteredAt.delete(prNumber);
}

function countFromPoll(work: Working, prNumber: number, held: PendingExit, now: number): void {
  work.pending.delete(prNumber);
  countExit(work, prNumber, held.leftAt - held.enteredAt, {
    source: 'poll',
    outcome: held.outcome,
    leftAt: held.leftAt,
    countedAt: now,
    goneBy: held.goneAt,
    restartedAt: undefined,
  });
}

/**
 * Counts held exits whose event had its time, and forgets what no witness can still need. Over a
 * cap, the oldest go first: a held exit is then counted from the poll rather than lost.
 */
function settle(work: Working, now: number): void {
  for (const [prNumber, held] of [...work.pending]) {
    if (held.dueAt <= now) countFromPoll(work, prNumber, held, now);
  }
  for (const [prNumber, held] of [...work.pending]) {
    if (work.pending.size <= MAX_REMEMBERED_EXITS) break;
    countFromPoll(work, prNumber, held, now);
  }
  for (const [prNumber, exit] of [...work.counted]) {
    // Until a poll is done with it, an exit must stay to keep that poll from counting it again.
    if (exit.goneBy !== undefined && now - exit.countedAt > COUNTED_EXIT_RETENTION_SECONDS) {
      work.counted.delete(prNumber);
    }
  }
  dropOldest(work.counted);
  dropOldest(work.enteredAt);
}

function dropOldest(map: Map<number, unknown>): void {
  for (const key of [...map.keys()]) {
    if (map.size <= MAX_REMEMBERED_EXITS) return;
    map.delete(key);
  }
}

/**
 * Whether an exit at `leftAt` (an event's) is the one `exit` already counted. A later stay's exit
 * is not: one after the later stay began, or one well after the first. "Well after" allows for a
 * poll interval of delay and clock difference between Trunk's timestamps and the exporter's polls.
 */
function isCountedAlready(exit: CountedExit, leftAt: number, settings: WebhookExitSettings): boolean {
  if (exit.restartedAt !== undefined && leftAt > exit.restartedAt) return false;
  const latest = exit.source === 'event' ? exit.leftAt : (exit.goneBy ?? exit.leftAt);
  return leftAt <= latest + settings.intervalSeconds;
}

/** Whether a departure a poll saw ends the stay whose exit an event counted. */
function endsCountedStay(exit: CountedExit, departure: DepartedExit): boolean {
  if (exit.goneBy !== undefined) return false;
  return exit.restartedAt === undefined || departure.leftAt <= exit.restartedAt;
}

/**
 * The departed PRs whose exit an event has counted, as the lookups they no longer need: the event
 * said how and when they left.
 */
export function exitsKnownFromEvents(
  flow: QueueFlow,
  departed: readonly DepartedPullRequest[],
): Map<number, ExitLookup> {
  const known = new Map<number, ExitLookup>();
  const counted = flow.webhookExits?.counted;
  if (counted === undefined) return known;
  for (const pr of departed) {
    const exit = counted.get(pr.number);
    if (exit?.source === 'event' && exit.goneBy === undefined && exit.restartedAt === undefined) {
      known.set(pr.number, { outcome: exit.outcome, leftAt: exit.leftAt });
    }
  }
  return known;
}

/**
 * Before a poll is diffed: a PR listed again after its counted exit is on a new stay. For an exit a
 * poll saw, any later listing; for an event's, a poll that finished more than an interval after
 * the event (so it read the queue after it). A listing inside that window may be the old stay.
 */
export function beginNewStays(
  flow: QueueFlow,
  current: MergeQueueSnapshot,
  settings: WebhookExitSettings,
): QueueFlow {
  const state = flow.webhookExits;
  if (state === undefined) return flow;
  const counted = new Map(state.counted);
  const tracked = new Map(flow.tracked);
  const now = current.takenAt;
  for (const pr of current.pullRequests) {
    const exit = counted.get(pr.number);
    if (exit === undefined || exit.restartedAt !== undefined) continue;
    if (exit.goneBy !== undefined) {
      if (now > exit.goneBy) counted.set(pr.number, { ...exit, restartedAt: exit.goneBy });
      continue;
    }
    if (now - settings.intervalSeconds <= exit.countedAt) continue;
    // The polls never saw the old stay end (it left and came back between two of them): the
    // event counted it, and the ledger's entry starts over as the new stay.
    counted.set(pr.number, { ...exit, goneBy: exit.countedAt, restartedAt: exit.leftAt });
    if (tracked.has(pr.number)) tracked.set(pr.number, firstSeen(pr, exit.countedAt, now));
  }
  return { ...flow, tracked, webhookExits: { ...state, counted } };
}

/**
 * After a poll is diffed, with webhooks on: a departure whose exit an event counted adds nothing;
 * any other is held for its event. Held exits that waited long enough are counted from the poll.
 */
export function settlePollExits(
  state: WebhookExits,
  exits: readonly DepartedExit[],
  ledger: Pick<QueueFlow, 'tracked' | 'departed'>,
  takenAt: number,
  settings: WebhookExitSettings,
): { readonly webhookExits: WebhookExits; readonly events: readonly FlowEvent[] } {
  const work = working(state);
  for (const departure of exits) {
    const { prNumber } = departure;
    const exit = work.counted.get(prNumber);
    if (exit !== undefined && endsCountedStay(exit, departure)) {
      work.counted.set(prNumber, { ...exit, goneBy: departure.goneAt });
      continue;
    }
    // Still held from an earlier stay: that one has waited its turn.
    const earlier = work.pending.get(prNumber);
    if (earlier !== undefined) countFromPoll(work, prNumber, earlier, takenAt);
    work.pending.set(prNumber, {
      outcome: departure.outcome,
      enteredAt: work.enteredAt.get(prNumber) ?? departure.enteredAt,
      leftAt: departure.leftAt,
      goneAt: departure.goneAt,
      dueAt: departure.goneAt + 2 * settings.intervalSeconds,
    });
    work.enteredAt.delete(prNumber);
  }
  // An event's exit no poll has listed since, nor can list any more: the polls are done with it.
  for (const [prNumber, exit] of [...work.counted]) {
    if (
      exit.goneBy === undefined &&
      takenAt - settings.intervalSeconds > exit.countedAt &&
      !ledger.tracked.has(prNumber) &&
      !ledger.departed.has(prNumber)
    ) {
      work.counted.set(prNumber, { ...exit, goneBy: takenAt });
    }
  }
  settle(work, takenAt);
  return { webhookExits: settled(work), events: work.events };
}

/** Webhooks turned off: every held exit is counted from its poll now, and the rest forgotten. */
export function countHeldExits(state: WebhookExits, now: number): readonly FlowEvent[] {
  const work = working(state);
  for (const [prNumber, held] of [...work.pending]) countFromPoll(work, prNumber, held, now);
  return work.events;
}

/**
 * One merge-queue event for this queue: an exit is counted now unless its poll (or an earlier
 * event) already counted it; a submitted or queued event records when the stay began.
 */
export function recordPullRequestEvent(
  flow: QueueFlow,
  event: PullRequestQueueEvent,
  receivedAt: number,
  settings: WebhookExitSettings,
): { readonly webhookExits: WebhookExits; readonly events: readonly FlowEvent[] } {
  const work = working(flow.webhookExits);
  const { prNumber } = event;
  const at = event.at ?? receivedAt;
  const exit = work.counted.get(prNumber);
  if (event.kind === 'exit') {
    if (exit === undefined || !isCountedAlready(exit, at, settings)) {
      countFromEvent(work, flow, prNumber, event.outcome, at, receivedAt, settings);
    }
  } else {
    if (exit !== undefined && exit.restartedAt === undefined && at > exit.leftAt) {
      work.counted.set(prNumber, { ...exit, restartedAt: at });
    }
    // A submission starts the stay; a queued event only when nothing else says when it began.
    const startKnown = work.enteredAt.has(prNumber) || flow.tracked.has(prNumber);
    if (event.kind === 'submitted' || !startKnown) {
      work.enteredAt.delete(prNumber);
      work.enteredAt.set(prNumber, at);
    }
  }
  settle(work, receivedAt);
  return { webhookExits: settled(work), events: work.events };
}

function countFromEvent(
  work: Working,
  flow: QueueFlow,
  prNumber: number,
  outcome: ExitOutcome,
  leftAt: number,
  receivedAt: number,
  settings: WebhookExitSettings,
): void {
  const held = work.pending.get(prNumber);
  let enteredAt: number;
  let goneBy: number | undefined;
  if (held !== undefined && leftAt <= held.goneAt + settings.intervalSeconds) {
    // The poll saw this very exit first: the event counts it, with its own outcome and time.
    work.pending.delete(prNumber);
    enteredAt = held.enteredAt;
    goneBy = held.goneAt;
  } else {
    // A held exit from an earlier stay has had its turn.
    if (held !== undefined) countFromPoll(work, prNumber, held, receivedAt);
    const stay: TrackedPullRequest | undefined =
      flow.tracked.get(prNumber) ?? flow.departed.get(prNumber);
    // Never listed by a poll: it entered after the last one (an upper bound without its event).
    enteredAt = work.enteredAt.get(prNumber) ?? stay?.enteredAt ?? flow.lastPollAt;
    goneBy = undefined;
  }
  countExit(work, prNumber, leftAt - enteredAt, {
    source: 'event',
    outcome,
    leftAt,
    countedAt: receivedAt,
    goneBy,
    restartedAt: undefined,
  });
}
