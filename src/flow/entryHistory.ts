// A merge queue's counts from the queue-entry histories of its pull requests (API v2): what each
// answered window (entryHistoryWindows.ts says which are asked) adds — exits by reason, restarts by
// cause, and the transitions no poll could see, each once however often it is read. Pure; every
// function returns new values.
import {
  ENTRY_HISTORY_KEEP_SECONDS,
  MAX_COUNTED_TRANSITIONS,
  UNKNOWN_REASON,
  reasonLabel,
  type AskedWindow,
  type CountedTransitions,
  type EntryHistory,
  type WitnessedFailure,
} from '../snapshot/entryHistoryTypes.js';
import { FINAL_PR_STATES } from '../snapshot/exitOutcome.js';
import { orShared } from '../snapshot/noEntries.js';
import type { FlowEvent } from '../snapshot/queueFlowTypes.js';
import type { EntryTransition } from '../trunk/v2EntryHistorySchemas.js';
import { v1Value } from '../trunk/v2Vocabulary.js';
import {
  countedLines,
  countedSince,
  joinedLines,
  latestEntered,
  lineCount,
  transitionLine,
} from './countedTransitions.js';
import { heldTransition, heldTransitions, type FoldedHistory } from './entryHistoryWindows.js';
import { forgetOldFailures, meetFailure } from './failureWitnesses.js';

/** The states a restart sends an entry back to `pending` from, in v2's spelling. */
const RESTARTED_FROM: ReadonlySet<string> = new Set(['testing', 'testsPassed', 'pendingFailure']);

/** An answer of the organization's history reads: a pull request's timeline and when its read began. */
export interface AnsweredTimeline {
  /** The exporter's clock: a window asked after this is not in it. */
  readonly readStartedAt: number;
  readonly transitions: readonly EntryTransition[];
}

/**
 * The history after the answers `timelineOf` has for its waiting windows, at `now` (the exporter's
 * clock): each transition in an answered window counts once — a failure unless a webhook event
 * counted it (its label beside the reasons the events counted so far, `eventReasons`), a
 * cancellation, a restart, and the transition unless it is the one the polls counted
 * (polledTransition()); every step of a window whose transition the poll held (the poll's pair
 * too when none is into its state). Windows older than ENTRY_HISTORY_KEEP_SECONDS are given up,
 * their held transitions counted as the polls saw them.
 */
export function foldAnswers(
  history: EntryHistory,
  timelineOf: (pullRequestId: string) => AnsweredTimeline | undefined,
  now: number,
  eventReasons: ReadonlyMap<string, number>,
): FoldedHistory {
  // Most polls find no answer and nothing to give up: the history stays as it is, uncopied.
  const settled = [...history.asked].every(
    ([id, windows]) =>
      timelineOf(id) === undefined &&
      windows.every((window) => now - window.askedAt <= ENTRY_HISTORY_KEEP_SECONDS),
  );
  if (settled) return { history, transitions: [] };
  const fold = new HistoryFold(history, eventReasons);
  const asked = new Map(history.asked);
  for (const [id, windows] of history.asked) {
    const timeline = timelineOf(id);
    const waiting = windows.filter(
      (window) =>
        (timeline === undefined || window.askedAt > timeline.readStartedAt) &&
        now - window.askedAt <= ENTRY_HISTORY_KEEP_SECONDS,
    );
    for (const window of windows) {
      if (timeline !== undefined && window.askedAt <= timeline.readStartedAt) {
        fold.window(id, window, timeline.transitions);
      } else if (now - window.askedAt > ENTRY_HISTORY_KEEP_SECONDS) {
        // Given up: its held transition counts as the poll saw it.
        fold.transitions.push(...heldTransitions([window]));
      }
    }
    if (waiting.length === 0) asked.delete(id);
    else if (waiting.length < windows.length) asked.set(id, waiting);
  }
  return { history: fold.result(asked, now), transitions: fold.transitions };
}

/** One fold's copies of the counts, and the transitions it found. */
class HistoryFold {
  readonly transitions: FlowEvent[] = [];
  readonly #failed: Map<string, number>;
  readonly #cancelled: Map<string, number>;
  readonly #restarts: Map<string, number>;
  readonly #counted: Map<string, CountedTransitions>;
  readonly #failures: Map<number, readonly WitnessedFailure[]>;
  readonly #base: EntryHistory;
  readonly #eventReasons: ReadonlyMap<string, number>;
  /** The counted transitions of each pull request this fold reads, as a set while it adds to them. */
  readonly #lines = new Map<string, Set<string>>();

  constructor(base: EntryHistory, eventReasons: ReadonlyMap<string, number>) {
    this.#base = base;
    this.#eventReasons = eventReasons;
    this.#failed = new Map(base.failed);
    this.#cancelled = new Map(base.cancelled);
    this.#restarts = new Map(base.restarts);
    this.#counted = new Map(base.counted);
    this.#failures = new Map(base.failures);
  }

  /** Counts the transitions of `window` in the timeline of pull request `id`. */
  window(id: string, window: AskedWindow, timeline: readonly EntryTransition[]): void {
    const chain = windowChain(window, timeline);
    const polled = polledTransition(window, chain);
    // A transition the poll held is told by the chain's steps, the step into its state among them.
    const skipped = window.held === undefined ? polled : -1;
    if (window.held !== undefined && polled === -1) {
      this.transitions.push(heldTransition(window.held));
    }
    for (const [index, { from, to }] of chain.entries()) {
      const lines = this.#linesOf(id);
      const line = transitionLine(to.at, from.state, to.state);
      if (lines.has(line)) continue;
      lines.add(line);
      this.#countReason(window.prNumber, from.state, to);
      if (index !== skipped) {
        this.transitions.push({
          kind: 'transition',
          from: v1Value(from.state),
          to: v1Value(to.state),
          secondsInFrom: undefined,
        });
      }
    }
  }

  #linesOf(id: string): Set<string> {
    let lines = this.#lines.get(id);
    if (lines === undefined) {
      const counted = this.#counted.get(id);
      lines = new Set(counted === undefined ? [] : countedLines(counted));
      this.#lines.set(id, lines);
    }
    return lines;
  }

  result(asked: ReadonlyMap<string, readonly AskedWindow[]>, now: number): EntryHistory {
    for (const [id, lines] of this.#lines) {
      if (lines.size > 0) this.#counted.set(id, joinedLines(lines));
    }
    const counted = new Map<string, CountedTransitions>();
    let transitions = 0;
    for (const [id, ofPullRequest] of this.#counted) {
      // Asked for again only once back in the queue, for what follows its return: a stay that
      // concluded is forgotten once no window waits for it, else a queue would keep six hours of
      // its pull requests' transitions.
      if (!asked.has(id) && latestEntered(ofPullRequest, FINAL_PR_STATES)) continue;
      const recent = countedSince(ofPullRequest, now - ENTRY_HISTORY_KEEP_SECONDS);
      if (recent === undefined) continue;
      counted.set(id, recent);
      transitions += lineCount(recent);
    }
    for (const [id, ofPullRequest] of counted) {
      if (transitions <= MAX_COUNTED_TRANSITIONS) break;
      counted.delete(id);
      transitions -= lineCount(ofPullRequest);
    }
    return {
      ...this.#base,
      failed: orShared(this.#failed),
      cancelled: orShared(this.#cancelled),
      restarts: orShared(this.#restarts),
      asked: orShared(asked),
      counted: orShared(counted),
      failures: forgetOldFailures(this.#failures, now),
    };
  }

  #countReason(prNumber: number, from: string, to: EntryTransition): void {
    const reason = to.reason ?? UNKNOWN_REASON;
    if (to.state === 'failed') {
      if (!meetFailure(this.#failures, prNumber, to.at, 'history')) {
        increment(this.#failed, reason, this.#eventReasons);
      }
    } else if (to.state === 'cancelled') {
      increment(this.#cancelled, reason);
    } else if (to.state === 'pending' && RESTARTED_FROM.has(from)) {
      increment(this.#restarts, reason);
    }
  }
}

/** A transition with the state it left. */
interface Step {
  readonly from: EntryTransition;
  readonly to: EntryTransition;
}

/**
 * The transitions of `window`: after the state the earlier poll saw began, up to the state the
 * later poll saw, or, for a pull request gone, to the end of its stay however Trunk's clock dates
 * it, then on to when the poll that saw it gone ended (it may have been submitted again and ended
 * again in between; what follows is another stay's, which the polls see begin).
 */
function windowChain(window: AskedWindow, timeline: readonly EntryTransition[]): Step[] {
  const chain: Step[] = [];
  const until = window.until ?? window.askedAt;
  let ended = window.until !== undefined;
  for (let index = stayStart(window, timeline, until); index < timeline.length; index++) {
    const from = timeline[index - 1] as EntryTransition;
    const to = timeline[index] as EntryTransition;
    if (to.at <= window.after) continue;
    if (ended && to.at > until) break;
    chain.push({ from, to });
    if (FINAL_PR_STATES.has(to.state)) ended = true;
  }
  return chain;
}

/**
 * The first step of `window` the chain may hold: for a pull request listed for the first time, the
 * step after the one that began the earliest of its stays (a new entry's creation, or a
 * resubmission after a conclusion, up to `until`) that began after the poll before, else after the
 * one that began its current stay, so that neither a stay under way before that poll nor its
 * conclusion counts in this queue (it began before the exporter watched it here, or in another
 * queue); else the timeline's second entry.
 */
function stayStart(
  window: AskedWindow,
  timeline: readonly EntryTransition[],
  until: number,
): number {
  if (window.firstListing !== true) return 1;
  let start: number | undefined;
  for (let index = timeline.length - 1; index >= 0; index--) {
    const entered = timeline[index] as EntryTransition;
    const began =
      index === 0 || FINAL_PR_STATES.has((timeline[index - 1] as EntryTransition).state);
    if (!began || entered.at > until) continue;
    if (start !== undefined && entered.at <= window.after) break;
    start = index + 1;
  }
  return start ?? 1;
}

/**
 * Which step of the chain the polls counted (queueDiff.ts): for a departure, the end of the last
 * stay (its exit's outcome is its latest conclusion); for a pull request still listed, the last
 * step into the state they counted (window.polledTo: the end of a stay, or the state the later
 * poll saw; the last end of a stay when none is into that outcome); -1 when they counted none.
 */
function polledTransition(window: AskedWindow, chain: readonly Step[]): number {
  const lastEnd = chain.findLastIndex(({ to }) => FINAL_PR_STATES.has(to.state));
  if (window.to === undefined) return lastEnd;
  const { polledTo } = window;
  if (polledTo === undefined) return -1;
  const into = chain.findLastIndex(({ to }) => v1Value(to.state) === polledTo);
  return into === -1 && FINAL_PR_STATES.has(polledTo) ? lastEnd : into;
}

/**
 * Counts one more under `reason`'s label (reasonLabel), beside the other witness's `alsoCounted`
 * for failures.
 */
function increment(
  counts: Map<string, number>,
  reason: string,
  alsoCounted?: ReadonlyMap<string, number>,
): void {
  const label = reasonLabel(reason, counts, alsoCounted);
  counts.set(label, (counts.get(label) ?? 0) + 1);
}
