// How the pull requests that left a merge queue left, from API v2: one paged read of the queue's
// concluded entries since the previous poll, instead of a lookup per departed PR.
import type { Logger } from '../log/logger.js';
import { EXIT_OUTCOMES, type ExitLookup, type ExitOutcome } from '../snapshot/queueFlowTypes.js';
import type { V2QueueRef } from '../trunk/v2Client.js';
import { V2_FINAL_ENTRY_STATES } from '../trunk/v2Schemas.js';
import { v1Value } from '../trunk/v2Vocabulary.js';
import { parseTimestampSeconds } from './timestamps.js';
import type { ReadOptions } from './trunkReader.js';
import type { V2PullRequestLister } from './v2MergeQueuePoll.js';

/**
 * How far before `since` the window of concluded entries starts: where `since` comes from the
 * exporter's clock, that clock and Trunk's may disagree by this much without an exit being missed.
 */
export const CONCLUDED_WINDOW_SLACK_SECONDS = 120;

interface V2ExitLookupRequest {
  readonly reader: V2PullRequestLister;
  readonly queue: V2QueueRef;
  readonly prNumbers: readonly number[];
  /** Unix seconds every departed PR concluded after (its last state change seen by a poll). */
  readonly since: number;
  readonly options: ReadOptions;
  readonly logger: Logger;
}

const OUTCOMES: ReadonlySet<string> = new Set(EXIT_OUTCOMES);

/**
 * The final state of each departed PR from `state=merged,failed,cancelled&concludedAfter=…`. A PR
 * not in the window (it left without concluding, or the read failed) is `retry`: the ledger asks
 * again on the next poll and counts it `unknown` after MAX_EXIT_LOOKUP_ATTEMPTS. Rejects only when
 * the poll is being aborted.
 */
export async function lookUpExitsV2(
  request: V2ExitLookupRequest,
): Promise<Map<number, ExitLookup>> {
  const { queue, prNumbers } = request;
  if (prNumbers.length === 0) return new Map();
  const concludedAfter = new Date(
    (request.since - CONCLUDED_WINDOW_SLACK_SECONDS) * 1000,
  ).toISOString();
  let rows;
  try {
    rows = await request.reader.listQueuePullRequests(
      queue,
      { states: V2_FINAL_ENTRY_STATES, concludedAfter },
      request.options,
    );
  } catch (error) {
    if (request.options.signal?.aborted === true) throw error;
    request.logger.warn(
      { repo: queue.repo, branch: queue.branch, prs: prNumbers.length },
      `exit read failed, retried on the next poll: ${error instanceof Error ? error.message : String(error)}`,
    );
    return new Map(prNumbers.map((number) => [number, 'retry']));
  }
  const concluded = new Map<number, ExitLookup>();
  for (const row of rows) {
    const outcome = v1Value(row.queueEntry.state);
    if (!OUTCOMES.has(outcome) || concluded.has(row.number)) continue;
    concluded.set(row.number, {
      outcome: outcome as ExitOutcome,
      leftAt: parseTimestampSeconds(row.queueEntry.stateChangedAt),
    });
  }
  return new Map(prNumbers.map((number) => [number, concluded.get(number) ?? 'retry']));
}
