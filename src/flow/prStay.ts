// Each exit counted once whichever witnesses see it. A PR's stay goes entered (its event said when
// it began) → held (a poll saw it gone; with webhooks on its event has 2 × the poll interval to
// come, off it is counted at once) → counted (by the event, or by the poll once the wait is over,
// or by a read of concluded entries) → closed (the polls are done with it) → forgotten once the
// reads of concluded entries no longer reach it. stepStay is the one place a stay changes phase
// (exitStays.ts feeds it the witnesses of a whole queue). Pure.
import {
  COUNTED_EXIT_RETENTION_SECONDS,
  type CountedExit,
  type ExitSource,
  type HeldExit,
  type PrStay,
  type WebhookExitSettings,
} from '../snapshot/prStayTypes.js';
import type { ExitOutcome } from '../snapshot/queueFlowTypes.js';
import { CLOCK_SLACK_SECONDS } from '../trunk/timestamps.js';
import type { DepartedExit } from './queueDiff.js';

/** What one witness (or the clock) tells a PR's stay. */
export type StayInput =
  /** Its merged/failed/canceled event; `enteredAt` is the polls' estimate of when the stay began. */
  | {
      readonly kind: 'exit_event';
      readonly outcome: ExitOutcome;
      readonly at: number | undefined;
      readonly receivedAt: number;
      readonly enteredAt: number;
    }
  /** Its submitted or queued event (`at` defaults to its receipt); `listed`: a poll tracks it. */
  | {
      readonly kind: 'entry_event';
      readonly submitted: boolean;
      readonly at: number;
      readonly listed: boolean;
    }
  /**
   * A poll taken at `takenAt` lists it, in a state it entered at `stateChangedAt` (when known);
   * `final`: a final state (API v1 may still list a PR that left).
   */
  | {
      readonly kind: 'listed';
      readonly takenAt: number;
      readonly stateChangedAt: number | undefined;
      readonly final: boolean;
    }
  /** A poll taken at `takenAt` saw it gone, as `departure`. */
  | { readonly kind: 'gone'; readonly departure: DepartedExit; readonly takenAt: number }
  /**
   * A read of concluded entries (API v2) with the poll taken at `takenAt` found an exit no poll saw
   * leave: it concluded as `outcome` at `leftAt`, after entering at `enteredAt`.
   */
  | {
      readonly kind: 'concluded';
      readonly outcome: ExitOutcome;
      readonly enteredAt: number;
      readonly leftAt: number;
      readonly takenAt: number;
    }
  /** A poll taken at `takenAt` neither lists it nor waits for its lookup. */
  | { readonly kind: 'unlisted'; readonly takenAt: number }
  /**
   * Time passed to `now`: a held exit may fall due, a closed one be forgotten once the reads of
   * concluded entries (API v2) no longer reach it: they list conclusions at or after `readFrom`.
   */
  | { readonly kind: 'tick'; readonly now: number; readonly readFrom: number | undefined }
  /** Without webhooks (or a reload turned them off): a held exit is counted from its poll now. */
  | { readonly kind: 'flush'; readonly now: number };

/** An exit counted by one step. */
export interface StayCount {
  readonly witness: ExitSource;
  readonly outcome: ExitOutcome;
  /** When the PR left: the event's time, else the poll's (or the read's) best estimate. */
  readonly leftAt: number;
  readonly secondsInQueue: number;
}

/** A step's result: the stay after it (undefined: nothing left to remember) and what it counted. */
export interface StayStep {
  readonly stay: PrStay | undefined;
  readonly counts: readonly StayCount[];
  /** Set when a poll's listing is a new stay whose polls began at this time. */
  readonly relistedSince?: number;
}

/** The PR's stay after `input`; undefined when the input changes nothing. */
export function stepStay(
  stay: PrStay | undefined,
  input: StayInput,
  settings: WebhookExitSettings,
): StayStep | undefined {
  const exit = lastExit(stay);
  switch (input.kind) {
    case 'exit_event': {
      // The event's time is Trunk's clock, the polls' the exporter's: up to the clocks' slack apart.
      const slack = Math.max(settings.intervalSeconds, CLOCK_SLACK_SECONDS);
      if (exit !== undefined && isCountedAlready(exit, input.at, input.receivedAt, slack)) {
        return undefined;
      }
      const { outcome, receivedAt } = input;
      const leftAt = input.at ?? receivedAt;
      const held = stay?.phase === 'held' ? stay.held : undefined;
      // Within the hold an untimed event can only be the exit the poll saw; a timed one is, unless
      // it left after the PR came back (its entry event), or well after the poll saw it gone.
      const seen =
        held !== undefined &&
        (input.at === undefined ||
          (held.restartedAt === undefined
            ? leftAt <= held.goneAt + slack
            : leftAt <= held.restartedAt))
          ? held
          : undefined;
      // A held exit the event is not for is an earlier stay's, which has had its turn.
      const counts =
        held !== undefined && seen === undefined ? [countFromPoll(held, receivedAt).count] : [];
      const enteredAt =
        seen?.enteredAt ?? (stay?.phase === 'entered' ? stay.enteredAt : input.enteredAt);
      counts.push({ witness: 'event', outcome, leftAt, secondsInQueue: leftAt - enteredAt });
      const counted: CountedExit = {
        witness: 'event',
        outcome,
        leftAt,
        countedAt: receivedAt,
        goneBy: seen?.goneAt,
        restartedAt: undefined,
      };
      return { stay: { phase: 'counted', exit: counted }, counts };
    }
    case 'entry_event': {
      const previous =
        exit !== undefined && exit.restartedAt === undefined && input.at > exit.leftAt
          ? { ...exit, restartedAt: input.at }
          : exit;
      // While held, the held exit's own count decides the stay's start; an entry after it left
      // begins a later stay, whose exit event is not the held one's.
      if (stay?.phase === 'held') {
        const { held } = stay;
        const restartedAt =
          held.restartedAt === undefined && input.at > held.leftAt ? input.at : held.restartedAt;
        return { stay: { ...stay, held: { ...held, restartedAt }, previous }, counts: [] };
      }
      // A submission starts the stay; a queued event only when nothing else says when it began.
      if (input.submitted || !(stay?.phase === 'entered' || input.listed)) {
        return { stay: { phase: 'entered', enteredAt: input.at, previous }, counts: [] };
      }
      return previous === exit ? undefined : { stay: withExit(stay, previous), counts: [] };
    }
    case 'listed': {
      if (exit === undefined || exit.restartedAt !== undefined) return undefined;
      if (exit.goneBy !== undefined) {
        if (input.takenAt <= exit.goneBy) return undefined;
        return { stay: withExit(stay, { ...exit, restartedAt: exit.goneBy }), counts: [] };
      }
      // A listing within an interval of the event may be a poll that read the queue before it.
      if (input.takenAt - settings.intervalSeconds <= exit.countedAt) return undefined;
      // Still the stay the event ended, listed late: in its final state, or in a state it entered
      // before it left. A stay that began after the exit entered its state after it. Only Trunk's
      // time of the exit compares with Trunk's stateChangedAt: an event without one (its exit
      // placed at its arrival) cannot tell a late listing from a quick resubmission.
      const leftAtByTrunk = exit.leftAt !== exit.countedAt;
      if (
        input.final ||
        (leftAtByTrunk && input.stateChangedAt !== undefined && input.stateChangedAt <= exit.leftAt)
      ) {
        return undefined;
      }
      // The polls never saw the old stay end (it left and came back between two of them).
      return {
        stay: withExit(stay, { ...exit, goneBy: exit.countedAt, restartedAt: exit.leftAt }),
        counts: [],
        relistedSince: exit.countedAt,
      };
    }
    case 'gone': {
      const { departure } = input;
      if (
        exit !== undefined &&
        exit.goneBy === undefined &&
        (exit.restartedAt === undefined || departure.leftAt <= exit.restartedAt)
      ) {
        // The departure of the stay whose exit an event counted: the polls are done with it.
        return { stay: withExit(stay, { ...exit, goneBy: departure.goneAt }), counts: [] };
      }
      const counts: StayCount[] = [];
      let previous = exit;
      if (stay?.phase === 'held') {
        // Still held from an earlier stay: that one has waited its turn.
        const poll = countFromPoll(stay.held, input.takenAt);
        counts.push(poll.count);
        previous = poll.exit;
      }
      const held: HeldExit = {
        outcome: departure.outcome,
        enteredAt: stay?.phase === 'entered' ? stay.enteredAt : departure.enteredAt,
        leftAt: departure.leftAt,
        goneAt: departure.goneAt,
        dueAt: departure.goneAt + 2 * settings.intervalSeconds,
      };
      return { stay: { phase: 'held', held, previous }, counts };
    }
    case 'concluded': {
      // Its event (or a poll's departure) counted it already.
      if (
        exit !== undefined &&
        isCountedAlready(exit, input.leftAt, input.takenAt, settings.intervalSeconds)
      ) {
        return undefined;
      }
      if (stay?.phase === 'held' && input.leftAt <= stay.held.goneAt + settings.intervalSeconds) {
        return undefined;
      }
      const { outcome, leftAt, takenAt } = input;
      // The polls are done with it: a later listing is a new stay, a late event this one's.
      const counted: CountedExit = {
        witness: 'poll',
        outcome,
        leftAt,
        countedAt: takenAt,
        goneBy: takenAt,
        restartedAt: undefined,
      };
      return {
        stay: { phase: 'counted', exit: counted },
        counts: [{ witness: 'poll', outcome, leftAt, secondsInQueue: leftAt - input.enteredAt }],
      };
    }
    case 'unlisted':
      // An event's exit no poll has listed since, nor can list any more.
      if (
        exit === undefined ||
        exit.goneBy !== undefined ||
        input.takenAt - settings.intervalSeconds <= exit.countedAt
      ) {
        return undefined;
      }
      return { stay: withExit(stay, { ...exit, goneBy: input.takenAt }), counts: [] };
    case 'tick': {
      let next = stay;
      const counts: StayCount[] = [];
      if (next?.phase === 'held' && next.held.dueAt <= input.now) {
        const poll = countFromPoll(next.held, input.now);
        next = { phase: 'counted', exit: poll.exit };
        counts.push(poll.count);
      }
      const last = lastExit(next);
      // Until a poll is done with it, and the reads of concluded entries, an exit must stay to
      // keep them from counting it again.
      if (
        last?.goneBy !== undefined &&
        input.now - last.countedAt > COUNTED_EXIT_RETENTION_SECONDS &&
        (input.readFrom === undefined ||
          latestLeave(last) + settings.intervalSeconds < input.readFrom)
      ) {
        next = next?.phase === 'counted' ? undefined : withExit(next, undefined);
      }
      return next === stay ? undefined : { stay: next, counts };
    }
    case 'flush': {
      if (stay?.phase !== 'held') return undefined;
      const poll = countFromPoll(stay.held, input.now);
      return { stay: { phase: 'counted', exit: poll.exit }, counts: [poll.count] };
    }
  }
}

/**
 * Whether an exit event (of transition time `at`, received at `receivedAt`) is the one `exit`
 * already counted. A later stay's exit is not: one after the later stay began, or one well after
 * the first ("well after": more than `slack` seconds, the delay and clock difference allowed
 * between Trunk's timestamps and the exporter's polls). Without a timestamp only a known later
 * stay tells.
 */
function isCountedAlready(
  exit: CountedExit,
  at: number | undefined,
  receivedAt: number,
  slack: number,
): boolean {
  if (exit.restartedAt !== undefined && (at ?? receivedAt) > exit.restartedAt) return false;
  if (at === undefined) return true;
  return at <= latestLeave(exit) + slack;
}

/**
 * The latest time the PR of a counted exit can have left: its event's timestamp, else the poll
 * that saw it gone (or that counted it), which came after it.
 */
export function latestLeave(exit: CountedExit): number {
  return exit.witness === 'event' ? exit.leftAt : (exit.goneBy ?? exit.leftAt);
}

function countFromPoll(held: HeldExit, now: number): { exit: CountedExit; count: StayCount } {
  return {
    exit: {
      witness: 'poll',
      outcome: held.outcome,
      leftAt: held.leftAt,
      countedAt: now,
      goneBy: held.goneAt,
      restartedAt: undefined,
    },
    count: {
      witness: 'poll',
      outcome: held.outcome,
      leftAt: held.leftAt,
      secondsInQueue: held.leftAt - held.enteredAt,
    },
  };
}

/** The PR's latest counted exit: the stay's own, or the previous stay's. */
export function lastExit(stay: PrStay | undefined): CountedExit | undefined {
  if (stay === undefined) return undefined;
  return stay.phase === 'counted' ? stay.exit : stay.previous;
}

/** `stay` with its latest counted exit replaced (undefined: nothing left when counted). */
function withExit(stay: PrStay | undefined, exit: CountedExit | undefined): PrStay | undefined {
  if (stay === undefined || stay.phase === 'counted') {
    return exit === undefined ? undefined : { phase: 'counted', exit };
  }
  return { ...stay, previous: exit };
}
