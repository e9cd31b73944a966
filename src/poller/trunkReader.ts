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
