import type { ReadOptions } from './trunkReader.js';

/**
 * An organization-wide read (a v2 list every target of the organization shares) made at most once
 * per `maxAgeSeconds` however many polls ask: they share the read in progress, then its answer
 * until it is due again. A read that failed is not made again before it is due either: the polls
 * that ask meanwhile fail with its error (their data goes stale by `staleAfterSeconds`), and the
 * last good answer stays readable through `latest()` (discovery keeps its targets with it).
 */
export class SharedRead<T> {
  #latest: T | undefined;
  /** When the last read ended (successful or not); the next is due maxAgeSeconds later. */
  #endedAt = Number.NEGATIVE_INFINITY;
  #failure: unknown;
  #failed = false;
  #reading: Promise<T> | undefined;

  constructor(
    private read: (options: ReadOptions) => Promise<T>,
    private maxAgeSeconds: number,
    private readonly now: () => number = () => Date.now() / 1000,
  ) {}

  /** Follows a reload: a new reader or interval; what was read stays until it is due. */
  configure(read: (options: ReadOptions) => Promise<T>, maxAgeSeconds: number): void {
    this.read = read;
    this.maxAgeSeconds = maxAgeSeconds;
  }

  /**
   * The answer of the latest read when it is younger than maxAgeSeconds; else a new read, shared
   * by every caller until it ends. Rejects with the latest read's error until it is due again.
   */
  async get(options: ReadOptions = {}): Promise<T> {
    if (this.#reading !== undefined) return this.#reading;
    if (this.now() - this.#endedAt < this.maxAgeSeconds) {
      if (this.#failed) throw this.#failure;
      if (this.#latest !== undefined) return this.#latest;
    }
    this.#reading = this.#readNow(options).finally(() => {
      this.#reading = undefined;
    });
    return this.#reading;
  }

  /** The answer of the last successful read, however old; undefined before the first. */
  latest(): T | undefined {
    return this.#latest;
  }

  /** The next get() reads again (once, however many ask), e.g. after a 404 on an id it gave. */
  invalidate(): void {
    this.#endedAt = Number.NEGATIVE_INFINITY;
  }

  async #readNow(options: ReadOptions): Promise<T> {
    try {
      const value = await this.read(sharedRead(options));
      this.#latest = value;
      this.#failed = false;
      this.#failure = undefined;
      return value;
    } catch (error) {
      this.#failed = true;
      this.#failure = error;
      throw error;
    } finally {
      this.#endedAt = this.now();
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
