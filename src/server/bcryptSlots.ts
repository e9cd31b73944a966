/** What `BcryptSlots.run` gives back when every slot and every place in line is taken. */
export const NO_SLOT = Symbol('no bcrypt slot');

/**
 * Bounds the bcrypt comparisons in progress at once: bcryptjs hashes on the event loop (in slices of
 * up to 100 ms), so each comparison running beside a scrape delays it. Up to `running` comparisons
 * run, up to `waiting` more wait in line, and anything beyond is refused at once, unhashed.
 */
export class BcryptSlots {
  readonly #running: number;
  readonly #waiting: number;
  #busy = 0;
  readonly #line: (() => void)[] = [];

  constructor(running: number, waiting: number) {
    this.#running = running;
    this.#waiting = waiting;
  }

  /** Runs `compare` in a slot, after waiting for one if need be; NO_SLOT when the line is full. */
  async run<T>(compare: () => Promise<T>): Promise<T | typeof NO_SLOT> {
    if (this.#busy >= this.#running) {
      if (this.#line.length >= this.#waiting) return NO_SLOT;
      // The slot is handed over by the comparison that ends, so #busy never drops in between.
      await new Promise<void>((resolve) => this.#line.push(resolve));
    } else {
      this.#busy++;
    }
    try {
      return await compare();
    } finally {
      const next = this.#line.shift();
      if (next === undefined) this.#busy--;
      else next();
    }
  }
}
