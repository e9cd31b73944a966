// Which flows (targets) have lately got prompt answers: FairSlots keeps one slot for them, so that
// targets whose requests hang cannot take the capacity a healthy target needs.

/**
 * How a request ended, as far as its slot is concerned: `answered` (any HTTP status, or a body
 * over the size cap), or `failed` (a timeout or a network error: the slot may have been held for
 * the whole timeout). A request that ends otherwise (aborted by its caller) says nothing.
 */
export type RequestOutcome = 'answered' | 'failed';

/**
 * The longest a request may run before its flow counts as one that may hang (while it runs, and
 * after it if it ended so late): half the attempt timeout, and at most 2 s. Healthy Trunk calls
 * answer well within a second; being taken for a hanging flow costs a healthy one little (it
 * shares the other slots until its next prompt answer), while a hang recognized late keeps a
 * healthy target waiting for as long.
 */
export function suspectAfterMs(timeoutMs: number): number {
  return Math.min(timeoutMs / 2, 2_000);
}

/** A flow's standing is forgotten this long after its last request, so the map stays bounded. */
const FORGET_AFTER_MS = 60 * 60_000;

interface Standing {
  /** Its latest finished request got an answer within the threshold. */
  good: boolean;
  /** Epoch ms of its latest request or outcome. */
  at: number;
}

/**
 * The latest outcome of each flow's requests. A flow is in *good standing* when its latest request
 * was answered within the threshold (FairSlots adds: and none of its requests has now been running
 * for longer); it is *unproven* before any of its requests has ended; otherwise it is *suspect*.
 */
export class FlowStandings {
  readonly #suspectAfterMs: number;
  /** By flow key, in order of last update (Map order), so the oldest are pruned first. */
  readonly #byKey = new Map<string, Standing>();
  #goodCount = 0;

  constructor(suspectAfterMs: number) {
    this.#suspectAfterMs = suspectAfterMs;
  }

  /** The threshold in ms: see suspectAfterMs(). */
  get suspectAfterMs(): number {
    return this.#suspectAfterMs;
  }

  /** How many flows are in good standing by their latest outcome. */
  get goodCount(): number {
    return this.#goodCount;
  }

  /** Whether the latest request of flow `key` was answered within the threshold. */
  isGood(key: string): boolean {
    return this.#byKey.get(key)?.good === true;
  }

  /** Notes that flow `key` asked for a slot now, so its standing is not forgotten. */
  touch(key: string, now: number): void {
    const standing = this.#byKey.get(key);
    if (standing !== undefined) this.#set(key, standing.good, now);
  }

  /** Records how a request of flow `key` ended, `durationMs` after it started. */
  record(key: string, outcome: RequestOutcome, durationMs: number, now: number): void {
    this.#set(key, outcome === 'answered' && durationMs <= this.#suspectAfterMs, now);
    this.#forgetOld(now);
  }

  #set(key: string, good: boolean, now: number): void {
    const standing = this.#byKey.get(key);
    if (standing?.good === true) this.#goodCount -= 1;
    // The same object, updated: this runs on every request, and the garbage counts.
    const updated = standing ?? { good, at: now };
    updated.good = good;
    updated.at = now;
    // Deleted first so the key moves to the end of the update order.
    this.#byKey.delete(key);
    this.#byKey.set(key, updated);
    if (good) this.#goodCount += 1;
  }

  /** Drops standings not updated for FORGET_AFTER_MS (a removed target's); amortized O(1). */
  #forgetOld(now: number): void {
    for (const [key, standing] of this.#byKey) {
      if (now - standing.at <= FORGET_AFTER_MS) return;
      this.#byKey.delete(key);
      if (standing.good) this.#goodCount -= 1;
    }
  }
}
