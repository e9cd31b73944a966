/** How many svix-ids are remembered at most; beyond it the oldest is forgotten first. */
export const MAX_REMEMBERED_MESSAGE_IDS = 10_000;

/**
 * The svix-ids of the messages accepted lately, so that a redelivery (Svix retries on any failure
 * to answer, and an attacker may replay a captured request) is answered but not counted again.
 * An id is remembered for `windowSeconds` (the timestamp tolerance: after it, the replay's own
 * signed timestamp is refused anyway) and at most MAX_REMEMBERED_MESSAGE_IDS at once. At the cap
 * the oldest id is forgotten early: a replay of it within its window would be counted once more,
 * which takes more than 10,000 signed messages within the window to arrange.
 */
export class ReplayGuard {
  /** svix-id → Unix seconds until which it is remembered; in insertion (= expiry) order. */
  readonly #seen = new Map<string, number>();

  constructor(
    private windowSeconds: number,
    private readonly maxIds = MAX_REMEMBERED_MESSAGE_IDS,
  ) {}

  /** Applies a new window (a reload); ids already remembered keep theirs. */
  setWindow(windowSeconds: number): void {
    this.windowSeconds = windowSeconds;
  }

  /** Whether `id` was remembered and has not expired. */
  has(id: string, now: number): boolean {
    this.#expire(now);
    return this.#seen.has(id);
  }

  /** Remembers `id` for the window from `now`. */
  remember(id: string, now: number): void {
    this.#expire(now);
    this.#seen.delete(id);
    while (this.#seen.size >= this.maxIds) {
      const oldest = this.#seen.keys().next();
      if (oldest.done === true) break;
      this.#seen.delete(oldest.value);
    }
    this.#seen.set(id, now + this.windowSeconds);
  }

  /** How many ids are remembered now. */
  get size(): number {
    return this.#seen.size;
  }

  #expire(now: number): void {
    // Insertion order is expiry order while the window stays the same; after a reload changed
    // it, an entry may wait behind a later-expiring one, which only keeps it longer.
    for (const [id, until] of this.#seen) {
      if (until > now) break;
      this.#seen.delete(id);
    }
  }
}
