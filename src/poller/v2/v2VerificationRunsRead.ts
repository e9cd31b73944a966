// When a merge queue's verification runs are read through API v2, and from where: on the polls that
// see the testing set change, each read from the oldest run still in progress (else the newest
// seen), so every run counts once by id and the runs in progress are the slots in use; a run in
// progress the list no longer reaches (over a day) is read by id.
import {
  MAX_FOLLOWED_RUNS,
  countVerificationRuns,
  runsFollowedById,
  startVerificationRuns,
  verificationRunReadAbandoned,
  verificationRunReadFailed,
  withKnownRunSeries,
  type FollowedRunRead,
  type RunsAfterRead,
} from '../../flow/verificationRuns.js';
import { runsReadDue, testingSince } from '../../flow/verificationRunReadsDue.js';
import type { Logger } from '../../log/logger.js';
import type { MergeQueueSnapshot } from '../../snapshot/types.js';
import type { VerificationRuns } from '../../snapshot/verificationRunTypes.js';
import type { V2QueueRef } from '../../trunk/v2Requests.js';
import { CLOCK_SLACK_SECONDS, READ_OVERLAP_SECONDS } from '../../trunk/timestamps.js';
import { V2PagingError } from '../../trunk/v2Paging.js';
import { V2_ENDPOINTS } from '../../trunk/v2Schemas.js';
import type { V2VerificationRun } from '../../trunk/v2VerificationRunSchemas.js';
import { earliest } from '../testCounts.js';
import type { ReadOptions } from '../readOptions.js';
import { isoTime } from '../timestamps.js';
import type { V2PullRequestLister } from './v2MergeQueuePoll.js';

/** The v2 reads of verification runs, and what it reports of them (implemented by TrunkV2Client). */
export interface V2VerificationRunLister extends Pick<V2PullRequestLister, 'reportAnomaly'> {
  listVerificationRuns(
    queue: V2QueueRef,
    createdAfter: string,
    options?: ReadOptions,
  ): Promise<V2VerificationRun[]>;
  /** One run by id; undefined when Trunk answers 404. */
  getVerificationRun(
    queue: V2QueueRef,
    id: string,
    options?: ReadOptions,
  ): Promise<V2VerificationRun | undefined>;
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
 * runsReadDue() says so, each run in progress the list no longer reaches then read by id too. A
 * failed read is logged and made again at the next poll; it never fails the poll. Rejects only
 * when the poll is being aborted.
 */
export async function readVerificationRuns(
  request: VerificationRunsReadRequest,
): Promise<VerificationRuns> {
  const { current, queue } = request;
  // A queue whose batching setting is unknown (another type) is read as one that does not batch.
  const batching = current.settings.batch === true;
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
      return unfollowedLogged(
        request,
        verificationRunReadAbandoned(runs, readAt, request.staleAfterSeconds, from),
      );
    }
    request.logger.warn(
      { repo: queue.repo, branch: queue.branch },
      `verification runs read failed, tried again at the next poll: ${error instanceof Error ? error.message : String(error)}`,
    );
    return verificationRunReadFailed(runs, readAt, request.staleAfterSeconds);
  }
  const followed = await readFollowedRuns(request, runs);
  const counted = countVerificationRuns(runs, rows, readAt, readAt + CLOCK_SLACK_SECONDS, followed);
  if (counted.futureRuns > 0) {
    request.reader.reportAnomaly(
      V2_ENDPOINTS.listVerificationRuns,
      'future_timestamp',
      counted.futureRuns,
      { repo: request.queue.repo, branch: request.queue.branch },
    );
  }
  return unfollowedLogged(request, counted);
}

/**
 * Each run in progress the list no longer reaches (runsFollowedById), read by id: its row, or
 * `gone` on a 404. A failed read is logged and leaves the run out (kept as it was, read again at
 * the next read); it fails neither the read nor the poll. Rejects only when the poll is aborted.
 */
async function readFollowedRuns(
  request: VerificationRunsReadRequest,
  runs: VerificationRuns,
): Promise<Map<string, FollowedRunRead>> {
  const { queue } = request;
  const answers = new Map<string, FollowedRunRead>();
  for (const id of runsFollowedById(runs.reads)) {
    try {
      const row = await request.reader.getVerificationRun(queue, id, request.options);
      answers.set(id, row ?? 'gone');
      if (row === undefined) {
        request.logger.info(
          { repo: queue.repo, branch: queue.branch },
          `verification run ${id} in progress answers 404: no longer followed`,
        );
      }
    } catch (error) {
      if (request.options.signal?.aborted === true) throw error;
      request.logger.warn(
        { repo: queue.repo, branch: queue.branch },
        `verification run ${id} in progress could not be read, tried again at the next read: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  return answers;
}

/** The runs after a read, with a warn line for the runs in progress past MAX_FOLLOWED_RUNS. */
function unfollowedLogged(
  request: VerificationRunsReadRequest,
  { runs, unfollowed }: RunsAfterRead,
): VerificationRuns {
  if (unfollowed.length > 0) {
    request.logger.warn(
      { repo: request.queue.repo, branch: request.queue.branch },
      `${String(unfollowed.length)} verification runs in progress that the list no longer reaches, past the ${String(MAX_FOLLOWED_RUNS)} newest followed by id, are no longer in the gauge nor counted (oldest first: ${unfollowed.slice(0, 5).join(', ')}${unfollowed.length > 5 ? ', …' : ''})`,
    );
  }
  return runs;
}
