/** What `BcryptQueue.run` gives back when every comparison runs and the line is full. */
export const QUEUE_FULL = Symbol('bcrypt queue full');

/**
 * The bcrypt comparisons running and waiting to run, both bounded: bcryptjs hashes on the event
 * loop, so each comparison running beside a scrape delays it. Up to `running` comparisons run, up
 * to `waiting` more wait in line, and anything beyond is refused at once, unhashed.
 */
export class BcryptQueue {
  readonly #running: number;
  readonly #waiting: number;
  #busy = 0;
  readonly #line: (() => void)[] = [];

  constructor(running: number, waiting: number) {
    this.#running = running;
    this.#waiting = waiting;
  }

  /** Runs `compare`, after waiting its turn if need be; QUEUE_FULL when the line is full. */
  async run<T>(compare: () => Promise<T>): Promise<T | typeof QUEUE_FULL> {
    if (this.#busy >= this.#running) {
      if (this.#line.length >= this.#waiting) return QUEUE_FULL;
      // The comparison that ends hands its turn over, so #busy never drops in between.
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
