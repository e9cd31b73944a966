// Concurrency slots shared between flows (targets) in turn; the request limiter adds the rate and
// the Retry-After pause on top.
import { SharedAbortListeners } from './sharedAbortListeners.js';

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
}

interface SlotWaiter {
  readonly flow: Flow;
  readonly queue: Set<SlotWaiter>;
  readonly signal: AbortSignal | undefined;
  readonly resolve: () => void;
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
}

/**
 * At most `maxConcurrent` slots, shared between flows (targets) round-robin: a freed slot goes to
 * the next flow in turn that has a request waiting, and within a flow to its longest-waiting
 * follow-up, then to its longest-waiting new poll. A 10,000-PR queue's lookups thus take turns with
 * another target's getQueue and lookups instead of going ahead of them all (which starved every
 * other target for the whole of the big poll), and no target's follow-ups hold more than their fair
 * share while another target waits for its first call. With one flow nothing changes: follow-ups
 * first, each priority in arrival order, no slot idle while anything waits.
 *
 * One slot stays free for other flows: when more than one target shares the slots (or, not told
 * how many do, another flow has asked for a slot in the last minute), no single flow may hold all of
 * them (unless there is only one). A flow whose requests hang (a queue whose lookups never answer)
 * would otherwise fill every slot between two polls of a small queue, and that queue's next poll
 * would wait for one of them to time out.
 */
export class FairSlots {
  readonly #maxConcurrent: number;
  readonly #now: () => number;
  readonly #targets: (() => number) | undefined;
  /** Flows holding a slot or waiting for one. */
  readonly #flows = new Map<string, Flow>();
  /** Flows with a request waiting, in turn order: the first one is served next. */
  readonly #rotation = new Set<Flow>();
  /** The two flows that last asked for a slot, the latest first (two distinct keys). */
  #lastFlows: { key: string; at: number }[] = [];
  /** Rejects the waiters of an aborted signal (a poll that failed or stopped). */
  readonly #aborts = new SharedAbortListeners<SlotWaiter>((waiter, reason) => {
    waiter.queue.delete(waiter);
    this.#dropIfIdle(waiter.flow);
    waiter.reject(reason);
  });
  #inFlight = 0;

  constructor(options: FairSlotsOptions) {
    this.#maxConcurrent = options.maxConcurrent;
    this.#now = options.now;
    this.#targets = options.targets;
  }

  /**
   * Waits for a slot for a request of flow `key` (a target); rejects with the signal's reason on
   * abort. Give the slot back with release(owner).
   */
  async take(
    signal: AbortSignal | undefined,
    priority: RequestPriority,
    key: string,
  ): Promise<Flow> {
    // Told how many targets there are, the limiter need not guess from who asked lately.
    if (this.#targets === undefined) this.#noteFlow(key);
    let flow = this.#flows.get(key);
    if (flow === undefined) {
      flow = { key, held: 0, waiting: { follow_up: new Set(), new_poll: new Set() } };
      this.#flows.set(key, flow);
    }
    // Straight in only when nobody waits: a waiting request is either next in turn or held back by
    // #mayTakeSlot, and a newcomer must not pass either.
    if (
      this.#rotation.size === 0 &&
      this.#inFlight < this.#maxConcurrent &&
      this.#mayTakeSlot(flow)
    ) {
      this.#grant(flow);
      return flow;
    }
    const owner = flow;
    await new Promise<void>((resolve, reject) => {
      const queue = owner.waiting[priority];
      const waiter: SlotWaiter = { flow: owner, queue, signal, resolve, reject };
      queue.add(waiter);
      this.#rotation.add(owner);
      if (signal !== undefined) this.#aborts.watch(signal, waiter);
      this.#dispatch();
    });
    return owner;
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

  /** False when granting would give `flow` every slot while another flow may need one soon. */
  #mayTakeSlot(flow: Flow): boolean {
    if (this.#maxConcurrent < 2 || flow.held < this.#maxConcurrent - 1) return true;
    return !this.#othersMayCome(flow.key);
  }

  #grant(flow: Flow): void {
    this.#inFlight += 1;
    flow.held += 1;
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
      this.#grant(flow);
      // Served: to the back of the turn order, if it still has requests waiting.
      this.#rotation.delete(flow);
      if (hasWaiters(flow)) this.#rotation.add(flow);
      next.resolve();
    }
  }

  /**
   * The first flow in turn that may take a slot. Only a flow holding all slots but one is ever
   * passed over, and at most two flows can (each holds at least half the slots), so this loop
   * looks at no more than three.
   */
  #nextFlow(): Flow | undefined {
    for (const flow of this.#rotation) if (this.#mayTakeSlot(flow)) return flow;
    return undefined;
  }

  /** Drops a flow from the turn order once nothing of it waits, and altogether once it is idle. */
  #dropIfIdle(flow: Flow): void {
    if (hasWaiters(flow)) return;
    this.#rotation.delete(flow);
    if (flow.held === 0) this.#flows.delete(flow.key);
  }

  /** Gives back a slot taken by take(). */
  release(flow: Flow): void {
    this.#inFlight -= 1;
    flow.held -= 1;
    this.#dropIfIdle(flow);
    this.#dispatch();
  }
}

function hasWaiters(flow: Flow): boolean {
  return flow.waiting.follow_up.size > 0 || flow.waiting.new_poll.size > 0;
}
