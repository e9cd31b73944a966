import { targetKey, type Target } from '../snapshot/types.js';

/** Starts a target's poll now, through its scheduled job (the wiring implements it). */
export type PollNow = (target: Target) => void;

/** How events turn into polls. */
export interface TriggerSpacing {
  /** Events within this long of the first one share its poll. */
  readonly coalesceMs: number;
  /** A merge queue is polled by events at most once per this long. */
  readonly mergeQueueMs: number;
  /** A quarantine list is walked by events at most once per this long. */
  readonly flakyTestsMs: number;
}

/**
 * A poll within a second of an event (a quarter of a second, so that a burst shares it), a merge
 * queue at most every 5 s and a quarantine list at most every minute: an event says something
 * changed, and a burst of them must not become a burst of API calls.
 */
export const DEFAULT_TRIGGER_SPACING: TriggerSpacing = {
  coalesceMs: 250,
  mergeQueueMs: 5_000,
  flakyTestsMs: 60_000,
};

/**
 * Turns accepted events into polls of their targets: the first event of a target asks for a poll
 * `coalesceMs` later, every event until then shares it, and an event soon after a poll asks for
 * one poll at the end of the target's spacing. At most one poll per target is waiting, so memory
 * is bounded by the configured targets.
 */
export class TriggeredPolls {
  readonly #pending = new Map<string, NodeJS.Timeout>();
  /** When each target's last event-triggered poll started (epoch ms). */
  readonly #lastPoll = new Map<string, number>();

  constructor(
    private readonly pollNow: PollNow,
    private readonly spacing: TriggerSpacing = DEFAULT_TRIGGER_SPACING,
    private readonly now: () => number = Date.now,
  ) {}

  /** Asks for a poll of `target`; returns false when one is already waiting (coalesced). */
  request(target: Target): boolean {
    const key = targetKey(target);
    if (this.#pending.has(key)) return false;
    const now = this.now();
    const last = this.#lastPoll.get(key);
    const spacing =
      target.kind === 'merge_queue' ? this.spacing.mergeQueueMs : this.spacing.flakyTestsMs;
    const at = Math.max(now + this.spacing.coalesceMs, last === undefined ? 0 : last + spacing);
    const timer = setTimeout(() => {
      this.#pending.delete(key);
      this.#lastPoll.set(key, this.now());
      this.pollNow(target);
    }, at - now);
    // A waiting poll must not keep a stopping process alive.
    timer.unref();
    this.#pending.set(key, timer);
    return true;
  }

  /** Forgets targets no longer configured (a reload), and any poll still waiting for them. */
  keepOnly(targets: readonly Target[]): void {
    const wanted = new Set(targets.map(targetKey));
    for (const [key, timer] of this.#pending) {
      if (wanted.has(key)) continue;
      clearTimeout(timer);
      this.#pending.delete(key);
    }
    for (const key of this.#lastPoll.keys()) {
      if (!wanted.has(key)) this.#lastPoll.delete(key);
    }
  }

  /** Drops every waiting poll. */
  stop(): void {
    for (const timer of this.#pending.values()) clearTimeout(timer);
    this.#pending.clear();
  }
}
