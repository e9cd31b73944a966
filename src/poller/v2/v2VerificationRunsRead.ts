// When a merge queue's verification runs are read through API v2, and from where: on the polls that
// see the testing set change, each read from the oldest run still in progress (else the newest
// seen), so every run counts once by id and the runs in progress are the slots in use.
import {
  countVerificationRuns,
  startVerificationRuns,
  verificationRunReadAbandoned,
  verificationRunReadFailed,
  withKnownRunSeries,
} from '../../flow/verificationRuns.js';
import { runsReadDue, testingSince } from '../../flow/verificationRunReadsDue.js';
import type { Logger } from '../../log/logger.js';
import type { MergeQueueSnapshot } from '../../snapshot/types.js';
import type { VerificationRuns } from '../../snapshot/verificationRunTypes.js';
import type { V2QueueRef } from '../../trunk/v2Client.js';
import { CLOCK_SLACK_SECONDS, READ_OVERLAP_SECONDS } from '../../trunk/timestamps.js';
import { V2PagingError } from '../../trunk/v2Paging.js';
import { V2_ENDPOINTS } from '../../trunk/v2Schemas.js';
import type { V2VerificationRun } from '../../trunk/v2VerificationRunSchemas.js';
import { earliest } from '../testCounts.js';
import type { ReadOptions } from '../readOptions.js';
import { isoTime } from '../timestamps.js';
import type { V2PullRequestLister } from './v2MergeQueuePoll.js';

/** The v2 read of verification runs, and what it reports of them (implemented by TrunkV2Client). */
export interface V2VerificationRunLister extends Pick<V2PullRequestLister, 'reportAnomaly'> {
  listVerificationRuns(
    queue: V2QueueRef,
    createdAfter: string,
    options?: ReadOptions,
  ): Promise<V2VerificationRun[]>;
}

interface VerificationRunsReadRequest {
  readonly reader: V2VerificationRunLister;
  readonly queue: V2QueueRef;
  /** The snapshot of the previous successful poll (its runs included); undefined at the first. */
  readonly previousSnapshot: MergeQueueSnapshot | undefined;
  readonly current: MergeQueueSnapshot;
  readonly staleAfterSeconds: number;
  readonly options: ReadOptions;
  readonly logger: Logger;
}

/**
 * The queue's verification runs after this poll. The first poll reads only when PRs are testing
 * (to know the runs in progress), from just before the earliest entered testing; later polls when
 * runsReadDue() says so. A failed read is logged and made again at the next poll; it never fails
 * the poll. Rejects only when the poll is being aborted.
 */
export async function readVerificationRuns(
  request: VerificationRunsReadRequest,
): Promise<VerificationRuns> {
  const { current, queue } = request;
  const batching = current.settings.batch;
  const previous = request.previousSnapshot?.verificationRuns;
  let runs: VerificationRuns;
  if (previous === undefined) {
    const testing = testingSince(current);
    // earliest() loops: the live list may hold more entries than a call takes arguments.
    const since = earliest(
      [current.takenAt, ...testing.values()].map((at) => at ?? current.takenAt),
    );
    runs = startVerificationRuns(
      current.takenAt,
      (since ?? current.takenAt) - READ_OVERLAP_SECONDS,
      batching,
    );
    if (testing.size === 0) return runs;
  } else {
    runs = { ...previous, counts: withKnownRunSeries(previous.counts, batching) };
    if (!runsReadDue(runs, request.previousSnapshot, current)) return runs;
  }
  const readAt = current.takenAt;
  let rows: V2VerificationRun[];
  try {
    rows = await request.reader.listVerificationRuns(
      queue,
      isoTime(runs.reads.createdAfter),
      request.options,
    );
  } catch (error) {
    if (request.options.signal?.aborted === true) throw error;
    if (error instanceof V2PagingError) {
      const from = readAt - CLOCK_SLACK_SECONDS;
      request.logger.warn(
        { repo: queue.repo, branch: queue.branch },
        `verification runs read failed (${error.message}): the runs created from ${isoTime(runs.reads.createdAfter)} to ${isoTime(from)} are not counted, and the next read starts at ${isoTime(from)}`,
      );
      return verificationRunReadAbandoned(runs, readAt, request.staleAfterSeconds, from);
    }
    request.logger.warn(
      { repo: queue.repo, branch: queue.branch },
      `verification runs read failed, tried again at the next poll: ${error instanceof Error ? error.message : String(error)}`,
    );
    return verificationRunReadFailed(runs, readAt, request.staleAfterSeconds);
  }
  const counted = countVerificationRuns(runs, rows, readAt, readAt + CLOCK_SLACK_SECONDS);
  if (counted.futureRuns > 0) {
    request.reader.reportAnomaly(
      V2_ENDPOINTS.listVerificationRuns,
      'future_timestamp',
      counted.futureRuns,
    );
  }
  return counted.runs;
}
