import type {
  MergeQueue,
  QuarantinedTestsPage,
  RepoRef,
  SubmittedPullRequest,
} from '../../trunk/schemas.js';
import type { ReadOptions } from '../readOptions.js';

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
