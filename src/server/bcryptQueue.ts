/** What `BcryptQueue.run` gives back when the comparison was refused a place in line. */
export const QUEUE_FULL = Symbol('bcrypt queue full');

/** Called with true when a waiter's turn comes, false when it loses its place to a newcomer. */
type Waiter = (turn: boolean) => void;

/** How many comparisons may wait for their turn. */
export interface BcryptQueueLimits {
  /** Waiting from one client address; beyond, that address's next request is refused. */
  readonly perAddress: number;
  /** Waiting in all; beyond, a newcomer takes the place of the newest waiter of a line before it. */
  readonly total: number;
}

/**
 * The turns of the bcrypt comparisons: one runs at a time (in the worker thread) and the turns go
 * round-robin across client addresses, so that a flood from a few addresses delays another
 * address's check by one turn per flooding address instead of locking it out. Both lines are
 * bounded: a request beyond its address's limit is refused at once, unhashed, and one arriving when
 * every place is taken takes the newest waiter's place in the line that comes first by its
 * address's recent failures, then by its length, if that line comes before its own address's. By
 * failures first because a flood from more addresses than there are places keeps one waiter per
 * address, every line as long as a new scraper's would be: its addresses' wrong passwords are what
 * tells them apart from the scraper, whose check they would otherwise push out each time.
 */
export class BcryptQueue {
  readonly #limits: BcryptQueueLimits;
  /** Recent failed checks from an address (0 for none). */
  readonly #failuresOf: (address: string) => number;
  #busy = false;
  /** The address whose task runs, which waits behind every other address for its next turn. */
  #turnAddress = '';
  #waiting = 0;
  /** Each address's waiters, oldest first; a Map keeps insertion order, so it is also the ring. */
  readonly #lines = new Map<string, Waiter[]>();

  constructor(limits: BcryptQueueLimits, failuresOf: (address: string) => number = () => 0) {
    this.#limits = limits;
    this.#failuresOf = failuresOf;
  }

  /** Runs `task` in `address`'s turn; QUEUE_FULL, without running it, when refused a place. */
  async run<T>(address: string, task: () => Promise<T>): Promise<T | typeof QUEUE_FULL> {
    if (this.#busy) {
      if (!(await this.#waitTurn(address))) return QUEUE_FULL;
    } else {
      this.#busy = true;
      this.#turnAddress = address;
    }
    try {
      return await task();
    } finally {
      this.#handOver();
    }
  }

  #waitTurn(address: string): Promise<boolean> {
    const line = this.#lines.get(address) ?? [];
    if (line.length >= this.#limits.perAddress) return Promise.resolve(false);
    if (this.#waiting >= this.#limits.total && !this.#evictBefore(address, line.length)) {
      return Promise.resolve(false);
    }
    return new Promise<boolean>((resolve) => {
      line.push(resolve);
      this.#lines.set(address, line);
      this.#waiting++;
    });
  }

  /** Gives the next turn to the first address of the ring, which then goes last if it still waits. */
  #handOver(): void {
    // An address that lined up behind its own running task would otherwise go before the others.
    const ran = this.#lines.get(this.#turnAddress);
    if (ran !== undefined && this.#lines.size > 1) {
      this.#lines.delete(this.#turnAddress);
      this.#lines.set(this.#turnAddress, ran);
    }
    const first = this.#lines.entries().next();
    if (first.done === true) {
      this.#busy = false;
      return;
    }
    const [address, line] = first.value;
    const waiter = line.shift();
    this.#lines.delete(address);
    if (line.length > 0) this.#lines.set(address, line);
    this.#waiting--;
    // #busy stays true: the turn passes straight to the waiter.
    this.#turnAddress = address;
    waiter?.(true);
  }

  /**
   * Refuses the newest waiter of the line that comes first (most recent failures, then longest),
   * if it comes before `address`'s own line of `length`; whether one was.
   */
  #evictBefore(address: string, length: number): boolean {
    let first: { address: string; line: Waiter[]; failures: number } | undefined;
    let bar = { failures: this.#failuresOf(address), length };
    for (const [candidate, line] of this.#lines) {
      const failures = this.#failuresOf(candidate);
      if (failures > bar.failures || (failures === bar.failures && line.length > bar.length)) {
        first = { address: candidate, line, failures };
        bar = { failures, length: line.length };
      }
    }
    if (first === undefined) return false;
    const evicted = first.line.pop();
    if (first.line.length === 0) this.#lines.delete(first.address);
    this.#waiting--;
    evicted?.(false);
    return true;
  }
}
