/** Per-call limits the poller passes down: abort on shutdown, and no retry past the poll's budget. */
export interface ReadOptions {
  readonly signal?: AbortSignal;
  /** Epoch milliseconds after which no retry wait may end. */
  readonly deadlineMs?: number;
}
