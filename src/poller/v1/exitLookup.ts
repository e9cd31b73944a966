// One getSubmittedPullRequest per pull request that left the queue, to learn how it left.
import { FINAL_PR_STATES } from '../../snapshot/exitOutcome.js';
import type { ExitLookup, ExitOutcome } from '../../snapshot/queueFlowTypes.js';
import type { Logger } from '../../log/logger.js';
import type { RepoRef, SubmittedPullRequest } from '../../trunk/schemas.js';
import { parseTimestampSeconds } from '../timestamps.js';
import { LOOKUPS_AT_A_TIME, mapAtMost } from '../lookupFanOut.js';
import type { ReadOptions } from '../readOptions.js';
import type { TrunkReader } from './trunkReader.js';

interface ExitLookupRequest {
  readonly reader: TrunkReader;
  readonly repo: RepoRef;
  readonly repoName: string;
  readonly branch: string;
  readonly prNumbers: readonly number[];
  /** Off (polling.pullRequestDetails: false): no calls are made and every exit is `unknown`. */
  readonly pullRequestDetails: boolean;
  readonly options: ReadOptions;
  readonly logger: Logger;
  /** Lookups in progress at once (lookupsAtATime()); LOOKUPS_AT_A_TIME when absent. */
  readonly lookupsAtATime?: number;
}

/**
 * Looks up each departed PR once. A 404 or an answer without a final state is `unknown`; a failed
 * call is `retry` (the ledger tries again on the next poll), so one bad lookup never fails the
 * poll that carries the queue's gauges. Rejects only when the poll is being aborted.
 */
export async function lookUpExits(request: ExitLookupRequest): Promise<Map<number, ExitLookup>> {
  const { reader, repo, branch, options } = request;
  if (!request.pullRequestDetails) {
    return new Map(request.prNumbers.map((number) => [number, unknownExit()]));
  }
  const answers = await mapAtMost(
    request.prNumbers,
    request.lookupsAtATime ?? LOOKUPS_AT_A_TIME,
    async (number): Promise<ExitLookup> => {
      try {
        return exitOf(await reader.getSubmittedPullRequest(repo, branch, number, options));
      } catch (error) {
        if (options.signal?.aborted === true) throw error;
        request.logger.warn(
          { repo: request.repoName, branch, pr: number },
          `exit lookup failed, retried on the next poll: ${error instanceof Error ? error.message : String(error)}`,
        );
        return 'retry';
      }
    },
  );
  return new Map(request.prNumbers.map((number, index) => [number, answers[index] ?? 'retry']));
}

function exitOf(answer: SubmittedPullRequest | undefined): ExitLookup {
  const state = answer?.state;
  if (answer === undefined || state === undefined || !FINAL_PR_STATES.has(state))
    return unknownExit();
  return {
    outcome: state as ExitOutcome,
    leftAt: parseTimestampSeconds(answer.stateChangedAt),
  };
}

function unknownExit(): ExitLookup {
  return { outcome: 'unknown', leftAt: undefined };
}
