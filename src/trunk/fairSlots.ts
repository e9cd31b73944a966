// Concurrency slots shared between flows (targets) in turn; the request limiter adds the rate and
// the Retry-After pause on top.
import { FlowStandings, type RequestOutcome, type Standing } from './flowStanding.js';
import { SharedAbortListeners } from './sharedAbortListeners.js';
import { TurnOrder, unlinked, type Link } from './turnOrder.js';

/**
 * `follow_up`: a request that continues a poll already in progress (a PR lookup after its queue, the
 * next page of a list); it goes ahead of its own target's `new_poll` requests waiting for a slot.
 */
export type RequestPriority = 'new_poll' | 'follow_up';

/**
 * The requests of one target (one merge queue, or one repository's quarantine list): the unit the
 * limiter shares capacity between. Exists while it holds a slot or has a request waiting.
 */
export interface Flow {
  readonly key: string;
  /** Slots its requests hold now. */
  held: number;
  /** Its requests waiting for a slot, FIFO by priority (Sets: see #aborts). */
  readonly waiting: Readonly<Record<RequestPriority, Set<SlotWaiter>>>;
  /** The slots it holds (as many as `held`). */
  readonly grants: Set<SlotGrant>;
  /** Its standing (FlowStandings), kept here so the many checks per request need no lookup. */
  readonly standing: Standing;
  /** Its place in FairSlots' turn orders. */
  readonly inRotation: Link<Flow>;
  readonly inGoodRotation: Link<Flow>;
}

/** One slot given to a request of `flow`; give it back with FairSlots.release(). */
export interface SlotGrant {
  readonly flow: Flow;
  /** Epoch ms the request was sent (see FairSlots.started); undefined while it waits to start. */
  startedAt: number | undefined;
  /** Its place among the started grants, oldest first. */
  readonly inStarted: Link<SlotGrant>;
}

/** A new poll of a flow in good standing, waiting for fewer such flows to be in progress. */
interface AdmissionWaiter {
  readonly key: string;
  readonly standing: Standing;
  readonly signal: AbortSignal | undefined;
  readonly resolve: () => void;
  readonly reject: (reason: unknown) => void;
}

interface SlotWaiter {
  readonly flow: Flow;
  readonly queue: Set<SlotWaiter>;
  readonly signal: AbortSignal | undefined;
  readonly resolve: (grant: SlotGrant) => void;
  readonly reject: (reason: unknown) => void;
}

/** A flow that asked for a slot this recently may come back at any moment: see #mayTakeSlot. */
const RECENT_FLOW_MS = 60_000;

/** Limits and clock of a FairSlots. */
export interface FairSlotsOptions {
  readonly maxConcurrent: number;
  /** Epoch milliseconds. */
  readonly now: () => number;
  /** How many targets share the slots; when absent, guessed from who asked in the last minute. */
  readonly targets: (() => number) | undefined;
  /** A request running longer than this makes its flow suspect (see suspectAfterMs()). */
  readonly suspectAfterMs: number;
  /**
   * At most this many flows in good standing in progress at once (see FairSlots); default
   * max(maxConcurrent, DEFAULT_MAX_FLOWS_IN_PROGRESS).
   */
  readonly maxFlowsInProgress?: number;
}

/**
 * Flows in good standing in progress at once, at least. Far more than most deployments have
 * targets, so it only matters when hundreds of polls are due together (at start, after a pause).
 */
export const DEFAULT_MAX_FLOWS_IN_PROGRESS = 64;

/**
 * At most `maxConcurrent` slots, shared between flows (targets) round-robin: a freed slot goes to
 * the next flow in turn that has a request waiting, and within a flow to its longest-waiting
 * follow-up, then to its longest-waiting new poll. A 10,000-PR queue's lookups thus take turns with
 * another target's getQueue and lookups instead of going ahead of them all (which starved every
 * other target for the whole of the big poll), and no target's follow-ups hold more than their fair
 * share while another target waits for its first call. With one flow nothing changes: follow-ups
 * first, each priority in arrival order, no slot idle while anything waits.
 *
 * Two limits keep a slot for others, when more than one target shares the slots (or, not told how
 * many do, another flow has asked for a slot in the last minute), C = maxConcurrent >= 2:
 * - No single flow may hold all C slots. A flow whose requests hang (a queue whose lookups never
 *   answer) would otherwise fill every slot between two polls of a small queue.
 * - Flows not in good standing together hold at most C - 1 slots while some flow is in good
 *   standing (FlowStandings: its latest request was answered within the threshold, and none of
 *   its requests has been running longer). Taking turns alone lets twelve queues that never answer
 *   hand every freed slot to one another: each holds a slot for the whole timeout, and a healthy
 *   queue polled every 2 s waited about 30 s per poll. Suspect flows (last request timed out, failed
 *   on the network or answered late, or one running too long) and unproven ones (none ended yet)
 *   are both kept out of the last slot: a new target that hangs would otherwise take it for a whole
 *   timeout. They still share the other C - 1 slots in turn, so none of them starves.
 *
 * Warm-up: a target is unproven until its first answer, and hangs only show after the threshold.
 * Until some flow is in good standing nothing is kept back, so at start a healthy target takes its
 * turn with the hanging ones (with N of them, at most about N / C timeouts) before its first answer
 * puts it in good standing; a target that starts hanging takes one slot for a whole timeout before
 * it is known. Requests that wait to start (rate, Retry-After pause) while holding a slot are not
 * counted as running.
 *
 * Admission: at most `maxFlowsInProgress` flows in good standing are in progress (hold a slot or
 * have a request waiting) at once. Beyond that, a new poll of a flow in good standing with nothing
 * in progress waits, first come first served, until one of them is done; follow-ups are never held
 * back, nor are flows not in good standing (the last-slot rule bounds those). Taking turns between a
 * thousand polls due at once kept all of them open for the whole cycle, each with its lookups
 * waiting and its answers so far held: a thousand polls' worth of memory touched in turn, which
 * cost about 15 % more CPU per call than finishing them about a hundred at a time.
 */
export class FairSlots {
  readonly #maxConcurrent: number;
  readonly #now: () => number;
  readonly #targets: (() => number) | undefined;
  readonly #standings: FlowStandings;
  /** Flows holding a slot or waiting for one. */
  readonly #flows = new Map<string, Flow>();
  /** Flows with a request waiting, in turn order: the first one is served next. */
  readonly #rotation = new TurnOrder<Flow>((flow) => flow.inRotation);
  /**
   * The flows of #rotation whose latest request was answered in time, in the same kind of turn
   * order: when the last slot is kept for flows in good standing, only these are looked at, so a
   * thousand hanging targets waiting cost nothing per grant.
   */
  readonly #goodRotation = new TurnOrder<Flow>((flow) => flow.inGoodRotation);
  /**
   * Slots held by flows whose latest request was not answered in time (or that have none yet),
   * kept up to date on every grant, release and outcome: #keepsLastSlot runs on every grant, and
   * walking every holder there cost O(C) per request (4 % of a 31,000-call cycle's CPU at C = 128).
   */
  #notGoodHeld = 0;
  /** Grants whose request has been sent, in the order they were (see #keepsLastSlot). */
  readonly #started = new TurnOrder<SlotGrant>((grant) => grant.inStarted);
  /** The two flows that last asked for a slot, the latest first (two distinct keys). */
  #lastFlows: { key: string; at: number }[] = [];
  /** Rejects the waiters of an aborted signal (a poll that failed or stopped). */
  readonly #aborts = new SharedAbortListeners<SlotWaiter>((waiter, reason) => {
    waiter.queue.delete(waiter);
    this.#dropIfIdle(waiter.flow);
    waiter.reject(reason);
  });
  #inFlight = 0;
  readonly #maxFlowsInProgress: number;
  /** Flows of #flows in good standing. */
  #goodInProgress = 0;
  /** New polls waiting for admission, first come first served. */
  readonly #admissions = new Set<AdmissionWaiter>();
  readonly #admissionAborts = new SharedAbortListeners<AdmissionWaiter>((waiter, reason) => {
    this.#admissions.delete(waiter);
    waiter.reject(reason);
  });

  constructor(options: FairSlotsOptions) {
    this.#maxConcurrent = options.maxConcurrent;
    this.#maxFlowsInProgress =
      options.maxFlowsInProgress ?? Math.max(options.maxConcurrent, DEFAULT_MAX_FLOWS_IN_PROGRESS);
    this.#now = options.now;
    this.#targets = options.targets;
    this.#standings = new FlowStandings(options.suspectAfterMs);
  }

  /**
   * Waits for a slot for a request of flow `key` (a target); rejects with the signal's reason on
   * abort. Say when the request is sent with started(grant), and give the slot back with
   * release(grant, outcome).
   */
  async take(
    signal: AbortSignal | undefined,
    priority: RequestPriority,
    key: string,
  ): Promise<SlotGrant> {
    // Told how many targets there are, the limiter need not guess from who asked lately.
    if (this.#targets === undefined) this.#noteFlow(key);
    const standing = this.#standings.of(key, this.#now());
    if (priority === 'new_poll' && !this.#flows.has(key) && this.#mustWaitForAdmission(standing)) {
      await new Promise<void>((resolve, reject) => {
        const waiter: AdmissionWaiter = { key, standing, signal, resolve, reject };
        this.#admissions.add(waiter);
        if (signal !== undefined) this.#admissionAborts.watch(signal, waiter);
      });
      // Admitted (its flow is in progress from then on), but aborted before this ran: a waiter
      // added now would never hear of the abort.
      if (signal?.aborted === true) {
        const admitted = this.#flows.get(key);
        if (admitted !== undefined) this.#dropIfIdle(admitted);
        throw signal.reason;
      }
    }
    const flow = this.#flowOf(key, standing);
    // Straight in only when nobody waits: a waiting request is either next in turn or held back by
    // #mayTakeSlot, and a newcomer must not pass either.
    if (
      this.#rotation.size === 0 &&
      this.#inFlight < this.#maxConcurrent &&
      this.#mayTakeSlot(flow, this.#keepsLastSlot())
    ) {
      return this.#grant(flow);
    }
    const owner = flow;
    return new Promise<SlotGrant>((resolve, reject) => {
      const queue = owner.waiting[priority];
      const waiter: SlotWaiter = { flow: owner, queue, signal, resolve, reject };
      queue.add(waiter);
      this.#enterRotation(owner);
      if (signal !== undefined) this.#aborts.watch(signal, waiter);
      this.#dispatch();
    });
  }

  /** The request holding `grant` is sent now: from here on it counts as running. */
  started(grant: SlotGrant): void {
    grant.startedAt = this.#now();
    this.#started.add(grant);
  }

  /**
   * Gives back a slot taken by take(). `outcome` says how the request ended (undefined: it was
   * never sent, or its caller gave up on it, which says nothing about the flow).
   */
  release(grant: SlotGrant, outcome?: RequestOutcome): void {
    const flow = grant.flow;
    if (!flow.grants.delete(grant)) return;
    this.#started.delete(grant);
    this.#inFlight -= 1;
    flow.held -= 1;
    const wasGood = flow.standing.good;
    if (!wasGood) this.#notGoodHeld -= 1;
    if (outcome !== undefined && grant.startedAt !== undefined) {
      const now = this.#now();
      this.#standings.update(flow.standing, outcome, now - grant.startedAt, now);
      const isGood = flow.standing.good;
      if (isGood !== wasGood) {
        // Its other slots change sides with it, and so does its place among flows in progress.
        this.#notGoodHeld += isGood ? -flow.held : flow.held;
        this.#goodInProgress += isGood ? 1 : -1;
        if (!isGood) this.#admit();
      }
      // Its standing may have changed while it waits: into or out of the good turn order.
      if (this.#rotation.has(flow)) {
        if (!isGood) this.#goodRotation.delete(flow);
        else if (!this.#goodRotation.has(flow)) this.#goodRotation.add(flow);
      }
    }
    this.#dropIfIdle(flow);
    this.#dispatch();
  }

  /** The flow of `key`, in progress from now on (created if it was not). */
  #flowOf(key: string, standing: Standing): Flow {
    let flow = this.#flows.get(key);
    if (flow === undefined) {
      flow = {
        key,
        standing,
        held: 0,
        waiting: { follow_up: new Set(), new_poll: new Set() },
        grants: new Set(),
        inRotation: unlinked(),
        inGoodRotation: unlinked(),
      };
      this.#flows.set(key, flow);
      if (standing.good) this.#goodInProgress += 1;
    }
    return flow;
  }

  /** Whether a new poll of a flow of `standing` (nothing in progress) must wait for admission. */
  #mustWaitForAdmission(standing: Standing): boolean {
    if (!standing.good) return false;
    // Behind those already waiting, first come first served.
    return this.#admissions.size > 0 || this.#goodInProgress >= this.#maxFlowsInProgress;
  }

  /** Lets waiting new polls in, in arrival order, while fewer flows than the limit are in progress. */
  #admit(): void {
    while (this.#goodInProgress < this.#maxFlowsInProgress) {
      const next = this.#admissions.values().next().value;
      if (next === undefined) return;
      this.#admissions.delete(next);
      if (next.signal !== undefined) this.#admissionAborts.unwatch(next.signal, next);
      // In progress from now on, so the next one is counted against the limit at once.
      this.#flowOf(next.key, next.standing);
      next.resolve();
    }
  }

  #noteFlow(key: string): void {
    const at = this.#now();
    const [latest] = this.#lastFlows;
    if (latest?.key === key) latest.at = at;
    else this.#lastFlows = latest === undefined ? [{ key, at }] : [{ key, at }, latest];
  }

  /** Whether a flow other than `key` may ask for a slot soon. */
  #othersMayCome(key: string): boolean {
    // Told how many targets there are: a target yet to make its first call counts too.
    if (this.#targets !== undefined) return this.#targets() > 1;
    const other = this.#lastFlows.find((flow) => flow.key !== key);
    return other !== undefined && this.#now() - other.at < RECENT_FLOW_MS;
  }

  /** Whether a request of `flow` has been running longer than the threshold. */
  #runsLong(flow: Flow, now: number): boolean {
    for (const grant of flow.grants) {
      if (grant.startedAt !== undefined && now - grant.startedAt > this.#standings.suspectAfterMs) {
        return true;
      }
    }
    return false;
  }

  #inGoodStanding(flow: Flow, now: number): boolean {
    return flow.standing.good && !this.#runsLong(flow, now);
  }

  /**
   * Whether the next free slot is kept for flows in good standing: flows not in good standing
   * already hold C - 1 slots, and some flow is in good standing. O(1) unless requests run long
   * (see #notGoodHeld).
   */
  #keepsLastSlot(): boolean {
    if (this.#maxConcurrent < 2) return false;
    if (this.#targets !== undefined && this.#targets() < 2) return false;
    const goodCount = this.#standings.goodCount;
    if (goodCount === 0) return false;
    let notGoodHeld = this.#notGoodHeld;
    // Flows in good standing by their latest outcome but with a request running long count as not
    // good. Only the oldest started grants can run long: the walk stops at the first that does not.
    const now = this.#now();
    const threshold = this.#standings.suspectAfterMs;
    let runningLong: Set<Flow> | undefined;
    for (let grant = this.#started.first; grant !== undefined; grant = this.#started.after(grant)) {
      if (grant.startedAt === undefined || now - grant.startedAt <= threshold) break;
      const flow = grant.flow;
      if (!flow.standing.good || runningLong?.has(flow) === true) continue;
      (runningLong ??= new Set()).add(flow);
      notGoodHeld += flow.held;
    }
    return notGoodHeld >= this.#maxConcurrent - 1 && goodCount > (runningLong?.size ?? 0);
  }

  /**
   * False when granting would give `flow` every slot while another flow may need one soon, or
   * when the slot is kept for flows in good standing (`keepsLastSlot`) and `flow` is not one.
   */
  #mayTakeSlot(flow: Flow, keepsLastSlot: boolean): boolean {
    if (keepsLastSlot && !this.#inGoodStanding(flow, this.#now())) return false;
    if (this.#maxConcurrent < 2 || flow.held < this.#maxConcurrent - 1) return true;
    return !this.#othersMayCome(flow.key);
  }

  #grant(flow: Flow): SlotGrant {
    const grant: SlotGrant = { flow, startedAt: undefined, inStarted: unlinked() };
    this.#inFlight += 1;
    flow.held += 1;
    if (!flow.standing.good) this.#notGoodHeld += 1;
    flow.grants.add(grant);
    return grant;
  }

  /** Puts a flow with a request waiting at the back of the turn order(s), unless it is in them. */
  #enterRotation(flow: Flow): void {
    if (this.#rotation.has(flow)) return;
    this.#rotation.add(flow);
    if (flow.standing.good) this.#goodRotation.add(flow);
  }

  #leaveRotation(flow: Flow): void {
    this.#rotation.delete(flow);
    this.#goodRotation.delete(flow);
  }

  /** Hands free slots to waiting requests, flow by flow in turn. */
  #dispatch(): void {
    while (this.#inFlight < this.#maxConcurrent) {
      const flow = this.#nextFlow();
      if (flow === undefined) return;
      const queue =
        flow.waiting.follow_up.size > 0 ? flow.waiting.follow_up : flow.waiting.new_poll;
      // Sets iterate in insertion order: the first value is the longest waiter.
      const next = queue.values().next().value;
      if (next === undefined) return;
      queue.delete(next);
      if (next.signal !== undefined) this.#aborts.unwatch(next.signal, next);
      const grant = this.#grant(flow);
      // Served: to the back of the turn order, if it still has requests waiting.
      this.#leaveRotation(flow);
      if (hasWaiters(flow)) this.#enterRotation(flow);
      next.resolve(grant);
    }
  }

  /**
   * The first flow in turn that may take a slot. When the slot is kept for flows in good standing,
   * only those are looked at; of them only holders can be passed over (running long, or holding
   * all slots but one), at most C. Otherwise only a flow holding all slots but one is passed over,
   * and at most two flows can (each holds at least half the slots). Either way the loop is short.
   */
  #nextFlow(): Flow | undefined {
    const keepsLastSlot = this.#keepsLastSlot();
    const candidates = keepsLastSlot ? this.#goodRotation : this.#rotation;
    for (let flow = candidates.first; flow !== undefined; flow = candidates.after(flow)) {
      if (this.#mayTakeSlot(flow, keepsLastSlot)) return flow;
    }
    return undefined;
  }

  /** Drops a flow from the turn order once nothing of it waits, and altogether once it is idle. */
  #dropIfIdle(flow: Flow): void {
    if (hasWaiters(flow)) return;
    this.#leaveRotation(flow);
    if (flow.held > 0) return;
    this.#flows.delete(flow.key);
    if (flow.standing.good) {
      this.#goodInProgress -= 1;
      this.#admit();
    }
  }
}

function hasWaiters(flow: Flow): boolean {
  return flow.waiting.follow_up.size > 0 || flow.waiting.new_poll.size > 0;
}
