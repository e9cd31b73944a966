/** How many message ids are remembered at most; beyond it the oldest is forgotten first. */
export const MAX_REMEMBERED_MESSAGE_IDS = 100_000;

/**
 * How long an accepted message id is remembered: Svix retries a message for about 27 hours, each
 * retry re-signed with a fresh timestamp and the same id, and a user can resend one from the portal
 * at any time; 28 hours outlives the whole retry schedule.
 */
export const MESSAGE_ID_MEMORY_SECONDS = 28 * 60 * 60;

/**
 * The ids of the messages accepted lately, so that a redelivery (a lost 204, a resend, a replayed
 * capture) is answered but not counted again. An id is remembered for `memorySeconds` and at most
 * `maxIds` at once; at the cap the oldest is forgotten first, which takes more signed messages
 * within a day than Trunk sends most organizations in a month.
 */
export class ReplayGuard {
  /** id → Unix seconds until which it is remembered; in insertion (= expiry) order. */
  readonly #seen = new Map<string, number>();

  constructor(
    private readonly memorySeconds = MESSAGE_ID_MEMORY_SECONDS,
    private readonly maxIds = MAX_REMEMBERED_MESSAGE_IDS,
  ) {}

  /** Whether `id` was remembered and has not expired. */
  has(id: string, now: number): boolean {
    this.#expire(now);
    return this.#seen.has(id);
  }

  /** Remembers `id` from `now`. */
  remember(id: string, now: number): void {
    this.#expire(now);
    this.#seen.delete(id);
    while (this.#seen.size >= this.maxIds) {
      const oldest = this.#seen.keys().next();
      if (oldest.done === true) break;
      this.#seen.delete(oldest.value);
    }
    this.#seen.set(id, now + this.memorySeconds);
  }

  /** How many ids are remembered now. */
  get size(): number {
    return this.#seen.size;
  }

  #expire(now: number): void {
    // One fixed memory: insertion order is expiry order (a clock step back only keeps ids longer).
    for (const [id, until] of this.#seen) {
      if (until > now) break;
      this.#seen.delete(id);
    }
  }
}
