// After a successful merge-queue poll: the flow since the previous successful poll of that queue.
import { advanceQueueFlow, startQueueFlow } from '../flow/queueFlow.js';
import { departedPullRequests } from '../flow/queueDiff.js';
import type { QueueFlow } from '../snapshot/queueFlowTypes.js';
import type { Logger } from '../log/logger.js';
import type { MergeQueueSnapshot } from '../snapshot/types.js';
import type { RepoRef } from '../trunk/schemas.js';
import { lookUpExits } from './exitLookup.js';
import type { ReadOptions, TrunkReader } from './trunkReader.js';

interface QueueFlowPollRequest {
  readonly reader: TrunkReader;
  readonly repo: RepoRef;
  readonly pullRequestDetails: boolean;
  readonly options: ReadOptions;
  readonly logger: Logger;
  /** The ledger as of the previous successful poll; undefined after a start (or a config change). */
  readonly previous: QueueFlow | undefined;
  readonly current: MergeQueueSnapshot;
  readonly maxGapSeconds: number;
}

/**
 * The queue's ledger including `current`: looks up the PRs that left since the previous successful
 * poll, then diffs. Without a previous poll nothing is counted: every PR would look new.
 */
export async function followQueueFlow(request: QueueFlowPollRequest): Promise<QueueFlow> {
  const { previous, current } = request;
  if (previous === undefined) return startQueueFlow(current);
  const lookups = await lookUpExits({
    reader: request.reader,
    repo: request.repo,
    repoName: current.repo,
    branch: current.branch,
    prNumbers: departedPullRequests(previous, current).map((pr) => pr.number),
    pullRequestDetails: request.pullRequestDetails,
    options: request.options,
    logger: request.logger,
  });
  return advanceQueueFlow(previous, current, lookups, { maxGapSeconds: request.maxGapSeconds });
}
