// Which stretches of which queue-entry timelines (API v2) a merge queue's polls ask for: the window
// of each pull request two polls saw change, enter its state again, leave or first appear, with
// the transition the polls counted or held for it; and, where no answer comes (the read off,
// stale, or a window given up), the held transitions counted as the polls saw them. What an
// answered window adds, entryHistory.ts counts. Pure; every function returns new values.
import {
  EMPTY_ENTRY_HISTORY,
  MAX_ASKED_PULL_REQUESTS,
  type AskedWindow,
  type EntryHistory,
} from '../snapshot/entryHistoryTypes.js';
import type {
  FlowEvent,
  HeldTransition,
  QueueFlow,
  Resubmission,
} from '../snapshot/queueFlowTypes.js';
import type { MergeQueueSnapshot } from '../snapshot/types.js';
import { withHistoryReadOff } from './failureWitnesses.js';
import { applyFlowEvents } from './flowCounts.js';
import { polledTransitionTo } from './queueDiff.js';

/** One pull request's window to ask for, with its id. */
export interface PullRequestWindow extends AskedWindow {
  readonly pullRequestId: string;
}

/**
 * The pull requests of `previous` whose entry `current` shows changed (another state, or the same
 * state entered again: a restart between the polls) or gone: the stretch of each timeline between
 * what the two polls saw, with the transition the polls counted as its states alone say
 * (withPolledTransitions() says it as the poll's diff did). And the pull requests `current` lists
 * first: what each went through after `previous` up to the state `current` sees (a restart before
 * any poll listed it), of which the polls counted nothing. Pull requests without an id cannot be
 * asked for.
 */
export function changedWindows(
  previous: MergeQueueSnapshot,
  current: MergeQueueSnapshot,
): PullRequestWindow[] {
  const listed = new Map(current.pullRequests.map((pr) => [pr.number, pr]));
  const windows: PullRequestWindow[] = [];
  for (const pr of previous.pullRequests) {
    if (pr.pullRequestId === undefined) continue;
    const now = listed.get(pr.number);
    if (now !== undefined && now.state === pr.state && now.stateChangedAt === pr.stateChangedAt) {
      continue;
    }
    windows.push({
      pullRequestId: pr.pullRequestId,
      prNumber: pr.number,
      askedAt: current.takenAt,
      from: pr.state,
      after: pr.stateChangedAt ?? previous.takenAt,
      to: now?.state,
      until: now === undefined ? undefined : (now.stateChangedAt ?? current.takenAt),
      polledTo: now === undefined || now.state === pr.state ? undefined : now.state,
    });
  }
  const before = new Set(previous.pullRequests.map((pr) => pr.number));
  for (const pr of current.pullRequests) {
    if (pr.pullRequestId === undefined || before.has(pr.number)) continue;
    before.add(pr.number);
    windows.push({
      pullRequestId: pr.pullRequestId,
      prNumber: pr.number,
      askedAt: current.takenAt,
      // No poll saw it in an earlier state: the window is what followed the poll before.
      from: pr.state,
      after: previous.takenAt,
      to: pr.state,
      until: pr.stateChangedAt ?? current.takenAt,
      polledTo: undefined,
      firstListing: true,
    });
  }
  return windows;
}

/**
 * A conclusion that a read of concluded entries counted as an exit of a pull request that neither
 * of the poll's two listings showed (it entered and left between polls): its history is asked
 * from `after` (no earlier than the read's window, nor than a conclusion of it known before) to
 * its conclusion.
 */
export interface UnlistedConclusion {
  readonly pullRequestId: string;
  readonly prNumber: number;
  /** How it concluded, in the polls' spelling (`failed`). */
  readonly outcome: string;
  /** Where its stay can have begun at the earliest (Trunk's clock). */
  readonly after: number;
  /** When it concluded (Trunk's clock). */
  readonly concludedAt: number;
}

/**
 * The windows of `conclusions`, asked at `askedAt`, each like a first listing's: no poll counted
 * a transition of its stay, whose every step counts, the stays under way at its `after` excepted.
 */
export function unlistedWindows(
  conclusions: readonly UnlistedConclusion[],
  askedAt: number,
): PullRequestWindow[] {
  return conclusions.map(({ pullRequestId, prNumber, outcome, after, concludedAt }) => ({
    pullRequestId,
    prNumber,
    askedAt,
    from: outcome,
    after,
    to: outcome,
    until: concludedAt,
    polledTo: undefined,
    firstListing: true,
  }));
}

/**
 * The windows with the transition the poll's diff counted for each pull request still listed
 * (polledTransitionTo(): none for one its ledger did not track, the outcome of a stay that a
 * resubmission ended from the state the earlier poll saw, else the state this poll lists).
 */
export function withPolledTransitions(
  windows: readonly PullRequestWindow[],
  ledger: QueueFlow,
  current: MergeQueueSnapshot,
  resubmissions: ReadonlyMap<number, Resubmission>,
): PullRequestWindow[] {
  const listed = new Map(current.pullRequests.map((pr) => [pr.number, pr]));
  return windows.map((window) => {
    const pr = listed.get(window.prNumber);
    if (pr === undefined) return window;
    const seen = ledger.tracked.get(window.prNumber);
    const polledTo = polledTransitionTo(seen, pr, resubmissions.get(window.prNumber));
    return polledTo === window.polledTo ? window : { ...window, polledTo };
  });
}

/**
 * The history with `windows` waiting for their answer, and the held transitions of the windows it
 * drops (those of the pull requests past MAX_ASKED_PULL_REQUESTS), counted as the polls saw them.
 */
export function askWindows(
  history: EntryHistory | undefined,
  windows: readonly PullRequestWindow[],
): FoldedHistory {
  const base = history ?? EMPTY_ENTRY_HISTORY;
  if (windows.length === 0) return { history: base, transitions: [] };
  const transitions: FlowEvent[] = [];
  const asked = new Map(base.asked);
  for (const { pullRequestId, ...window } of windows) {
    const waiting = asked.get(pullRequestId) ?? [];
    asked.delete(pullRequestId);
    asked.set(pullRequestId, [...waiting, window]);
  }
  for (const [id, dropped] of asked) {
    if (asked.size <= MAX_ASKED_PULL_REQUESTS) break;
    asked.delete(id);
    transitions.push(...heldTransitions(dropped));
  }
  return { history: { ...base, asked }, transitions };
}

/**
 * The history with the transitions the poll's diff held (QueueFlow.heldTransitions), asked at
 * `askedAt`: each goes to its pull request's window as its `held` — for a pull request still
 * listed, the window this poll asked (its `polledTo` the state the diff saw); for one gone, its
 * latest window of a departure — and one without such a window counts now, as the poll saw it.
 */
export function holdTransitions(
  history: EntryHistory,
  held: readonly HeldTransition[],
  askedAt: number,
): FoldedHistory {
  if (held.length === 0) return { history, transitions: [] };
  const transitions: FlowEvent[] = [];
  const idOf = new Map<number, string>();
  for (const [id, windows] of history.asked) {
    for (const window of windows) idOf.set(window.prNumber, id);
  }
  const asked = new Map(history.asked);
  for (const { prNumber, from, to } of held) {
    const id = idOf.get(prNumber);
    const windows = id === undefined ? [] : (asked.get(id) ?? []);
    const index = windows.findLastIndex(
      (window) =>
        window.prNumber === prNumber &&
        window.held === undefined &&
        (window.to === undefined || (window.askedAt === askedAt && window.firstListing !== true)),
    );
    const window = windows[index];
    if (id === undefined || window === undefined) {
      transitions.push(heldTransition({ from, to }));
      continue;
    }
    const holding = window.to === undefined ? window : { ...window, polledTo: to };
    asked.set(id, windows.with(index, { ...holding, held: { from, to } }));
  }
  return { history: { ...history, asked }, transitions };
}

/**
 * The history with the held transitions of its windows counted, as the polls saw them, for a read
 * that does not answer (stale, or turned off): the windows wait on as windows whose transition the
 * polls counted.
 */
export function countHeldTransitions(history: EntryHistory | undefined): FoldedHistory {
  const base = history ?? EMPTY_ENTRY_HISTORY;
  const transitions: FlowEvent[] = [];
  const asked = new Map(base.asked);
  for (const [id, windows] of base.asked) {
    const held = heldTransitions(windows);
    if (held.length === 0) continue;
    transitions.push(...held);
    asked.set(
      id,
      windows.map(({ held: _, ...window }) => window),
    );
  }
  if (transitions.length === 0) return { history: base, transitions };
  return { history: { ...base, asked }, transitions };
}

/**
 * A poll's ledger `flow` (made from `latest`) where no history is read: `reads.queueEntryHistory`
 * off, or the queue polled through API v1 after a reload removed the API key. What the windows
 * held counts as the polls saw it, and the failures the histories counted stay, since
 * `…_pull_requests_failed_total` must not go down; the rest of what they counted leaves the page.
 */
export function withoutHistoryReads(flow: QueueFlow, latest: QueueFlow | undefined): QueueFlow {
  const { heldTransitions: pollHeld, ...ledger } = flow;
  const held = countHeldTransitions(latest?.entryHistory);
  return {
    ...ledger,
    counts: applyFlowEvents(ledger.counts, [...asPolled(pollHeld ?? []), ...held.transitions]),
    entryHistory: withHistoryReadOff(held.history),
  };
}

/** The held transitions of `windows`, as the polls saw them. */
export function heldTransitions(windows: readonly AskedWindow[]): FlowEvent[] {
  return windows.flatMap(({ held }) => (held === undefined ? [] : [heldTransition(held)]));
}

/** Transitions a poll held, counted as it saw them (with the history read off, none is held). */
export function asPolled(held: readonly HeldTransition[]): FlowEvent[] {
  return held.map(heldTransition);
}

/** A held transition counted as the poll saw it; its time in state was observed then. */
export function heldTransition({
  from,
  to,
}: {
  readonly from: string;
  readonly to: string;
}): FlowEvent {
  return { kind: 'transition', from, to, secondsInFrom: undefined };
}

/** A history after one of its steps (windows asked or held, answers folded), and what it counted. */
export interface FoldedHistory {
  readonly history: EntryHistory;
  /** Transitions no poll saw, for trunk_merge_queue_state_transitions_total. */
  readonly transitions: readonly FlowEvent[];
}
