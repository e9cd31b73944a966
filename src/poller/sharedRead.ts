import type { ReadOptions } from './readOptions.js';

/** A shared read's answer: the last good value, when it was read, and whether the latest read failed. */
export interface SharedAnswer<T> {
  readonly value: T;
  /** Unix seconds when the read that gave `value` ended. */
  readonly readAt: number;
  /** The error of the latest read, when it failed after `value` was read; undefined when it did not. */
  readonly failure: Error | undefined;
}

/** How often a shared read is made, and how long its last good answer outlives failed reads. */
export interface SharedReadTiming {
  /** A read younger than this is not made again (the interval of the polls that share it). */
  readonly maxAgeSeconds: number;
  /** How long the last good answer is served while the reads after it fail. */
  readonly staleAfterSeconds: number;
}

/**
 * An organization-wide read (a v2 list every target of the organization shares) made at most once
 * per `maxAgeSeconds` however many polls ask: they share the read in progress, then its answer
 * until it is due again. A read that failed is not made again before it is due either; meanwhile
 * the last good answer is served, with the failure beside it, until it is older than
 * `staleAfterSeconds` (as a failed target's data goes stale), and then the failure itself.
 */
export class SharedRead<T> {
  #good: { readonly value: T; readonly readAt: number } | undefined;
  /** When the last read ended (successful or not); the next is due maxAgeSeconds later. */
  #endedAt = Number.NEGATIVE_INFINITY;
  /** The error of the latest read, when it failed. */
  #failure: Error | undefined;
  #reading: Promise<void> | undefined;
  /** A refresh was asked for while #reading ran: its answer may predate what the asker knows. */
  #refreshAsked = false;

  constructor(
    private read: (options: ReadOptions) => Promise<T>,
    private timing: SharedReadTiming,
    private readonly now: () => number = () => Date.now() / 1000,
    /** Told of each read that failed, once (the polls it serves may not fail with it). */
    private readonly onFailure: (error: Error) => void = () => undefined,
  ) {}

  /** Follows a reload: a new reader or timing; what was read stays until it is due. */
  configure(read: (options: ReadOptions) => Promise<T>, timing: SharedReadTiming): void {
    this.read = read;
    this.timing = timing;
  }

  /**
   * The answer of the latest read when it is younger than maxAgeSeconds; else a new read, shared
   * by every caller until it ends. A caller that asks after a refresh was asked for gets the
   * answer of a read begun after that. Rejects with the latest read's error when no good answer
   * is younger than staleAfterSeconds. A caller with a deadline waits for a read in progress at
   * most half the time left to it while a good answer can serve it (see #waitFor).
   */
  async get(options: ReadOptions = {}): Promise<SharedAnswer<T>> {
    if (this.#reading !== undefined) {
      const refreshAsked = this.#refreshAsked;
      // The read this caller joined began before the refresh it must see: the next one is its.
      if (refreshAsked) {
        await this.#reading;
        return this.get(options);
      }
      await this.#waitFor(this.#reading, options);
      return this.#answer();
    }
    if (this.now() - this.#endedAt >= this.timing.maxAgeSeconds) {
      // A read asked for as a refresh is waited for whole: its callers need what it reads.
      const refresh = this.#endedAt === Number.NEGATIVE_INFINITY;
      const reading = this.#readNow(options).finally(() => {
        this.#reading = undefined;
      });
      this.#reading = reading;
      await (refresh ? reading : this.#waitFor(reading, options));
    }
    return this.#answer();
  }

  /**
   * Waits for `reading`, or, while a good answer younger than staleAfterSeconds can serve, for
   * half the time left to the caller's deadline at most: a list slow to answer (or hanging until
   * the timeout, retried) then leaves each poll with the last list and time to make its own read,
   * rather than making every poll of the organization late. The read goes on; its answer serves
   * the polls after it.
   */
  async #waitFor(reading: Promise<void>, options: ReadOptions): Promise<void> {
    const good = this.#good;
    const servable =
      good !== undefined && this.now() - good.readAt <= this.timing.staleAfterSeconds;
    if (options.deadlineMs === undefined || !servable) {
      await reading;
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const halfTheTimeLeft = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.max(0, (options.deadlineMs ?? 0) - Date.now()) / 2);
    });
    await Promise.race([reading, halfTheTimeLeft]);
    clearTimeout(timer);
  }

  /** The answer of the last successful read, however old; undefined before the first. */
  latest(): T | undefined {
    return this.#good?.value;
  }

  /**
   * The next get() reads again (once, however many ask), e.g. after a 404 on an id it gave or an
   * event saying the list changed; asked during a read, once that read has ended, since its
   * answer may predate the change.
   */
  invalidate(): void {
    if (this.#reading === undefined) this.#endedAt = Number.NEGATIVE_INFINITY;
    else this.#refreshAsked = true;
  }

  #answer(): SharedAnswer<T> {
    const good = this.#good;
    const failure = this.#failure;
    if (good === undefined) throw failure ?? new Error('no read was made');
    if (failure === undefined) return { ...good, failure };
    if (this.now() - good.readAt > this.timing.staleAfterSeconds) throw failure;
    return { ...good, failure };
  }

  async #readNow(options: ReadOptions): Promise<void> {
    try {
      const value = await this.read(sharedRead(options));
      this.#good = { value, readAt: this.now() };
      this.#failure = undefined;
    } catch (error) {
      this.#failure = error instanceof Error ? error : new Error(String(error));
      this.onFailure(this.#failure);
    } finally {
      this.#endedAt = this.#refreshAsked ? Number.NEGATIVE_INFINITY : this.now();
      this.#refreshAsked = false;
    }
  }
}

/**
 * The options of a read that serves every target of the organization: without the asking poll's
 * signal, whose abort must not fail the others' (closing the client still ends it).
 */
export function sharedRead(options: ReadOptions): ReadOptions {
  return {
    ...(options.deadlineMs === undefined ? {} : { deadlineMs: options.deadlineMs }),
  };
}
