// Each exit counted once when webhooks and polls both witness it (webhookExitTypes.ts). The event
// counts at once; a poll that sees a PR gone holds the exit for 2 × the poll interval, then counts
// it itself unless the event came. Either way the exit is remembered, so the other witness, when it
// comes, adds nothing. Pure: every function returns new values.
import type {
  CountedExit,
  PullRequestQueueEvent,
  WebhookExitSettings,
  WebhookExits,
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
import { countExit, countFromPoll, settle, settled, working, type Working } from './exitMemory.js';
import { firstSeen, type DepartedExit } from './queueDiff.js';

/**
 * Whether an exit event (of transition time `at`, received at `receivedAt`) is the one `exit`
 * already counted. A later stay's exit is not: one after the later stay began, or one well after
 * the first ("well after" allows an interval of delay and of clock difference between Trunk's
 * timestamps and the exporter's polls). Without a timestamp only a known later stay tells.
 */
function isCountedAlready(
  exit: CountedExit,
  at: number | undefined,
  receivedAt: number,
  settings: WebhookExitSettings,
): boolean {
  if (exit.restartedAt !== undefined && (at ?? receivedAt) > exit.restartedAt) return false;
  if (at === undefined) return true;
  const latest = exit.source === 'event' ? exit.leftAt : (exit.goneBy ?? exit.leftAt);
  return at <= latest + settings.intervalSeconds;
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
  if (state === undefined || state.counted.size === 0) return flow;
  // Copied on the first change only: most polls list no PR with a counted exit.
  let counted: Map<number, CountedExit> | undefined;
  let tracked: Map<number, TrackedPullRequest> | undefined;
  const now = current.takenAt;
  for (const pr of current.pullRequests) {
    const exit = state.counted.get(pr.number);
    if (exit === undefined || exit.restartedAt !== undefined) continue;
    counted ??= new Map(state.counted);
    if (exit.goneBy !== undefined) {
      if (now > exit.goneBy) counted.set(pr.number, { ...exit, restartedAt: exit.goneBy });
      continue;
    }
    if (now - settings.intervalSeconds <= exit.countedAt) continue;
    // The polls never saw the old stay end (it left and came back between two of them): the
    // event counted it, and the ledger's entry starts over as the new stay.
    counted.set(pr.number, { ...exit, goneBy: exit.countedAt, restartedAt: exit.leftAt });
    if (flow.tracked.has(pr.number)) {
      tracked ??= new Map(flow.tracked);
      tracked.set(pr.number, firstSeen(pr, exit.countedAt, now));
    }
  }
  if (counted === undefined) return flow;
  return { ...flow, tracked: tracked ?? flow.tracked, webhookExits: { ...state, counted } };
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
  // First what fell due before it came: an exit held past its wait is the poll's to count.
  settle(work, receivedAt);
  const { prNumber } = event;
  const at = event.at ?? receivedAt;
  const exit = work.counted.get(prNumber);
  if (event.kind === 'exit') {
    if (exit === undefined || !isCountedAlready(exit, event.at, receivedAt, settings)) {
      countFromEvent(work, flow, { ...event, at }, event.at === undefined, receivedAt, settings);
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
  event: { readonly prNumber: number; readonly outcome: ExitOutcome; readonly at: number },
  untimed: boolean,
  receivedAt: number,
  settings: WebhookExitSettings,
): void {
  const { prNumber, outcome, at: leftAt } = event;
  const held = work.pending.get(prNumber);
  let enteredAt: number;
  let goneBy: number | undefined;
  // Within the hold an untimed event can only be the exit the poll saw.
  if (held !== undefined && (untimed || leftAt <= held.goneAt + settings.intervalSeconds)) {
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
