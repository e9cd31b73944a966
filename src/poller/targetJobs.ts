import { readsQuarantineThroughV2 } from '../config/credentials.js';
import { configuredTargets } from '../config/targets.js';
import type { ExporterConfig, RepositoryTarget } from '../config/types.js';
import type { Logger } from '../log/logger.js';
import type { SnapshotStore } from '../snapshot/store.js';
import { targetKey, type MergeQueueSnapshot } from '../snapshot/types.js';
import { pollFlakyTests, readQuarantinedTests } from './flakyTestsPoll.js';
import { lookupsAtATime } from './lookupFanOut.js';
import { LookupMemories } from './lookupMemories.js';
import { PollAdmission, pollsAtOnce } from './pollAdmission.js';
import { pollMergeQueue } from './mergeQueuePoll.js';
import { followQueueFlow, type QueueFlowPollRequest } from './queueFlowPoll.js';
import { runPoll, type PollResult } from './pollRun.js';
import type { PollObserver } from './pollObserver.js';
import type { PollJob } from './scheduler.js';
import type { ReadOptions, TrunkReader } from './trunkReader.js';
import { readExitsV2 } from './v2ExitLookup.js';
import { readLastMergeV2 } from './v2LastMerge.js';
import { pollMergeQueueV2, type V2PullRequestLister } from './v2MergeQueuePoll.js';
import type { V2QueueDirectory } from './v2QueueDirectory.js';
import { pollFlakyTestsV2 } from './v2FlakyTestsPoll.js';
import type { V2TestDirectory } from './v2TestDirectory.js';
import { readTestingResults, type V2TestingResultLister } from './v2TestingResultsRead.js';
import { readEntryHistory, type QueueEntryHistoryReads } from './v2QueueEntryHistoryRead.js';

interface TargetJobsContext {
  readonly config: ExporterConfig;
  readonly reader: TrunkReader;
  readonly store: SnapshotStore;
  readonly logger: Logger;
  readonly now?: () => number;
  /** Lookup memory kept from the jobs this set replaces; without it, every queue starts empty. */
  readonly lookupMemories?: LookupMemories;
  /** Told about each poll that outruns its interval (the overrun counter). */
  readonly pollObserver?: PollObserver;
  /** API v2 reads: with an API key configured, merge queues are polled through them. */
  readonly v2?: V2Readers;
}

/** What a merge-queue poll through API v2 reads with. */
export interface V2Readers {
  readonly reader: V2PullRequestLister & V2TestingResultLister;
  readonly directory: V2QueueDirectory;
  readonly tests: V2TestDirectory;
  /** The organization's queue-entry history reads. */
  readonly history?: QueueEntryHistoryReads;
}

/** One poll job per configured target, each recording its outcome in the store. */
export function buildPollJobs(context: TargetJobsContext): PollJob[] {
  const { config } = context;
  const now = context.now ?? (() => Date.now() / 1000);
  const repositories = new Map(config.targets.map((repository) => [repository.name, repository]));
  const targets = configuredTargets(config);
  const lookupMemories = context.lookupMemories ?? new LookupMemories();
  lookupMemories.keepOnly(targets);
  const atATime = lookupsAtATime(config.trunk.maxConcurrentRequests);
  const admission = new PollAdmission(pollsAtOnce(config.trunk.maxConcurrentRequests));
  return targets.map((target) => {
    const repository = repositories.get(target.repo) as RepositoryTarget;
    const intervalSeconds =
      target.kind === 'merge_queue'
        ? config.polling.mergeQueueIntervalSeconds
        : config.polling.flakyTestsIntervalSeconds;
    const withQueueFlow = async (
      snapshot: MergeQueueSnapshot,
      options: ReadOptions,
      /** How exits are read through API v2; v1 lookups without it. */
      readExits?: QueueFlowPollRequest['readExits'],
      readLastMerge?: QueueFlowPollRequest['readLastMerge'],
    ): Promise<PollResult> => ({
      snapshot,
      queueFlow: await followQueueFlow({
        reader: context.reader,
        repo: repository.repo,
        // Through v2 the exit read costs one call per queue, whatever pullRequestDetails says.
        pullRequestDetails: readExits !== undefined || config.polling.pullRequestDetails,
        ...(readExits === undefined ? {} : { readExits }),
        ...(readLastMerge === undefined ? {} : { readLastMerge }),
        options,
        logger: context.logger,
        lookupsAtATime: atATime,
        previous: context.store.queueFlow(target),
        current: snapshot,
        flowOptions: {
          maxGapSeconds: Math.max(config.polling.staleAfterSeconds, 2 * intervalSeconds),
          lookupRetrySeconds: config.polling.staleAfterSeconds,
          intervalSeconds,
          webhooks: config.webhooks.enabled,
        },
      }),
    });
    const lookupMemory = lookupMemories.of(target, config.polling.pullRequestRecheckSeconds);
    const { v2 } = context;
    const viaV2 = config.trunk.apiKey !== undefined && v2 !== undefined;
    const quarantineViaV2 =
      v2 !== undefined &&
      readsQuarantineThroughV2(config, repository.discovered?.flakyTests === true);
    const pollV2 = async (v2Readers: V2Readers, options: ReadOptions): Promise<PollResult> => {
      // What the last poll saw, on Trunk's clock: each departed PR concluded after its last change.
      const previous = context.store.lastSnapshot(target);
      const lastChanges = new Map(
        previous?.kind === 'merge_queue'
          ? previous.pullRequests.map((pr) => [pr.number, pr.stateChangedAt])
          : [],
      );
      const { snapshot, queue } = await pollMergeQueueV2({
        reader: v2Readers.reader,
        directory: v2Readers.directory,
        repoName: repository.name,
        branch: target.branch,
        options,
        now,
      });
      const withHistory = readEntryHistory({
        reads: config.reads?.queueEntryHistory === false ? undefined : v2Readers.history,
        previousFlow: context.store.queueFlow(target),
        previous: previous?.kind === 'merge_queue' ? previous : undefined,
        current: snapshot,
        options,
      });
      const [polled, testingAttempts] = await Promise.all([
        withQueueFlow(
          snapshot,
          options,
          (previousFlow, prNumbers, since) =>
            readExitsV2({
              reader: v2Readers.reader,
              queue,
              intervalSeconds,
              previous: previousFlow,
              current: snapshot,
              prNumbers,
              since: Math.min(since, ...prNumbers.map((n) => lastChanges.get(n) ?? since)),
              options,
              logger: context.logger,
            }),
          () =>
            readLastMergeV2({
              reader: v2Readers.reader,
              queue,
              now: now(),
              options,
              logger: context.logger,
            }),
        ),
        readTestingResults({
          reader: v2Readers.reader,
          queue,
          previous: context.store.testingAttempts(target),
          previousSnapshot: previous?.kind === 'merge_queue' ? previous : undefined,
          current: snapshot,
          options,
          logger: context.logger,
        }),
      ]);
      const { queueFlow } = polled;
      return {
        ...polled,
        testingAttempts,
        ...(queueFlow && { queueFlow: (latest) => withHistory(queueFlow(latest), latest) }),
      };
    };
    const v1QuarantineRequest = (options: ReadOptions) => ({
      reader: context.reader,
      repo: repository.repo,
      repoName: repository.name,
      // configFileSchema requires orgUrlSlug whenever a target has flakyTests.
      orgUrlSlug: config.trunk.orgUrlSlug ?? '',
      details: config.polling.flakyTestDetails,
      options,
      now,
      logger: context.logger,
    });
    // With a key, the flaky and broken tests come from the organization's v2 list whichever API
    // reads the quarantine list (only v2 lists them).
    const pollFlakyTestsWithKey = (v2Readers: V2Readers, options: ReadOptions) =>
      pollFlakyTestsV2({
        directory: v2Readers.tests,
        repoName: repository.name,
        options,
        now,
        reportAnomaly: (endpoint, kind, count) => {
          v2Readers.reader.reportAnomaly(endpoint, kind, count);
        },
        ...(quarantineViaV2
          ? {}
          : { quarantineThroughV1: () => readQuarantinedTests(v1QuarantineRequest(options)) }),
      });
    const poll = (options: ReadOptions, lookupsSent?: () => void): Promise<PollResult> =>
      target.kind === 'merge_queue' && viaV2
        ? pollV2(v2, options)
        : target.kind === 'flaky_tests' && viaV2
          ? pollFlakyTestsWithKey(v2, options)
          : target.kind === 'merge_queue'
            ? pollMergeQueue({
                reader: context.reader,
                repo: repository.repo,
                repoName: repository.name,
                branch: target.branch,
                pullRequestDetails: config.polling.pullRequestDetails,
                lookupMemory,
                lookupsAtATime: atATime,
                ...(lookupsSent === undefined ? {} : { lookupsSent }),
                options,
                now,
              }).then((snapshot) => withQueueFlow(snapshot, options))
            : pollFlakyTests(v1QuarantineRequest(options)).then((snapshot) => ({ snapshot }));
    // A target whose latest poll failed (it may hang) neither waits for admission nor holds a place.
    let failedLast = false;
    return {
      key: targetKey(target),
      intervalSeconds,
      run: async (signal) => {
        const succeeded = await runPoll(
          { target, intervalSeconds, poll, signal },
          context,
          failedLast ? undefined : admission,
        );
        failedLast = !succeeded;
      },
    };
  });
}
