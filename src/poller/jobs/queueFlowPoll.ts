// After a successful merge-queue poll: the flow since the previous successful poll of that queue.
import {
  advanceQueueFlow,
  countConcludedExits,
  exitsToLookUp,
  startQueueFlow,
  type QueueFlowOptions,
  type QueueFlowUpdate,
} from '../../flow/queueFlow.js';
import { withMerges } from '../../flow/lastMerge.js';
import type { QueueFlow } from '../../snapshot/queueFlowTypes.js';
import type { Logger } from '../../log/logger.js';
import type { MergeQueueSnapshot } from '../../snapshot/types.js';
import type { RepoRef } from '../../trunk/schemas.js';
import { lookUpExits } from '../v1/exitLookup.js';
import { startConcludedReads, type V2ExitRead } from '../v2/v2ExitLookup.js';
import type { ReadOptions } from '../readOptions.js';
import type { TrunkReader } from '../v1/trunkReader.js';

export interface QueueFlowPollRequest {
  readonly reader: TrunkReader;
  readonly repo: RepoRef;
  readonly pullRequestDetails: boolean;
  readonly options: ReadOptions;
  readonly logger: Logger;
  /** The ledger as of the previous successful poll; undefined after a start (or a config change). */
  readonly previous: QueueFlow | undefined;
  readonly current: MergeQueueSnapshot;
  readonly flowOptions: QueueFlowOptions;
  /**
   * API v2 instead of one v1 call per departed PR: one read of the queue's concluded entries,
   * which also finds exits no poll saw (v2ExitLookup.ts).
   */
  readonly readExits?: (
    previous: QueueFlow,
    prNumbers: readonly number[],
    since: number,
  ) => Promise<V2ExitRead>;
  /** Exit lookups in progress at once (lookupsAtATime()). */
  readonly lookupsAtATime?: number;
  /** API v2: the queue's latest merge before the exporter watched it, read when the ledger starts. */
  readonly readLastMerge?: () => Promise<number | undefined>;
}

/**
 * How the queue's ledger takes `current`: looks up the PRs that left since the previous successful
 * poll, then diffs. Without a previous poll nothing is counted: every PR would look new. The diff is
 * applied to the ledger as it is when the poll is recorded, not as it was before the lookups: a
 * webhook event may have changed it meanwhile.
 */
export async function followQueueFlow(request: QueueFlowPollRequest): Promise<QueueFlowUpdate> {
  const { previous, current, flowOptions } = request;
  // Through API v2 the reads of concluded entries count from the ledger's first poll.
  const start = (): QueueFlow =>
    request.readExits === undefined
      ? startQueueFlow(current)
      : { ...startQueueFlow(current), concludedReads: startConcludedReads(current.takenAt) };
  if (previous === undefined) {
    const lastMergeAt = await request.readLastMerge?.();
    return () => withMerges(start(), [lastMergeAt]);
  }
  const prNumbers = exitsToLookUp(previous, current);
  if (request.readExits !== undefined) {
    const read = await request.readExits(
      previous,
      prNumbers,
      earliestStateSince(previous, prNumbers),
    );
    return (latest) => {
      if (latest === undefined) return start();
      const advanced = advanceQueueFlow(
        latest,
        current,
        read.lookups,
        flowOptions,
        read.resubmissions,
      );
      return {
        ...countConcludedExits(advanced, read.concluded, current.takenAt, flowOptions),
        concludedReads: read.reads,
      };
    };
  }
  const lookups = await lookUpExits({
    reader: request.reader,
    repo: request.repo,
    repoName: current.repo,
    branch: current.branch,
    prNumbers,
    pullRequestDetails: request.pullRequestDetails,
    options: request.options,
    logger: request.logger,
    ...(request.lookupsAtATime === undefined ? {} : { lookupsAtATime: request.lookupsAtATime }),
  });
  return (latest) =>
    latest === undefined ? start() : advanceQueueFlow(latest, current, lookups, flowOptions);
}

/**
 * The earliest time the departed PRs were last seen changing state: each concluded after it. From
 * their stateChangedAt (Trunk's clock) where the polls had one, so the window of concluded entries
 * does not depend on the exporter's clock agreeing with Trunk's.
 */
function earliestStateSince(flow: QueueFlow, prNumbers: readonly number[]): number {
  let earliest = flow.lastPollAt;
  for (const number of prNumbers) {
    const seen = flow.tracked.get(number) ?? flow.departed.get(number);
    if (seen !== undefined && seen.stateSince < earliest) earliest = seen.stateSince;
  }
  return earliest;
}
