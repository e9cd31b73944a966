// How many polls are in progress at once, so that hundreds due together (at start) finish a batch
// at a time, each holding its answers; a poll that has sent its last lookup makes room for the next.

/** Polls in progress at once, at least (see pollsAtOnce()). */
export const POLLS_AT_ONCE = 16;

/**
 * Polls at once with `maxConcurrentRequests` slots: five for every sixteen, since a poll keeps four
 * lookups in progress only once its getQueue is answered; each poll more holds its answers.
 */
export function pollsAtOnce(maxConcurrentRequests: number): number {
  return Math.max(POLLS_AT_ONCE, Math.ceil((maxConcurrentRequests * 5) / 16));
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
   * function once the poll has sent its last lookup, or is over (a second call does nothing).
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
