// A merge queue's PR stays (prStay.ts) fed by its polls and events: which witness each poll or
// event is to which PR, the clock's ticks, and the cap on how many stays a queue remembers. Every
// function returns new values.
import { FINAL_PR_STATES } from '../snapshot/exitOutcome.js';
import { CLOCK_SLACK_SECONDS } from '../trunk/timestamps.js';
import { NO_ENTRIES, orShared } from '../snapshot/noEntries.js';
import {
  EXIT_SOURCES,
  MAX_REMEMBERED_EXITS,
  type ExitSource,
  type ExitStays,
  type PullRequestQueueEvent,
  type StoredStay,
  type StayContext,
  type WebhookExitSettings,
} from '../snapshot/prStayTypes.js';
import type {
  ConcludedExit,
  DepartedPullRequest,
  ExitLookup,
  FlowEvent,
  QueueFlow,
  TrackedPullRequest,
} from '../snapshot/queueFlowTypes.js';
import type { MergeQueueSnapshot } from '../snapshot/types.js';
import { lastExit, latestLeave, stepStay, type StayInput, type StayStep } from './prStay.js';
import { firstSeen, type DepartedExit } from './queueDiff.js';
import { packStay, unpackStay } from './storedStays.js';

/** No exits counted yet; both witnesses at 0 from the start, so the first one is an increase. */
export function emptyExitStays(): ExitStays {
  return { stays: NO_ENTRIES, bySource: new Map(EXIT_SOURCES.map((source) => [source, 0])) };
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
  const stays = flow.exitStays?.stays;
  if (stays === undefined) return known;
  for (const pr of departed) {
    const exit = lastExit(unpackStay(stays.get(pr.number)));
    if (exit?.witness === 'event' && exit.goneBy === undefined && exit.restartedAt === undefined) {
      known.set(pr.number, { outcome: exit.outcome, leftAt: exit.leftAt });
    }
  }
  return known;
}

/**
 * The latest time the exit of `prNumber` the ledger counted last (or holds for its event) can have
 * left at; undefined when it knows none. A read listing the PR as concluded since a time before
 * this may be listing that exit.
 */
export function lastExitTime(flow: QueueFlow, prNumber: number): number | undefined {
  const stay = unpackStay(flow.exitStays?.stays.get(prNumber));
  if (stay?.phase === 'held') return stay.held.goneAt;
  const exit = lastExit(stay);
  return exit === undefined ? undefined : latestLeave(exit);
}

/** Before a poll is diffed: each listed PR with a counted exit may be on a new stay. */
export function beginNewStays(
  flow: QueueFlow,
  current: MergeQueueSnapshot,
  settings: WebhookExitSettings,
): QueueFlow {
  const state = flow.exitStays;
  if (state === undefined || state.stays.size === 0) return flow;
  const update = changing(state);
  let tracked: Map<number, TrackedPullRequest> | undefined;
  let changed = false;
  for (const pr of current.pullRequests) {
    if (!state.stays.has(pr.number)) continue;
    const listed: StayInput = {
      kind: 'listed',
      takenAt: current.takenAt,
      stateChangedAt: pr.stateChangedAt,
      final: FINAL_PR_STATES.has(pr.state),
    };
    const step = apply(update, pr.number, listed, settings);
    changed ||= step !== undefined;
    if (step?.relistedSince !== undefined && flow.tracked.has(pr.number)) {
      tracked ??= new Map(flow.tracked);
      tracked.set(pr.number, firstSeen(pr, step.relistedSince, current.takenAt));
    }
  }
  if (!changed) return flow;
  return { ...flow, tracked: tracked ?? flow.tracked, exitStays: settled(update) };
}

/**
 * After a poll is diffed, with webhooks on: a departure whose exit an event counted adds nothing;
 * any other is held for its event. Held exits that waited long enough are counted from the poll.
 */
export function settlePollExits(
  state: ExitStays,
  exits: readonly DepartedExit[],
  ledger: Pick<QueueFlow, 'tracked' | 'departed'>,
  takenAt: number,
  settings: StayContext,
): { readonly exitStays: ExitStays; readonly events: readonly FlowEvent[] } {
  const update = changing(state);
  for (const departure of exits) {
    apply(update, departure.prNumber, { kind: 'gone', departure, takenAt }, settings);
  }
  for (const prNumber of [...update.stays.keys()]) {
    if (!ledger.tracked.has(prNumber) && !ledger.departed.has(prNumber)) {
      apply(update, prNumber, { kind: 'unlisted', takenAt }, settings);
    }
  }
  settle(update, takenAt, settings);
  return { exitStays: settled(update), events: update.events };
}

/**
 * Exits a read of concluded entries found and no poll saw leave: each counted unless its event
 * (or the poll's departure) counted it already; an event coming later counts nothing.
 */
export function recordConcludedExits(
  state: ExitStays,
  exits: readonly ConcludedExit[],
  takenAt: number,
  settings: StayContext,
): { readonly exitStays: ExitStays; readonly events: readonly FlowEvent[] } {
  const update = changing(state);
  for (const exit of exits) {
    const { outcome, enteredAt, leftAt } = exit;
    apply(
      update,
      exit.prNumber,
      { kind: 'concluded', outcome, enteredAt, leftAt, takenAt },
      settings,
    );
  }
  settle(update, takenAt, settings);
  return { exitStays: settled(update), events: update.events };
}

/** Without webhooks: every held exit is counted from its poll now (no event is coming). */
export function countHeldExits(
  state: ExitStays,
  now: number,
): { readonly exitStays: ExitStays; readonly events: readonly FlowEvent[] } {
  const update = changing(state);
  for (const prNumber of [...update.stays.keys()]) {
    apply(update, prNumber, { kind: 'flush', now }, { intervalSeconds: 0 });
  }
  return { exitStays: settled(update), events: update.events };
}

/**
 * One merge-queue event for this queue: an exit is counted now unless its poll (or an earlier
 * event) already counted it; a submitted or queued event records when the stay began.
 */
export function recordPullRequestEvent(
  flow: QueueFlow,
  event: PullRequestQueueEvent,
  receivedAt: number,
  settings: StayContext,
): { readonly exitStays: ExitStays; readonly events: readonly FlowEvent[] } {
  const update = changing(flow.exitStays ?? emptyExitStays());
  // First what fell due before it came: an exit held past its wait is the poll's to count.
  settle(update, receivedAt, settings);
  const { prNumber } = event;
  // A time past the clocks' slack after the event came is no time it can have happened at (Trunk's
  // clock ahead): the receipt stands in, as for an event without one.
  const at =
    event.at !== undefined && event.at <= receivedAt + CLOCK_SLACK_SECONDS ? event.at : undefined;
  if (event.kind === 'exit') {
    const polled = flow.tracked.get(prNumber) ?? flow.departed.get(prNumber);
    // Never listed by a poll: it entered after the last one (an upper bound without its event).
    const enteredAt = polled?.enteredAt ?? flow.lastPollAt;
    const { outcome } = event;
    apply(update, prNumber, { kind: 'exit_event', outcome, at, receivedAt, enteredAt }, settings);
  } else {
    const enteredAt = at ?? receivedAt;
    const submitted = event.kind === 'submitted';
    const listed = flow.tracked.has(prNumber);
    apply(update, prNumber, { kind: 'entry_event', submitted, at: enteredAt, listed }, settings);
  }
  settle(update, receivedAt, settings);
  return { exitStays: settled(update), events: update.events };
}

/** A copy of a queue's stays that one update changes, and the exits it counted. */
interface StaysUpdate {
  readonly stays: Map<number, StoredStay>;
  readonly bySource: Map<ExitSource, number>;
  readonly events: FlowEvent[];
}

function changing(state: ExitStays): StaysUpdate {
  return { stays: new Map(state.stays), bySource: new Map(state.bySource), events: [] };
}

function settled(update: StaysUpdate): ExitStays {
  return { stays: orShared(update.stays), bySource: update.bySource };
}

/** Steps one PR's stay; a changed stay moves to the end of the map, the most recently changed. */
function apply(
  update: StaysUpdate,
  prNumber: number,
  input: StayInput,
  settings: WebhookExitSettings,
): StayStep | undefined {
  const step = stepStay(unpackStay(update.stays.get(prNumber)), input, settings);
  if (step !== undefined) record(update, prNumber, step);
  return step;
}

/** Counts what `step` counted and keeps its stay, as the most recently changed. */
function record(update: StaysUpdate, prNumber: number, step: StayStep): void {
  for (const count of step.counts) {
    update.events.push({
      kind: 'exit',
      prNumber,
      outcome: count.outcome,
      leftAt: count.leftAt,
      secondsInQueue: count.secondsInQueue,
    });
    update.bySource.set(count.witness, (update.bySource.get(count.witness) ?? 0) + 1);
  }
  update.stays.delete(prNumber);
  if (step.stay !== undefined) update.stays.set(prNumber, packStay(step.stay));
}

/**
 * Counts held exits whose event had its time, forgets what no witness can still need, and keeps
 * MAX_REMEMBERED_EXITS stays at most: the least recently changed go, a held exit counted first.
 */
function settle(update: StaysUpdate, now: number, settings: StayContext): void {
  const tick = { kind: 'tick', now, readFrom: settings.readFrom } as const;
  for (const [prNumber, stay] of [...update.stays]) {
    const step = stepStay(unpackStay(stay), tick, settings);
    if (step !== undefined) record(update, prNumber, step);
  }
  if (update.stays.size <= MAX_REMEMBERED_EXITS) return;
  for (const prNumber of [...update.stays.keys()]) {
    if (update.stays.size <= MAX_REMEMBERED_EXITS) break;
    apply(update, prNumber, { kind: 'flush', now }, settings);
    update.stays.delete(prNumber);
  }
}
