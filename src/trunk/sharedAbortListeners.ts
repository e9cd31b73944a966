// One abort listener per signal for everything waiting on it.

/**
 * Calls `onAbort(item, reason)` for each item still watched on a signal when it aborts, with one
 * listener per signal rather than one per item: a poll's lookups all wait on the poll's signal, and
 * EventTarget walks its whole listener list on every add, so thousands of waiters each adding their
 * own listener cost quadratic time.
 */
export class SharedAbortListeners<T> {
  readonly #onAbort: (item: T, reason: unknown) => void;
  readonly #bySignal = new WeakMap<AbortSignal, { items: Set<T>; listener: () => void }>();

  constructor(onAbort: (item: T, reason: unknown) => void) {
    this.#onAbort = onAbort;
  }

  watch(signal: AbortSignal, item: T): void {
    let group = this.#bySignal.get(signal);
    if (group === undefined) {
      const items = new Set<T>();
      const listener = (): void => {
        this.#bySignal.delete(signal);
        for (const aborted of items) this.#onAbort(aborted, signal.reason);
      };
      group = { items, listener };
      this.#bySignal.set(signal, group);
      signal.addEventListener('abort', listener, { once: true });
    }
    group.items.add(item);
  }

  unwatch(signal: AbortSignal, item: T): void {
    const group = this.#bySignal.get(signal);
    if (group === undefined) return;
    group.items.delete(item);
    // No listener stays behind on a signal that outlives its waiters (a job's, across a reload).
    if (group.items.size === 0) {
      this.#bySignal.delete(signal);
      signal.removeEventListener('abort', group.listener);
    }
  }
}
