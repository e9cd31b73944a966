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
/** How often, at most, forgotten standings are swept out (a pass over every flow's standing). */
const SWEEP_EVERY_MS = 60_000;

/** One flow's standing; FairSlots keeps it on the flow while the flow is in progress. */
export interface Standing {
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
  /**
   * By flow key. Updated in place on every request (moving the key to the end of a Map on each
   * update, to prune the oldest first, cost a delete and an insert per request and left holes
   * that every walk from the front skipped); swept at most once a minute instead.
   */
  readonly #byKey = new Map<string, Standing>();
  #goodCount = 0;
  #sweptAt = Number.NEGATIVE_INFINITY;

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

  /**
   * The standing of flow `key` (unproven, not good, if none of its requests has ended yet), noted
   * as asking for a slot now so it is not forgotten. The same object until it is forgotten: a
   * caller keeps it and reads `good` without looking the key up again.
   */
  of(key: string, now: number): Standing {
    let standing = this.#byKey.get(key);
    if (standing === undefined) {
      standing = { good: false, at: now };
      this.#byKey.set(key, standing);
    } else standing.at = now;
    return standing;
  }

  /**
   * Records how a request ended, `durationMs` after it started, on its flow's standing from of().
   * That is still the flow's: a flow asks for a slot at least once per request, so its standing is
   * never an hour old while a request of it runs.
   */
  update(standing: Standing, outcome: RequestOutcome, durationMs: number, now: number): void {
    const good = outcome === 'answered' && durationMs <= this.#suspectAfterMs;
    if (standing.good !== good) this.#goodCount += good ? 1 : -1;
    standing.good = good;
    standing.at = now;
    if (now - this.#sweptAt >= SWEEP_EVERY_MS) this.#forgetOld(now);
  }

  /** Drops standings not updated for FORGET_AFTER_MS (a removed target's). */
  #forgetOld(now: number): void {
    this.#sweptAt = now;
    for (const [key, standing] of this.#byKey) {
      if (now - standing.at <= FORGET_AFTER_MS) continue;
      this.#byKey.delete(key);
      if (standing.good) this.#goodCount -= 1;
    }
  }
}
