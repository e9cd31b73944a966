// Calls of one kind whose rate Trunk limits per key (a budget apart from the organization's 100 a
// second, which the request limiter keeps): one at a time, each a fixed time after the one before
// was answered, so that no two reach Trunk closer than that whatever the network's delays.
import { performance } from 'node:perf_hooks';

/** Runs calls of one kind one at a time, in the order asked, each `spacingMs` after the last ended. */
export class CallSpacing {
  #previous: Promise<void> = Promise.resolve();
  #lastEndedAt = Number.NEGATIVE_INFINITY;

  /** @param spacingMs the least time from one call's answer to the next call's start. */
  constructor(readonly spacingMs: number) {}

  async run<T>(call: () => Promise<T>): Promise<T> {
    const previous = this.#previous;
    let release = (): void => undefined;
    this.#previous = new Promise((resolve) => {
      release = resolve;
    });
    await previous;
    const wait = this.#lastEndedAt + this.spacingMs - performance.now();
    // A timer runs from the event loop's clock, which may lag this one by up to a millisecond.
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, Math.ceil(wait) + 1));
    try {
      return await call();
    } finally {
      this.#lastEndedAt = performance.now();
      release();
    }
  }
}
