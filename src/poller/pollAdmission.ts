// How many polls are in progress at once: when hundreds are due together (at start), they finish
// a batch at a time instead of all taking turns for the whole cycle, each holding its answers.

/** Polls in progress at once, at least (see pollsAtOnce()). */
export const POLLS_AT_ONCE = 16;

/**
 * Polls in progress at once with `maxConcurrentRequests` slots: seven for every sixteen slots.
 * A poll keeps four lookups in progress only between its getQueue and its last lookups, so one
 * poll for every four slots would leave slots idle; each poll more holds its answers so far.
 */
export function pollsAtOnce(maxConcurrentRequests: number): number {
  return Math.max(POLLS_AT_ONCE, Math.ceil((maxConcurrentRequests * 7) / 16));
}

/** At most `size` polls in progress; the others wait, first come first served. */
export class PollAdmission {
  #free: number;
  readonly #waiting = new Set<() => void>();

  constructor(size: number) {
    this.#free = size;
  }

  /**
   * Waits for a place (rejects with the signal's reason if it aborts first); call the returned
   * function once the poll is over.
   */
  async enter(signal: AbortSignal): Promise<() => void> {
    signal.throwIfAborted();
    if (this.#free > 0) this.#free -= 1;
    else {
      await new Promise<void>((resolve, reject) => {
        // The signal's reason as given, like every other wait of a poll that ends on abort.
        const fail: (reason: unknown) => void = reject;
        const admit = (): void => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
        const onAbort = (): void => {
          this.#waiting.delete(admit);
          fail(signal.reason);
        };
        this.#waiting.add(admit);
        signal.addEventListener('abort', onAbort, { once: true });
      });
    }
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const next = this.#waiting.values().next().value;
      // The place goes straight to the next poll, so a newcomer cannot pass those waiting.
      if (next === undefined) this.#free += 1;
      else {
        this.#waiting.delete(next);
        next();
      }
    };
  }
}
