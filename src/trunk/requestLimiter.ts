// The one queue every Trunk API request waits in: the organization's budget, shared by all targets.
import { setTimeout as sleep } from 'node:timers/promises';

/** Node.js fires a timer of more than this many milliseconds after 1 ms, so longer waits sleep in pieces. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Limits shared by every request of one client. */
export interface RequestLimiterOptions {
  readonly maxConcurrent: number;
  readonly maxPerSecond: number;
  /** Epoch milliseconds; injectable for tests. */
  readonly now?: () => number;
}

/**
 * How a sent request ended: `answered` (any HTTP status, or a body over the size cap), or `failed`
 * (a timeout or a network error, or an error status whose body was still coming at the timeout:
 * the slot may have been held for the whole timeout).
 */
export type RequestOutcome = 'answered' | 'failed';

/**
 * Gives back a slot, saying how the request ended (leave it out when it was not sent or was
 * aborted: that says nothing about its target); calling it twice is harmless.
 */
export type ReleaseSlot = (outcome?: RequestOutcome) => void;

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

interface Waiter {
  readonly queue: Set<Waiter>;
  /** Its place in arrival order across both queues. */
  readonly arrival: number;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: () => void;
  readonly resolve: () => void;
}

/**
 * Gatekeeper in front of every HTTP attempt, whatever its endpoint: at most `maxConcurrent` in
 * flight, served in arrival order; starts spaced by a token bucket of depth one (so no second ever
 * sees more than `maxPerSecond` starts, even right after an idle spell: Trunk's limit is per
 * organization and other tokens share it; above 1,000 a second, give or take a millisecond's
 * worth); and a global pause that a 429 with `Retry-After` sets for everybody.
 *
 * Arrival order is fair between targets because each poll keeps only a few requests in progress
 * (poller/lookupFanOut.ts). One rule on top, the last slot: once some target has been answered,
 * requests of targets whose latest request got no answer (it timed out or failed on the network,
 * or none has ended yet) hold at most all slots but one, so that targets that never answer,
 * however many, cannot keep an answering target waiting for their timeouts.
 */
export class RequestLimiter {
  readonly #maxConcurrent: number;
  /** Slots that requests of unanswered targets may hold together while some target is answered. */
  readonly #maxUnanswered: number;
  readonly #intervalMs: number;
  readonly #now: () => number;
  /** Requests of answered targets waiting for a slot, in arrival order (Sets: no Array#shift copy). */
  readonly #waiting = new Set<Waiter>();
  /** Requests of the other targets waiting for a slot, in arrival order. */
  readonly #unansweredWaiting = new Set<Waiter>();
  /** Targets whose latest sent request got an answer. */
  readonly #answered = new Set<string>();
  #arrivals = 0;
  #inFlight = 0;
  #unansweredInFlight = 0;
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
    this.#maxUnanswered = Math.max(1, options.maxConcurrent - 1);
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
   * Waits for a slot, the rate limit and any pause, for a request of `target` (any key naming who
   * it is for); rejects with the signal's reason on abort, and with PausedPastStartBy when a pause
   * would hold the request past `startBy` (epoch ms), however the pause began: before the call, or
   * while it waited for a slot or slept. The caller must call the returned function once the
   * attempt (body included) is over, with its outcome if it was sent.
   */
  async acquire(target: string, signal?: AbortSignal, startBy?: number): Promise<ReleaseSlot> {
    signal?.throwIfAborted();
    // Before queueing for a slot too: a request that cannot start in time must not wait for one.
    this.#checkStartBy(startBy);
    const unanswered = !this.#answered.has(target);
    await this.#takeSlot(unanswered ? this.#unansweredWaiting : this.#waiting, signal);
    let released = false;
    const release: ReleaseSlot = (outcome) => {
      if (released) return;
      released = true;
      if (outcome === 'answered') this.#answered.add(target);
      else if (outcome === 'failed') this.#answered.delete(target);
      this.#inFlight -= 1;
      if (unanswered) this.#unansweredInFlight -= 1;
      this.#dispatch();
    };
    try {
      await this.#waitForStart(signal, startBy);
    } catch (error) {
      release();
      throw error;
    }
    return release;
  }

  #takeSlot(queue: Set<Waiter>, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      // The signal's reason as given, like every other wait the client ends on abort.
      const fail: (reason: unknown) => void = reject;
      const onAbort = (): void => {
        queue.delete(waiter);
        fail(signal?.reason);
      };
      const waiter: Waiter = { queue, arrival: this.#arrivals++, signal, onAbort, resolve };
      queue.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#dispatch();
    });
  }

  /** Hands free slots to waiting requests, oldest first, unanswered targets within their share. */
  #dispatch(): void {
    while (this.#inFlight < this.#maxConcurrent) {
      const next = first(this.#waiting);
      // Until some target is answered (at start) there is nobody to keep the last slot for.
      const unansweredMayTake =
        this.#answered.size === 0 || this.#unansweredInFlight < this.#maxUnanswered;
      const unanswered = unansweredMayTake ? first(this.#unansweredWaiting) : undefined;
      const chosen =
        unanswered !== undefined && (next === undefined || unanswered.arrival < next.arrival)
          ? unanswered
          : next;
      if (chosen === undefined) return;
      chosen.queue.delete(chosen);
      chosen.signal?.removeEventListener('abort', chosen.onAbort);
      this.#inFlight += 1;
      if (chosen.queue === this.#unansweredWaiting) this.#unansweredInFlight += 1;
      chosen.resolve();
    }
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
      // Above 1,000 a second a wait of a fraction of a millisecond would sleep a whole one: start
      // now; the reservation above holds later starts back once they run a millisecond ahead.
      if (this.#intervalMs < 1 && startAt - now < 1) return;
      // Longer than one timer holds when the rate is under one request in 24.8 days, or many wait behind a slow one.
      let waitMs = startAt - now;
      for (; waitMs > MAX_TIMER_MS; waitMs -= MAX_TIMER_MS) {
        await sleep(MAX_TIMER_MS, undefined, signal ? { signal } : undefined);
      }
      await sleep(waitMs, undefined, signal ? { signal } : undefined);
      if (this.#now() >= this.#pausedUntil) return;
    }
  }
}

function first<T>(set: Set<T>): T | undefined {
  return set.values().next().value;
}
