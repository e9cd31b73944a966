import type { RequestPriority } from '../trunk/requestLimiter.js';
import type {
  MergeQueue,
  QuarantinedTestsPage,
  RepoRef,
  SubmittedPullRequest,
} from '../trunk/schemas.js';

/** Per-call limits the poller passes down: abort on shutdown, and no retry past the poll's budget. */
export interface ReadOptions {
  readonly signal?: AbortSignal;
  /** Epoch milliseconds after which no retry wait may end. */
  readonly deadlineMs?: number;
  /** Calls after a poll's first one pass `follow_up`, so started polls finish first. */
  readonly priority?: RequestPriority;
}

/** The options for a call that continues a poll already in progress. */
export function followUp(options: ReadOptions): ReadOptions {
  return { ...options, priority: 'follow_up' };
}

/** The reads the poller needs from the Trunk API (implemented by TrunkClient). */
export interface TrunkReader {
  getQueue(repo: RepoRef, targetBranch: string, options?: ReadOptions): Promise<MergeQueue>;
  getSubmittedPullRequest(
    repo: RepoRef,
    targetBranch: string,
    prNumber: number,
    options?: ReadOptions,
  ): Promise<SubmittedPullRequest | undefined>;
  listQuarantinedTests(
    repo: RepoRef,
    orgUrlSlug: string,
    page: { pageSize: number; pageToken: string },
    options?: ReadOptions,
  ): Promise<QuarantinedTestsPage>;
}
