// A merge queue through API v2 (the API key): its live pull requests first, then side by side the
// reads that need them (the concluded entries, the last merge when its ledger starts, the testing
// results, the verification runs), then its ledger takes every answer in one call (flow/queuePoll.ts).
import {
  exitReadPlan,
  queueFlowOptions,
  queuePollUpdate,
  type ExitAnswers,
} from '../../flow/queuePoll.js';
import { NO_ENTRIES } from '../../snapshot/noEntries.js';
import { EMPTY_WEBHOOK_COUNTS } from '../../snapshot/webhookCounts.js';
import type { MergeQueueSnapshot } from '../../snapshot/types.js';
import { PollReads } from '../pollReads.js';
import { earliest } from '../testCounts.js';
import type { Poll, PolledTarget } from '../source.js';
import { startConcludedReads } from './v2ConcludedReads.js';
import { readExitsV2, type V2ExitRead } from './v2ExitLookup.js';
import { readLastMergeV2 } from './v2LastMerge.js';
import { pollMergeQueueV2 } from './v2MergeQueuePoll.js';
import type { V2Readers } from './v2Readers.js';
import {
  CONCLUDED_ENTRIES,
  LAST_MERGE,
  LIVE_PULL_REQUESTS,
  QUEUE_ENTRY_HISTORY,
  QUEUE_LIST,
  RESUBMITTED_ENTRIES,
  TESTING_RESULTS,
  VERIFICATION_RUNS,
} from './v2Reads.js';
import { readEntryHistory } from './v2QueueEntryHistoryRead.js';
import { readTestingResults } from './v2TestingResultsRead.js';
import { readVerificationRuns } from './v2VerificationRunsRead.js';

/** The reads of a merge queue's API v2 source. */
export const V2_QUEUE_READS = [
  QUEUE_LIST,
  LIVE_PULL_REQUESTS,
  CONCLUDED_ENTRIES,
  RESUBMITTED_ENTRIES,
  LAST_MERGE,
  TESTING_RESULTS,
  VERIFICATION_RUNS,
  QUEUE_ENTRY_HISTORY,
] as const;

/** A merge queue's source through API v2. */
export function v2QueueSource(polled: PolledTarget, readers: V2Readers): Poll {
  const { target, repository, intervalSeconds, store, logger, now } = polled;
  const { reader } = readers;
  const flowOptions = queueFlowOptions(polled.config, intervalSeconds);
  return async (options) => {
    const previous = store.latest(target);
    const reads = new PollReads(previous, now, options.signal);
    const { snapshot: current, queue } = await reads.run(LIVE_PULL_REQUESTS, async () => ({
      value: await pollMergeQueueV2({
        reader,
        directory: readers.directory,
        repoName: repository.name,
        branch: target.branch,
        options,
        now,
        pullRequestIds: polled.config.reads.queueEntryHistory,
      }),
    }));
    // As they are now: a webhook event may have moved the ledger during the read.
    const ledger = store.queueFlow(target);
    const attempts = store.testingAttempts(target);
    const before = previous?.snapshot?.kind === 'merge_queue' ? previous.snapshot : undefined;
    // Asks for the PRs this poll saw change; takes what the reads before it answered.
    const withHistory = await reads.run(QUEUE_ENTRY_HISTORY, () =>
      Promise.resolve({
        value: readEntryHistory({
          reads: polled.config.reads.queueEntryHistory ? readers.history : undefined,
          previousFlow: ledger,
          previous: before,
          current,
          options,
        }),
      }),
    );
    const [exits, lastMergeAt, testingAttempts, verificationRuns] = await Promise.all([
      // Each read of concluded entries goes on from the last; the first only starts them.
      reads.run(CONCLUDED_ENTRIES, async () => {
        if (ledger === undefined) {
          return { value: { lookups: new Map(), reads: startConcludedReads(current.takenAt) } };
        }
        const plan = exitReadPlan(ledger, current);
        const since = exitReadSince(plan, before);
        const value = await readExitsV2({
          reader,
          queue,
          intervalSeconds,
          previous: ledger,
          current,
          prNumbers: plan.prNumbers,
          since,
          options,
          logger,
          pullRequestIds: polled.config.reads.queueEntryHistory,
        });
        return { value };
      }),
      ledger === undefined
        ? reads.run(LAST_MERGE, async () => ({
            value: await readLastMergeV2({ reader, queue, now: now(), options, logger }),
          }))
        : undefined,
      reads.run(TESTING_RESULTS, () =>
        readTestingResults({
          reader,
          queue,
          previous: attempts,
          previousSnapshot: before,
          current,
          options,
          logger,
        }),
      ),
      polled.config.reads.verificationRuns
        ? reads.run(VERIFICATION_RUNS, async () => ({
            value: await readVerificationRuns({
              reader,
              queue,
              previousSnapshot: before,
              current,
              staleAfterSeconds: polled.config.polling.staleAfterSeconds,
              options,
              logger,
            }),
          }))
        : undefined,
    ]);
    const exitAnswers: ExitAnswers & Pick<V2ExitRead, 'unlisted'> = exits;
    return {
      snapshot: verificationRuns === undefined ? current : { ...current, verificationRuns },
      queueFlow: (latest) =>
        withHistory(
          queuePollUpdate(
            { current, starts: ledger === undefined, exits, lastMergeAt },
            {
              ...flowOptions,
              holdForHistory: polled.config.reads.queueEntryHistory,
            },
          )(latest),
          latest,
          // As they are now, read with `latest`: the events' reasons and the history's share one cap.
          (store.webhookCounts(target) ?? EMPTY_WEBHOOK_COUNTS).failureReasons,
          exitAnswers.resubmissions ?? NO_ENTRIES,
          exitAnswers.unlisted,
        ),
      testingAttempts: testingAttempts ?? attempts,
      ...reads.recorded(),
    };
  };
}

/**
 * Where the exit read of `plan` starts: what the last poll (`before`) saw, on Trunk's clock, as
 * each departed PR concluded after its last change. earliest(), not a spread: the PRs gone since
 * the last poll may be more than a call takes arguments.
 */
export function exitReadSince(
  plan: { readonly since: number; readonly prNumbers: readonly number[] },
  before:
    | {
        readonly pullRequests: readonly Pick<
          MergeQueueSnapshot['pullRequests'][number],
          'number' | 'stateChangedAt'
        >[];
      }
    | undefined,
): number {
  const lastChanges = new Map(before?.pullRequests.map((pr) => [pr.number, pr.stateChangedAt]));
  return (
    earliest(plan.prNumbers.map((n) => Math.min(lastChanges.get(n) ?? plan.since, plan.since))) ??
    plan.since
  );
}
