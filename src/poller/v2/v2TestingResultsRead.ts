// When a merge queue's testing results are read through API v2, and from where: on the polls that
// see a stretch of testing end (testingSeen.ts), each read continuing from the last, so every
// result counts once and none from before the exporter started.
import { testingMayHaveEndedBetween } from '../../flow/testingSeen.js';
import type { Logger } from '../../log/logger.js';
import type { TestingAttempts } from '../../snapshot/testingAttemptTypes.js';
import type { MergeQueueSnapshot } from '../../snapshot/types.js';
import type { V2QueueRef } from '../../trunk/v2Requests.js';
import { CLOCK_SLACK_SECONDS } from '../../trunk/timestamps.js';
import { V2PagingError } from '../../trunk/v2Paging.js';
import { V2_ENDPOINTS, type V2TestingResult } from '../../trunk/v2Schemas.js';
import type { ReadAnswer } from '../pollReads.js';
import type { ReadOptions } from '../readOptions.js';
import { isoTime } from '../timestamps.js';
import { PERIODIC_EXIT_READ_POLLS } from './v2ExitLookup.js';
import type { V2PullRequestLister } from './v2MergeQueuePoll.js';
import {
  earliestTestingSince,
  countTestingResults,
  startTestingAttempts,
  withKnownSeries,
} from './v2TestingResults.js';

/** The v2 read of testing results, and what it reports of them (implemented by TrunkV2Client). */
export interface V2TestingResultLister extends Pick<V2PullRequestLister, 'reportAnomaly'> {
  listTestingResults(
    queue: V2QueueRef,
    since: string,
    options?: ReadOptions,
  ): Promise<V2TestingResult[]>;
}

interface TestingResultsReadRequest {
  readonly reader: V2TestingResultLister;
  readonly queue: V2QueueRef;
  /** The queue's testing attempts as of the previous successful poll; undefined at its first. */
  readonly previous: TestingAttempts | undefined;
  /** The snapshot of the previous successful poll. */
  readonly previousSnapshot: MergeQueueSnapshot | undefined;
  readonly current: MergeQueueSnapshot;
  readonly options: ReadOptions;
  readonly logger: Logger;
}

/**
 * The queue's testing attempts after this poll. Results are read when the poll saw a stretch of
 * testing end (testingMayHaveEndedBetween: "Testing still in progress is not included", so a result
 * appears only once its PR left `testing`) or PERIODIC_EXIT_READ_POLLS polls after the last read,
 * for testing that began and ended between two polls with nothing the polls saw; the queue's
 * first poll only starts counting (both `skipped`). A failed read is logged and tried again at the
 * next read's turn, from where the last good one got to: its answer is the attempts as they were,
 * with the failure beside them; it never fails the poll. A read whose paging cannot be trusted
 * (past V2_MAX_WINDOW_PAGES pages, a cursor repeated) gives its window up instead: the results
 * ended before this read, less CLOCK_SLACK_SECONDS, are not counted (a warn line names the span).
 * Rejects only when the poll is being aborted.
 */
export async function readTestingResults(
  request: TestingResultsReadRequest,
): Promise<ReadAnswer<TestingAttempts>> {
  const { current, queue } = request;
  // A queue whose batching setting is unknown (another type) is read as one that does not batch.
  const batching = current.settings.batch === true;
  if (request.previous === undefined) {
    return { value: startTestingAttempts(current.takenAt, batching), skipped: true };
  }
  const { reads } = request.previous;
  const counts = withKnownSeries(request.previous.counts, batching);
  const pollsSinceRead = reads.pollsSinceRead + 1;
  const ended =
    request.previousSnapshot !== undefined &&
    testingMayHaveEndedBetween(request.previousSnapshot, current);
  if (pollsSinceRead < PERIODIC_EXIT_READ_POLLS && !ended) {
    return {
      value: { ...request.previous, counts, reads: { ...reads, pollsSinceRead } },
      skipped: true,
    };
  }
  const readAt = current.takenAt;
  const since = Math.max(reads.countFrom, earliestTestingSince(readAt));
  if (since > reads.countFrom) {
    request.logger.warn(
      { repo: queue.repo, branch: queue.branch, uncountedSeconds: since - reads.countFrom },
      `testing results from ${isoTime(reads.countFrom)} to ${isoTime(since)} are not counted: ` +
        'no read succeeded for longer than Trunk keeps them (45 days)',
    );
  }
  let rows: V2TestingResult[];
  try {
    rows = await request.reader.listTestingResults(queue, isoTime(since), request.options);
  } catch (error) {
    if (request.options.signal?.aborted === true) throw error;
    const failure = error instanceof Error ? error : new Error(String(error));
    // A window past its page bound (or whose cursors repeat) would fail the same way at the same
    // cost on every read, each asking a longer one: it is given up, and the next read asks only
    // for what ends from this read on (less the clocks' slack).
    const from =
      error instanceof V2PagingError ? Math.max(since, readAt - CLOCK_SLACK_SECONDS) : since;
    if (from > since) {
      request.logger.warn(
        { repo: queue.repo, branch: queue.branch, uncountedSeconds: from - since },
        `testing results from ${isoTime(since)} to ${isoTime(from)} are not counted: their read ` +
          `failed (${failure.message}), and the next read starts at ${isoTime(from)}`,
      );
    } else {
      request.logger.warn(
        { repo: queue.repo, branch: queue.branch },
        `testing results read failed, tried again at the next read: ${failure.message}`,
      );
    }
    return {
      value: {
        ...request.previous,
        counts,
        reads: { ...reads, countFrom: from, pollsSinceRead: 0 },
      },
      failure,
    };
  }
  const { attempts, futureResults } = countTestingResults(
    { ...request.previous, counts, reads: { ...reads, countFrom: since } },
    rows,
    readAt,
  );
  if (futureResults > 0) {
    request.reader.reportAnomaly(
      V2_ENDPOINTS.listTestingResults,
      'future_timestamp',
      futureResults,
    );
    request.logger.warn(
      { repo: queue.repo, branch: queue.branch, results: futureResults },
      `testing results ended over ${String(CLOCK_SLACK_SECONDS)} s after the exporter's clock ` +
        `(${isoTime(readAt)}): counted once, and the next read starts before that (check both clocks)`,
    );
  }
  return { value: attempts };
}
