/** What `BcryptQueue.run` gives back when the comparison was refused a place in line. */
export const QUEUE_FULL = Symbol('bcrypt queue full');

/** Called with true when a waiter's turn comes, false when it loses its place to a newcomer. */
type Waiter = (turn: boolean) => void;

/** How many comparisons may wait for their turn. */
export interface BcryptQueueLimits {
  /** Waiting from one client address; beyond, that address's next request is refused. */
  readonly perAddress: number;
  /** Waiting in all; beyond, a newcomer takes the place of the newest waiter of a longer line. */
  readonly total: number;
}

/**
 * The turns of the bcrypt comparisons: one runs at a time (in the worker thread) and the turns go
 * round-robin across client addresses, so that a flood from a few addresses delays another
 * address's check by one turn per flooding address instead of locking it out. Both lines are
 * bounded: a request beyond its address's limit is refused at once, unhashed, and one arriving when
 * every place is taken takes the newest waiter's place in the longest line, if that line is longer
 * than its own address's.
 */
export class BcryptQueue {
  readonly #limits: BcryptQueueLimits;
  #busy = false;
  /** The address whose task runs, which waits behind every other address for its next turn. */
  #turnAddress = '';
  #waiting = 0;
  /** Each address's waiters, oldest first; a Map keeps insertion order, so it is also the ring. */
  readonly #lines = new Map<string, Waiter[]>();

  constructor(limits: BcryptQueueLimits) {
    this.#limits = limits;
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
    if (this.#waiting >= this.#limits.total && !this.#evictLongerThan(line.length)) {
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

  /** Refuses the newest waiter of the longest line, if longer than `length`; whether one was. */
  #evictLongerThan(length: number): boolean {
    let longest: { address: string; line: Waiter[] } | undefined;
    for (const [address, line] of this.#lines) {
      if (line.length > (longest?.line.length ?? length)) longest = { address, line };
    }
    if (longest === undefined) return false;
    const evicted = longest.line.pop();
    if (longest.line.length === 0) this.#lines.delete(longest.address);
    this.#waiting--;
    evicted?.(false);
    return true;
  }
}
