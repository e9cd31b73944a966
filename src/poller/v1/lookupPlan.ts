// Which enqueued PRs a merge-queue poll looks up with getSubmittedPullRequest. A lookup is only
// worth its call when the answer could differ from the last one: the queue item says when the PR's
// state last changed (`stateChangedAt`), which commit it is (`prSha`) and, on the live service,
// its state. A PR whose item is unchanged since the last successful poll keeps its last looked-up
// state and readiness; readiness can change without a state change, so each such PR is still
// looked up once per recheck interval, at its own phase so the rechecks of a queue spread out.
import { fnv1a64 } from '../../sharding/fnv1a.js';
import type { EnqueuedPullRequest, SubmittedPullRequest } from '../../trunk/schemas.js';

/**
 * The part of a getSubmittedPullRequest answer a poll reads. Only this is remembered: the title,
 * author, ids and the rest of every remembered answer would otherwise stay on the heap between polls.
 */
export type PullRequestDetail = Pick<SubmittedPullRequest, 'state' | 'readiness'>;

/** What the last successful poll learned about one PR, and from which version of its queue item. */
export interface RememberedLookup {
  readonly stateChangedAt: string | undefined;
  readonly sha: string | undefined;
  /** The queue item's own `state` (live service only). */
  readonly itemState: string | undefined;
  readonly detail: PullRequestDetail;
  /** Unix seconds of the poll that looked it up. */
  readonly lookedUpAt: number;
}

/** Remembered lookups of one merge queue, by PR number. */
export type LookupMemory = ReadonlyMap<number, RememberedLookup>;

/** The lookups one poll makes, and the answers it reuses instead. */
export interface LookupPlan {
  readonly lookUp: readonly EnqueuedPullRequest[];
  readonly reuse: ReadonlyMap<number, PullRequestDetail>;
}

interface PlanOptions {
  /** Unix seconds of this poll. */
  readonly now: number;
  /** An unchanged PR is looked up again once per this many seconds; 0 looks up every poll. */
  readonly recheckSeconds: number;
  /** Mixed into each PR's recheck phase (the queue's key), so queues do not recheck in step. */
  readonly phaseSeed: string;
}

/** A PR without a state in its queue item, or one waiting on readiness, is worth a lookup at all. */
export function needsLookup(item: EnqueuedPullRequest): boolean {
  return item.state === undefined || item.state === 'not_ready';
}

/**
 * Splits the queue's PRs that need details into those to look up now (new, changed, or due for
 * their recheck) and those whose remembered answer still holds.
 */
export function planLookups(
  items: readonly EnqueuedPullRequest[],
  memory: LookupMemory,
  options: PlanOptions,
): LookupPlan {
  const lookUp: EnqueuedPullRequest[] = [];
  const reuse = new Map<number, PullRequestDetail>();
  for (const item of items) {
    if (!needsLookup(item)) continue;
    const remembered = memory.get(item.prNumber);
    if (
      remembered === undefined ||
      !isSameItem(remembered, item) ||
      isRecheckDue(remembered.lookedUpAt, item.prNumber, options)
    ) {
      lookUp.push(item);
    } else {
      reuse.set(item.prNumber, remembered.detail);
    }
  }
  return { lookUp, reuse };
}

/**
 * The memory after a successful poll: fresh answers for what was looked up, the kept answers for
 * what was reused, nothing for PRs that left the queue or answered 404 (looked up again if seen).
 */
export function rememberLookups(
  plan: LookupPlan,
  answers: ReadonlyMap<number, PullRequestDetail | undefined>,
  previous: LookupMemory,
  now: number,
): LookupMemory {
  const next = new Map<number, RememberedLookup>();
  for (const item of plan.lookUp) {
    const detail = answers.get(item.prNumber);
    if (detail === undefined) continue;
    next.set(item.prNumber, {
      stateChangedAt: item.stateChangedAt,
      sha: item.prSha,
      itemState: item.state,
      detail: keptDetail(detail),
      lookedUpAt: now,
    });
  }
  for (const prNumber of plan.reuse.keys()) {
    const kept = previous.get(prNumber);
    if (kept !== undefined) next.set(prNumber, kept);
  }
  return next;
}

/** Per-queue lookup memory that lives across polls; only a successful poll updates it. */
export class PullRequestLookupMemory {
  #memory: LookupMemory = new Map();

  constructor(
    /** A reload may change it; the memory stays (see LookupMemories). */
    public recheckSeconds: number,
    private readonly phaseSeed: string,
  ) {}

  /** The plan for this poll's queue items. */
  plan(items: readonly EnqueuedPullRequest[], now: number): LookupPlan {
    return planLookups(items, this.#memory, {
      now,
      recheckSeconds: this.recheckSeconds,
      phaseSeed: this.phaseSeed,
    });
  }

  /** Records a successful poll's answers; call only once the whole poll has succeeded. */
  commit(
    plan: LookupPlan,
    answers: ReadonlyMap<number, PullRequestDetail | undefined>,
    now: number,
  ): void {
    this.#memory = rememberLookups(plan, answers, this.#memory, now);
  }
}

/** A copy with only the fields a poll reads, whatever else the answer object carries. */
function keptDetail(answer: PullRequestDetail): PullRequestDetail {
  return {
    ...(answer.state === undefined ? {} : { state: answer.state }),
    ...(answer.readiness === undefined ? {} : { readiness: answer.readiness }),
  };
}

function isSameItem(remembered: RememberedLookup, item: EnqueuedPullRequest): boolean {
  // Without a stateChangedAt nothing tells a changed item from an unchanged one: looked up each
  // poll. A null (or other non-string) one is read as '' (schemas.ts), which tells nothing either.
  return (
    item.stateChangedAt !== undefined &&
    item.stateChangedAt !== '' &&
    remembered.stateChangedAt === item.stateChangedAt &&
    remembered.sha === item.prSha &&
    remembered.itemState === item.state
  );
}

/**
 * Each PR has a fixed phase within the recheck interval (from a hash of the queue and the PR
 * number); a recheck is due once a phase point has passed since the last lookup. Every PR is thus
 * looked up at least once per interval, and PRs first seen together (at start-up) spread their
 * rechecks evenly over the interval instead of all landing in one poll.
 */
export function isRecheckDue(lookedUpAt: number, prNumber: number, options: PlanOptions): boolean {
  const interval = options.recheckSeconds;
  if (!(interval > 0)) return true;
  const phase = recheckPhase(options.phaseSeed, prNumber) * interval;
  return Math.floor((options.now - phase) / interval) > Math.floor((lookedUpAt - phase) / interval);
}

/** A fraction in [0, 1), stable for a (queue, PR) pair. */
function recheckPhase(phaseSeed: string, prNumber: number): number {
  const hash = finalize(fnv1a64(`${phaseSeed}\u0000${prNumber}`));
  return Number(hash >> 11n) / 2 ** 53;
}

const MASK_64 = 0xffffffffffffffffn;

/**
 * MurmurHash3's 64-bit finalizer. FNV-1a barely moves its high bits when only the last characters
 * differ (consecutive PR numbers), which put a whole queue's rechecks into one poll.
 */
function finalize(hash: bigint): bigint {
  let k = hash;
  k ^= k >> 33n;
  k = (k * 0xff51afd7ed558ccdn) & MASK_64;
  k ^= k >> 33n;
  k = (k * 0xc4ceb9fe1a85ec53n) & MASK_64;
  k ^= k >> 33n;
  return k;
}
