// The queue-entry histories of the pull requests the merge-queue polls saw change or leave (API
// v2): one organization-wide read per merge-queue interval, in batches of 50 pull requests of any
// queue, each queue's poll then taking the timelines of its own. Its calls follow the changes, not
// the queues; a failed read costs one read per interval and hides only the history's families. No
// poll waits for a read: each takes what the reads before it answered.
import { foldAnswers, type AnsweredTimeline } from '../../flow/entryHistory.js';
import {
  askWindows,
  changedWindows,
  countHeldTransitions,
  holdTransitions,
  unlistedWindows,
  withPolledTransitions,
  withoutHistoryReads,
  type UnlistedConclusion,
} from '../../flow/entryHistoryWindows.js';
import { applyFlowEvents } from '../../flow/flowCounts.js';
import type { Logger } from '../../log/logger.js';
import { TrunkApiError } from '../../trunk/errors.js';
import type { QueueFlow, Resubmission } from '../../snapshot/queueFlowTypes.js';
import type { MergeQueueSnapshot } from '../../snapshot/types.js';
import {
  V2_ENTRY_HISTORY_MAX_IDS,
  type V2EntryHistory,
} from '../../trunk/v2EntryHistorySchemas.js';
import { failureFields } from '../failureHint.js';
import { SharedRead, type SharedReadTiming } from '../sharedRead.js';
import type { ReadOptions } from '../readOptions.js';

/** The v2 read the histories are read with (implemented by TrunkV2Client). */
export interface QueueEntryHistoryLister {
  listQueueEntryHistory(
    pullRequestIds: readonly string[],
    options?: ReadOptions,
  ): Promise<V2EntryHistory[]>;
}

/** Calls one read makes at most; the pull requests past them wait for the next read. */
export const MAX_HISTORY_CALLS_PER_READ = 20;

/** Pull requests waiting for a read at most (the longest waiting are read first). */
const MAX_WAITING_PULL_REQUESTS = 10_000;

/** Pull requests set aside for a timeline too large to read, remembered at most (the oldest go). */
const MAX_SET_ASIDE_PULL_REQUESTS = 10_000;

/**
 * `pullRequestIds`: "A member that is not a uuid is a 400 naming it". A pull request's `id` is any
 * string in the definition; one that is not a uuid is never asked for, so it cannot fail a batch.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Answers kept for their queue's next poll at most, and for how many merge-queue intervals. */
const MAX_ANSWERS = 10_000;
const ANSWER_KEEP_INTERVALS = 10;

/**
 * The organization's reads of queue-entry histories: the pull request ids the queue polls asked
 * for, read together at most once per merge-queue interval (SharedRead: a failed read too), and
 * each answer kept until its queue's poll takes it.
 */
export class QueueEntryHistoryReads {
  readonly #waiting = new Set<string>();
  readonly #answers = new Map<string, AnsweredTimeline>();
  /** Pull requests whose timeline alone was larger than trunk.maxResponseBytes: never asked again. */
  readonly #setAside = new Set<string>();
  readonly #read: SharedRead<void>;
  #lister: QueueEntryHistoryLister;
  #timing: SharedReadTiming;
  /** When the last read succeeded (at first: when the reads began, as nothing has failed yet). */
  #lastGoodAt: number;

  constructor(
    lister: QueueEntryHistoryLister,
    timing: SharedReadTiming,
    private readonly now: () => number = () => Date.now() / 1000,
    onFailure?: (error: Error) => void,
    private readonly onSetAside: (pullRequestId: string, error: Error) => void = () => undefined,
  ) {
    this.#lister = lister;
    this.#timing = timing;
    this.#lastGoodAt = now();
    this.#read = new SharedRead((options) => this.#readWaiting(options), timing, now, onFailure);
  }

  /** Follows a reload: a new client or timing; what was asked and answered stays. */
  configure(lister: QueueEntryHistoryLister, timing: SharedReadTiming): void {
    this.#lister = lister;
    this.#timing = timing;
    this.#read.configure((options) => this.#readWaiting(options), timing);
  }

  /**
   * Asks for the timelines of `ids` at the next read; those asked or answered already wait as they
   * are, and those set aside (too large to read) are not asked for.
   */
  ask(ids: Iterable<string>): void {
    for (const id of ids) {
      if (this.#answers.has(id) || this.#waiting.has(id) || this.#setAside.has(id)) continue;
      if (!UUID.test(id)) continue;
      this.#waiting.add(id);
    }
    for (const id of this.#waiting) {
      if (this.#waiting.size <= MAX_WAITING_PULL_REQUESTS) break;
      this.#waiting.delete(id);
    }
  }

  /**
   * Starts a read of what is asked when one is due, and does not wait for it: its answers are for
   * the polls after it, so no poll waits on calls spaced for Trunk's limit. A failed read is told
   * to onFailure.
   */
  refresh(options: ReadOptions): void {
    this.#read.get(options).catch(() => undefined);
  }

  /** Whether a read succeeded within staleAfterSeconds: else the history's families hide. */
  shown(): boolean {
    return this.now() - this.#lastGoodAt <= this.#timing.staleAfterSeconds;
  }

  /** Takes the answers for `ids` (each answer is taken once: a pull request is in one queue). */
  take(ids: Iterable<string>): Map<string, AnsweredTimeline> {
    const taken = new Map<string, AnsweredTimeline>();
    for (const id of ids) {
      const answer = this.#answers.get(id);
      if (answer === undefined) continue;
      taken.set(id, answer);
      this.#answers.delete(id);
    }
    return taken;
  }

  async #readWaiting(options: ReadOptions): Promise<void> {
    this.#forgetOldAnswers();
    const batches: string[][] = [];
    for (const id of this.#waiting) {
      const batch = batches.at(-1);
      if (batch !== undefined && batch.length < V2_ENTRY_HISTORY_MAX_IDS) batch.push(id);
      else if (batches.length < MAX_HISTORY_CALLS_PER_READ) batches.push([id]);
      else break;
    }
    const readStartedAt = this.now();
    let refused: TrunkApiError | undefined;
    let answered = false;
    // One call at a time; the client spaces them for Trunk's limit on history reads.
    for (let calls = 0; calls < MAX_HISTORY_CALLS_PER_READ; calls++) {
      const batch = batches.shift();
      if (batch === undefined) break;
      let groups: V2EntryHistory[];
      try {
        groups = await this.#lister.listQueueEntryHistory(batch, options);
      } catch (error) {
        // "for a pull request with an exceptionally long timeline, page within it using the
        // single-pull-request endpoint instead": an answer over trunk.maxResponseBytes is asked
        // again in halves, next (the calls past this read's wait for the next), and a pull request
        // whose timeline alone is too large is set aside, so that it costs only its own history.
        if (error instanceof TrunkApiError && error.reason === 'response_too_large') {
          const [only] = batch;
          if (batch.length === 1 && only !== undefined) this.#putAside(only, error);
          else {
            const half = Math.ceil(batch.length / 2);
            batches.unshift(batch.slice(0, half), batch.slice(half));
          }
          continue;
        }
        // A 400 is Trunk refusing this batch, and would refuse it again: its pull requests leave
        // the queue of the read (their polls ask for them again, at its end) and the other batches
        // are read. Any other failure ends the read: the rest wait for the next.
        if (!(error instanceof TrunkApiError && error.status === 400)) throw error;
        for (const id of batch) this.#waiting.delete(id);
        refused = error;
        continue;
      }
      const byId = new Map(groups.map((group) => [group.pullRequestId, group.transitions]));
      for (const id of batch) {
        this.#waiting.delete(id);
        // "An id naming a pull request … that was never enqueued, comes back as an empty group".
        this.#answers.set(id, { readStartedAt, transitions: byId.get(id) ?? [] });
      }
      answered = true;
    }
    if (answered || refused === undefined) this.#lastGoodAt = this.now();
    // Told as a failed read (logged); the batches answered keep their answers.
    if (refused !== undefined) throw refused;
  }

  /**
   * Never asked for again: its answer would be as large (a timeline only grows). Its windows wait
   * unanswered until they are given up, as those of a pull request whose reads keep failing.
   */
  #putAside(id: string, error: Error): void {
    this.#waiting.delete(id);
    this.#setAside.add(id);
    for (const old of this.#setAside) {
      if (this.#setAside.size <= MAX_SET_ASIDE_PULL_REQUESTS) break;
      this.#setAside.delete(old);
    }
    this.onSetAside(id, error);
  }

  #forgetOldAnswers(): void {
    const oldest = this.now() - ANSWER_KEEP_INTERVALS * this.#timing.maxAgeSeconds;
    for (const [id, answer] of this.#answers) {
      if (answer.readStartedAt < oldest || this.#answers.size > MAX_ANSWERS) {
        this.#answers.delete(id);
      }
    }
  }
}

interface EntryHistoryReadRequest {
  /** The organization's reads; undefined with `reads.queueEntryHistory` off. */
  readonly reads: QueueEntryHistoryReads | undefined;
  /** The queue's ledger as of the previous successful poll: the windows it still waits for. */
  readonly previousFlow: QueueFlow | undefined;
  /** The snapshot of the previous successful poll; undefined at the queue's first. */
  readonly previous: MergeQueueSnapshot | undefined;
  readonly current: MergeQueueSnapshot;
  readonly options: ReadOptions;
}

/**
 * How a poll's ledger takes the history: `flow` is the ledger the poll's diff made, `latest` the one
 * it was made from (the diff keeps only its own fields; events may have changed the history since
 * the poll began), `eventReasons` the failures the queue's webhook events counted by reason, as they
 * are now (the failed family's reasons are capped across both witnesses), `resubmissions` the
 * listed PRs whose stay the diff ended (which transition it counted for each), `unlisted` the exits
 * the read of concluded entries counted of PRs no poll listed (asked for from the next read on).
 */
export type EntryHistoryUpdate = (
  flow: QueueFlow,
  latest: QueueFlow | undefined,
  eventReasons: ReadonlyMap<string, number>,
  resubmissions: ReadonlyMap<number, Resubmission>,
  unlisted?: readonly UnlistedConclusion[],
) => QueueFlow;

/**
 * This poll's part of the history reads: asks for the pull requests it saw change or leave (and
 * those still unanswered), starts a read when one is due, and returns how the queue's ledger takes
 * the answers read for its pull requests by the time the poll is recorded: their reasons, restarts
 * and the transitions no poll saw.
 */
export function readEntryHistory(request: EntryHistoryReadRequest): EntryHistoryUpdate {
  const { reads, current } = request;
  // Off: nothing is read, and what was counted leaves the page but for the failures.
  if (reads === undefined) return withoutHistoryReads;
  const windows = request.previous === undefined ? [] : changedWindows(request.previous, current);
  const waiting = [
    ...(request.previousFlow?.entryHistory?.asked.keys() ?? []),
    ...windows.map((window) => window.pullRequestId),
  ];
  reads.ask(waiting);
  reads.refresh(request.options);
  const shown = reads.shown();
  return (flow, latest, eventReasons, resubmissions, unlisted = []) => {
    // Taken only by a poll whose ledger takes them: one that fails or is aborted leaves them to the
    // next, whose ledger still asks for them, rather than have them read again.
    const answers = reads.take(waiting);
    const listed =
      latest === undefined
        ? windows
        : withPolledTransitions(windows, latest, current, resubmissions);
    // Asked for at the next read: this poll's was started before its exits were read.
    const polled = [...listed, ...unlistedWindows(unlisted, current.takenAt)];
    reads.ask(polled.slice(listed.length).map((window) => window.pullRequestId));
    // The transitions the poll's diff held wait for their window's answer.
    const { heldTransitions, ...ledger } = flow;
    const asked = askWindows(latest?.entryHistory, polled);
    const held = holdTransitions(asked.history, heldTransitions ?? [], current.takenAt);
    // A read failing for longer than staleAfterSeconds: what the windows held counts now.
    const unanswered = shown ? held : countHeldTransitions(held.history);
    const folded = foldAnswers(
      unanswered.history,
      (id) => answers.get(id),
      current.takenAt,
      eventReasons,
    );
    const transitions = [
      ...held.transitions,
      ...asked.transitions,
      ...(shown ? [] : unanswered.transitions),
      ...folded.transitions,
    ];
    return {
      ...ledger,
      counts: applyFlowEvents(ledger.counts, transitions),
      entryHistory: { ...folded.history, shown },
    };
  };
}

/** The logger's line for a pull request set aside, once. */
export function historySetAside(logger: Logger): (pullRequestId: string, error: Error) => void {
  return (pullRequestId, error) => {
    logger.warn(
      { ...failureFields(error), pullRequestId },
      `the queue-entry history of pull request ${pullRequestId} alone is larger than trunk.maxResponseBytes (${error.message}); it is not asked for again, and the reasons, restarts and transitions no poll saw of its windows are not counted`,
    );
  };
}

/** The logger's line for a failed read, once per read. */
export function historyReadFailed(logger: Logger): (error: Error) => void {
  return (error) => {
    logger.warn(
      failureFields(error),
      `the queue-entry history of the pull requests the polls saw change could not be read (${error.message}); tried again at the next merge-queue interval`,
    );
  };
}
