// One log line per key and interval at most, for lines an unhealthy upstream or an overloaded
// exporter would otherwise write for every target on every poll: what is held back in between is
// tallied, and the next line of that key says how much.

/** Lets one line per key through every `intervalMs`, tallying the occurrences held back. */
export class LineThrottle<Key, Tally> {
  readonly #intervalMs: number;
  readonly #emptyTally: () => Tally;
  readonly #now: () => number;
  /** Keyed by fixed vocabularies (kinds, endpoints), so the maps stay small. */
  readonly #loggedAt = new Map<Key, number>();
  readonly #held = new Map<Key, Tally>();

  constructor(intervalMs: number, emptyTally: () => Tally, now: () => number = Date.now) {
    this.#intervalMs = intervalMs;
    this.#emptyTally = emptyTally;
    this.#now = now;
  }

  /**
   * One occurrence of `key`. Within the interval of its last line, `hold` adds it to the tally and
   * undefined is returned; otherwise a line may be written now, with the tally held back since the
   * last one (undefined when nothing was).
   */
  admit(key: Key, hold: (tally: Tally) => void): { readonly held: Tally | undefined } | undefined {
    const now = this.#now();
    const loggedAt = this.#loggedAt.get(key);
    if (loggedAt !== undefined && now - loggedAt < this.#intervalMs) {
      let tally = this.#held.get(key);
      if (tally === undefined) {
        tally = this.#emptyTally();
        this.#held.set(key, tally);
      }
      hold(tally);
      return undefined;
    }
    const held = this.#held.get(key);
    this.#loggedAt.set(key, now);
    this.#held.delete(key);
    return { held };
  }
}
