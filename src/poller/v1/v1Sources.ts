// The sources API v1 reads a target from (the token): a merge queue, and a repository's quarantine
// list as one part of its flaky-tests target.
import { withoutHistoryReads } from '../../flow/entryHistoryWindows.js';
import { exitReadPlan, queueFlowOptions, queuePollUpdate } from '../../flow/queuePoll.js';
import type { QuarantinedTests } from '../../snapshot/types.js';
import { PollReads } from '../pollReads.js';
import type { Poll, PolledTarget, TestPart } from '../source.js';
import { lookUpExits } from './exitLookup.js';
import { readQuarantinedTests } from './flakyTestsPoll.js';
import type { PullRequestLookupMemory } from './lookupPlan.js';
import { pollMergeQueue } from './mergeQueuePoll.js';
import type { TrunkReader } from './trunkReader.js';
import { V1_EXIT_LOOKUPS, V1_QUARANTINE, V1_QUEUE } from './v1Reads.js';

/** What a merge queue's API v1 source reads with. */
export interface V1QueueReaders {
  readonly reader: TrunkReader;
  /** The queue's remembered lookups (lookupPlan.ts). */
  readonly lookupMemory: PullRequestLookupMemory;
  /** Lookups in progress at once (lookupsAtATime()). */
  readonly lookupsAtATime: number;
}

/** The reads of a merge queue's API v1 source. */
export const V1_QUEUE_READS = [V1_QUEUE, V1_EXIT_LOOKUPS] as const;

/**
 * A merge queue through API v1: its queue and readiness, then a lookup of each PR that left since
 * the previous poll, then its ledger takes both.
 */
export function v1QueueSource(polled: PolledTarget, readers: V1QueueReaders): Poll {
  const { target, repository, config, store, logger, now } = polled;
  const { reader } = readers;
  const details = config.polling.pullRequestDetails;
  const flowOptions = queueFlowOptions(config, polled.intervalSeconds);
  return async (options, lookupsSent) => {
    const previous = store.latest(target);
    const reads = new PollReads(previous, now, options.signal);
    const current = await reads.run(V1_QUEUE, async () => ({
      value: await pollMergeQueue({
        reader,
        repo: repository.repo,
        repoName: repository.name,
        branch: target.branch,
        pullRequestDetails: details,
        lookupMemory: readers.lookupMemory,
        lookupsAtATime: readers.lookupsAtATime,
        ...(lookupsSent === undefined ? {} : { lookupsSent }),
        options,
        now,
      }),
    }));
    // As it is now: a webhook event may have moved it during the read.
    const ledger = store.queueFlow(target);
    const exits = await reads.run(V1_EXIT_LOOKUPS, async () => ({
      value: {
        lookups: await lookUpExits({
          reader,
          repo: repository.repo,
          repoName: repository.name,
          branch: target.branch,
          prNumbers: ledger === undefined ? [] : exitReadPlan(ledger, current).prNumbers,
          pullRequestDetails: details,
          options,
          logger,
          lookupsAtATime: readers.lookupsAtATime,
        }),
      },
    }));
    return {
      snapshot: current,
      // API v1 reads no queue-entry history: what a reload that removed the API key left of one
      // is kept as with reads.queueEntryHistory off, its failures by reason among it.
      queueFlow: (latest) =>
        withoutHistoryReads(
          queuePollUpdate({ current, starts: ledger === undefined, exits }, flowOptions)(latest),
          latest,
        ),
      ...reads.recorded(),
    };
  };
}

/** A repository's quarantined tests from its API v1 quarantine list. */
export function v1QuarantinePart(
  polled: PolledTarget,
  reader: TrunkReader,
): TestPart<QuarantinedTests> {
  const { repository, config, logger, now } = polled;
  return {
    read: V1_QUARANTINE,
    answer: async (options) => ({
      value: await readQuarantinedTests({
        reader,
        repo: repository.repo,
        repoName: repository.name,
        // configFileSchema requires orgUrlSlug whenever a quarantine list is read through v1.
        orgUrlSlug: config.trunk.orgUrlSlug ?? '',
        details: config.polling.flakyTestDetails,
        options,
        now,
        logger,
      }),
    }),
  };
}
