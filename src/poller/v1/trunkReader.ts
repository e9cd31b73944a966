import type { ApiAnomalyKind } from '../../trunk/observer.js';
import type {
  Endpoint,
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
  /** Counts `count` anomalies of `kind` that a walk found in what `endpoint` answered. */
  reportAnomaly(endpoint: Endpoint, kind: ApiAnomalyKind, count: number): void;
}
