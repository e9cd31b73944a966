// A merge queue's latest merge before the exporter watched it, from API v2: read once, when the
// queue's ledger starts, so that trunk_merge_queue_last_merge_timestamp_seconds is known at start.
import { latestMerge, plausibleMergeTime } from '../../flow/lastMerge.js';
import type { Logger } from '../../log/logger.js';
import type { V2QueueRef } from '../../trunk/v2Requests.js';
import { isoTime, parseTimestampSeconds } from '../timestamps.js';
import type { ReadOptions } from '../readOptions.js';
import type { V2PullRequestLister } from './v2MergeQueuePoll.js';

/**
 * The windows of merged entries read in turn, widest last, until one holds a merge: the list is in
 * enqueue order, so each is walked to its end, and a busy queue's hour costs one page where its
 * week would cost dozens. A queue with no merge in the widest has no last merge known.
 */
export const LAST_MERGE_WINDOWS_SECONDS = [3600, 86_400, 7 * 86_400] as const;

interface LastMergeReadRequest {
  readonly reader: V2PullRequestLister;
  readonly queue: V2QueueRef;
  /** The exporter's clock, unix seconds. */
  readonly now: number;
  readonly options: ReadOptions;
  readonly logger: Logger;
}

/**
 * Unix seconds of the queue's latest merged entry: the latest `stateChangedAt` of
 * `state=merged&concludedAfter=<window>`, over the first window that has one. An entry without a
 * date-time, or one in the future, is not used. Undefined when there is none or a read failed
 * (logged: the merges the polls see fill it in); rejects only when the poll is being aborted.
 */
export async function readLastMergeV2(request: LastMergeReadRequest): Promise<number | undefined> {
  const { queue, now, options } = request;
  try {
    for (const window of LAST_MERGE_WINDOWS_SECONDS) {
      const rows = await request.reader.listQueuePullRequests(
        queue,
        { states: ['merged'], concludedAfter: isoTime(now - window) },
        options,
      );
      const latest = latestMerge(
        undefined,
        rows.map((row) =>
          row.queueEntry.state === 'merged'
            ? plausibleMergeTime(parseTimestampSeconds(row.queueEntry.stateChangedAt), now)
            : undefined,
        ),
      );
      if (latest !== undefined) return latest;
    }
    return undefined;
  } catch (error) {
    if (options.signal?.aborted === true) throw error;
    request.logger.warn(
      { repo: queue.repo, branch: queue.branch },
      `read of the last merge failed, known from the next merge seen: ${error instanceof Error ? error.message : String(error)}`,
    );
    return undefined;
  }
}
