import { setTimeout as sleep } from 'node:timers/promises';

/** Limits shared by every call of one client. */
export interface RequestLimiterOptions {
  readonly maxConcurrent: number;
  readonly maxPerSecond: number;
  /** Epoch milliseconds; injectable for tests. */
  readonly now?: () => number;
}

/** Gives back a concurrency slot; calling it twice is harmless. */
export type ReleaseSlot = () => void;

/**
 * `follow_up`: a request that continues a poll already in progress (a PR lookup after its queue, the
 * next page of a list); it goes ahead of every `new_poll` request waiting for a slot.
 */
export type RequestPriority = 'new_poll' | 'follow_up';

/** acquire() gave up: a pause holds every request past the time this one had to start by. */
export class PausedPastStartBy extends Error {
  /** Epoch ms the pause lasts until. */
  readonly pausedUntil: number;

  constructor(pausedUntil: number) {
    super(`requests are paused until ${new Date(pausedUntil).toISOString()}`);
    this.name = 'PausedPastStartBy';
    this.pausedUntil = pausedUntil;
  }
}

interface SlotWaiter {
  readonly queue: Set<SlotWaiter>;
  readonly signal: AbortSignal | undefined;
  readonly resolve: () => void;
  readonly reject: (reason: unknown) => void;
}

/** The waiters that share one abort signal, and the one listener that rejects them all. */
interface SignalWaiters {
  readonly waiters: Set<SlotWaiter>;
  readonly onAbort: () => void;
}

/**
 * Gatekeeper in front of every HTTP attempt: at most `maxConcurrent` in flight, starts spaced by a
 * token bucket of depth one (so no second ever sees more than `maxPerSecond` starts, even right
 * after an idle spell: Trunk's limit is per organization and other tokens share it; above 1,000 a
 * second, give or take a millisecond's worth), and a global pause that a 429 with `Retry-After`
 * sets for everybody.
 *
 * A freed slot goes to the longest-waiting follow-up request, and only when none waits to the
 * longest-waiting new poll. Started polls thus finish before new ones start: when a thousand polls
 * are due at once, only about `maxConcurrent` of them hold a parsed queue (or a half-walked list)
 * while their follow-ups wait, instead of all of them. Slots never idle while anything waits, and
 * no poll starves: each poll has finitely many follow-ups.
 */
export class RequestLimiter {
  readonly #maxConcurrent: number;
  readonly #intervalMs: number;
  readonly #now: () => number;
  /**
   * FIFOs of requests waiting for a slot, by priority. Sets, not arrays: a cycle queues thousands
   * of requests at once, and Array#shift on a long array copies it, which made every release O(n).
   */
  readonly #waiters: Readonly<Record<RequestPriority, Set<SlotWaiter>>> = {
    follow_up: new Set(),
    new_poll: new Set(),
  };
  /**
   * One abort listener per signal rather than per waiter: a poll's lookups all wait on the poll's
   * signal, and EventTarget walks its whole listener list on every add, so thousands of waiters
   * each adding their own listener cost quadratic time.
   */
  readonly #waitersBySignal = new WeakMap<AbortSignal, SignalWaiters>();
  #inFlight = 0;
  #nextStartAt = 0;
  #pausedUntil = 0;

  constructor(options: RequestLimiterOptions) {
    if (!Number.isInteger(options.maxConcurrent) || options.maxConcurrent < 1) {
      throw new RangeError(
        `maxConcurrentRequests must be an integer >= 1, got ${options.maxConcurrent}`,
      );
    }
    if (!(options.maxPerSecond > 0) || !Number.isFinite(options.maxPerSecond)) {
      throw new RangeError(`maxRequestsPerSecond must be > 0, got ${options.maxPerSecond}`);
    }
    this.#maxConcurrent = options.maxConcurrent;
    this.#intervalMs = 1000 / options.maxPerSecond;
    this.#now = options.now ?? Date.now;
  }

  /** Epoch ms until which no request may start (0 when not paused). */
  get pausedUntil(): number {
    return this.#pausedUntil;
  }

  /** Holds back every request not yet started until `epochMs`; never shortens a pause. */
  pauseUntil(epochMs: number): void {
    this.#pausedUntil = Math.max(this.#pausedUntil, epochMs);
  }

  /**
   * Waits for a slot, the rate limit and any pause; rejects with the signal's reason on abort, and
   * with PausedPastStartBy when a pause would hold the request past `startBy` (epoch ms), however
   * the pause began: before the call, or while it waited for a slot or slept.
   * The caller must call the returned function once the attempt (body included) is over.
   */
  async acquire(
    signal?: AbortSignal,
    priority: RequestPriority = 'new_poll',
    startBy?: number,
  ): Promise<ReleaseSlot> {
    signal?.throwIfAborted();
    // Before queueing for a slot too: a request that cannot start in time must not wait for one.
    this.#checkStartBy(startBy);
    await this.#takeSlot(signal, this.#waiters[priority]);
    let released = false;
    const release: ReleaseSlot = () => {
      if (released) return;
      released = true;
      this.#releaseSlot();
    };
    try {
      await this.#waitForStart(signal, startBy);
    } catch (error) {
      release();
      throw error;
    }
    return release;
  }

  async #takeSlot(signal: AbortSignal | undefined, queue: Set<SlotWaiter>): Promise<void> {
    if (this.#inFlight < this.#maxConcurrent) {
      this.#inFlight += 1;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      // The releaser hands its slot over directly (#inFlight unchanged), so the order holds.
      const waiter: SlotWaiter = { queue, signal, resolve, reject };
      queue.add(waiter);
      if (signal !== undefined) this.#watch(signal, waiter);
    });
  }

  #watch(signal: AbortSignal, waiter: SlotWaiter): void {
    let group = this.#waitersBySignal.get(signal);
    if (group === undefined) {
      const waiters = new Set<SlotWaiter>();
      const onAbort = (): void => {
        this.#waitersBySignal.delete(signal);
        for (const aborted of waiters) {
          aborted.queue.delete(aborted);
          aborted.reject(signal.reason);
        }
      };
      group = { waiters, onAbort };
      this.#waitersBySignal.set(signal, group);
      signal.addEventListener('abort', onAbort, { once: true });
    }
    group.waiters.add(waiter);
  }

  #unwatch(waiter: SlotWaiter): void {
    const signal = waiter.signal;
    if (signal === undefined) return;
    const group = this.#waitersBySignal.get(signal);
    if (group === undefined) return;
    group.waiters.delete(waiter);
    // No listener stays behind on a signal that outlives this limiter (a job's, across a reload).
    if (group.waiters.size === 0) {
      this.#waitersBySignal.delete(signal);
      signal.removeEventListener('abort', group.onAbort);
    }
  }

  #releaseSlot(): void {
    // Sets iterate in insertion order: the first value is the longest waiter.
    const queue =
      this.#waiters.follow_up.size > 0 ? this.#waiters.follow_up : this.#waiters.new_poll;
    const next = queue.values().next().value;
    if (next) {
      queue.delete(next);
      this.#unwatch(next);
      next.resolve();
    } else this.#inFlight -= 1;
  }

  #checkStartBy(startBy: number | undefined): void {
    if (startBy !== undefined && this.#pausedUntil > startBy) {
      throw new PausedPastStartBy(this.#pausedUntil);
    }
  }

  async #waitForStart(signal: AbortSignal | undefined, startBy: number | undefined): Promise<void> {
    // A loop because a 429 elsewhere may extend the pause while this request sleeps.
    for (;;) {
      this.#checkStartBy(startBy);
      const now = this.#now();
      const startAt = Math.max(now, this.#nextStartAt, this.#pausedUntil);
      // Reserve the start time now so concurrent waiters line up behind each other.
      this.#nextStartAt = startAt + this.#intervalMs;
      if (startAt <= now) return;
      // Above 1,000 a second the spacing is finer than the clock and the timers: a wait of a
      // fraction of a millisecond would sleep a whole one, so that start goes now. The reservation
      // above still holds later starts back once they run a millisecond ahead.
      if (this.#intervalMs < 1 && startAt - now < 1) return;
      await sleep(startAt - now, undefined, signal ? { signal } : undefined);
      if (this.#now() >= this.#pausedUntil) return;
    }
  }
}
