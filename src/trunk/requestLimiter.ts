import { setTimeout as sleep } from 'node:timers/promises';
import { FairSlots, type RequestPriority } from './fairSlots.js';
import { suspectAfterMs, type RequestOutcome } from './flowStanding.js';

/** Limits shared by every call of one client. */
export interface RequestLimiterOptions {
  readonly maxConcurrent: number;
  readonly maxPerSecond: number;
  /** Epoch milliseconds; injectable for tests. */
  readonly now?: () => number;
  /**
   * How many targets share these limits (read at each decision, so a reload may change it). When
   * absent, a target counts as sharing them once it has asked for a slot in the last minute.
   */
  readonly targets?: () => number;
  /**
   * The attempt timeout in ms, from which the time after which a running request makes its target
   * suspect of hanging is derived (suspectAfterMs()); default 10 s.
   */
  readonly timeoutMs?: number;
}

export type { RequestPriority } from './fairSlots.js';
export type { RequestOutcome } from './flowStanding.js';

/**
 * Gives back a concurrency slot, saying how the request ended (see RequestOutcome; leave it out
 * when the request was not sent or was aborted); calling it twice is harmless.
 */
export type ReleaseSlot = (outcome?: RequestOutcome) => void;

/** The default attempt timeout (trunk.timeoutSeconds: 10). */
const DEFAULT_TIMEOUT_MS = 10_000;

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

/** The flow of requests that name none (one flow for everything, as before flows existed). */
const DEFAULT_FLOW = '';

/**
 * Gatekeeper in front of every HTTP attempt: at most `maxConcurrent` in flight, starts spaced by a
 * token bucket of depth one (so no second ever sees more than `maxPerSecond` starts, even right
 * after an idle spell: Trunk's limit is per organization and other tokens share it; above 1,000 a
 * second, give or take a millisecond's worth), and a global pause that a 429 with `Retry-After`
 * sets for everybody.
 *
 * Concurrency slots are shared between targets in turn (FairSlots, where the rule is explained), and
 * starts follow grants (a slot is taken before the start time is reserved), so the rate is shared
 * the same way.
 */
export class RequestLimiter {
  readonly #intervalMs: number;
  readonly #now: () => number;
  readonly #slots: FairSlots;
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
    this.#intervalMs = 1000 / options.maxPerSecond;
    this.#now = options.now ?? Date.now;
    this.#slots = new FairSlots({
      maxConcurrent: options.maxConcurrent,
      now: this.#now,
      targets: options.targets,
      suspectAfterMs: suspectAfterMs(options.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    });
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
   * the pause began: before the call, or while it waited for a slot or slept. `flow` names the
   * target the request is for; flows share the slots in turn, and flows whose requests hang
   * cannot take the last one (FairSlots).
   * The caller must call the returned function once the attempt (body included) is over, with its
   * outcome if it was sent.
   */
  async acquire(
    signal?: AbortSignal,
    priority: RequestPriority = 'new_poll',
    startBy?: number,
    flow: string = DEFAULT_FLOW,
  ): Promise<ReleaseSlot> {
    signal?.throwIfAborted();
    // Before queueing for a slot too: a request that cannot start in time must not wait for one.
    this.#checkStartBy(startBy);
    const grant = await this.#slots.take(signal, priority, flow);
    let released = false;
    const release: ReleaseSlot = (outcome) => {
      if (released) return;
      released = true;
      this.#slots.release(grant, outcome);
    };
    try {
      await this.#waitForStart(signal, startBy);
    } catch (error) {
      release();
      throw error;
    }
    // From here the request runs: waiting for the rate or a Retry-After pause is not hanging.
    this.#slots.started(grant);
    return release;
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
