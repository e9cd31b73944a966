// The poll jobs: each target's poll from the source its credentials choose (sources.ts), run on
// its interval behind the admission of its kind (merge queues, quarantine lists), its outcome recorded by runPoll.
import { configuredTargets } from '../../config/targets.js';
import type { ExporterConfig, RepositoryTarget } from '../../config/types.js';
import type { Logger } from '../../log/logger.js';
import type { SnapshotStore } from '../../snapshot/store.js';
import { targetKey } from '../../snapshot/types.js';
import { LateLog } from '../lateLog.js';
import { lookupsAtATime } from '../lookupFanOut.js';
import { PollAdmission, pollsAtOnce } from '../pollAdmission.js';
import type { PollObserver } from '../pollObserver.js';
import { runPoll } from '../pollRun.js';
import type { PollJob } from '../scheduler.js';
import { LookupMemories } from '../v1/lookupMemories.js';
import type { TrunkReader } from '../v1/trunkReader.js';
import type { V2Readers } from '../v2/v2Readers.js';
import { pollOf } from './sources.js';

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
  /** Logs late polls; kept from the jobs this set replaces, so a reload does not reopen its window. */
  readonly lateLog?: LateLog;
  /** API v2's client and shared reads: needed when an API key is configured. */
  readonly v2?: V2Readers;
}

/** One poll job per configured target, each recording its outcome in the store. */
export function buildPollJobs(context: TargetJobsContext): PollJob[] {
  const { config, store, logger } = context;
  const now = context.now ?? (() => Date.now() / 1000);
  const targets = configuredTargets(config);
  const lookupMemories = context.lookupMemories ?? new LookupMemories();
  lookupMemories.keepOnly(targets);
  const { maxConcurrentRequests } = config.trunk;
  const readers = {
    v1: context.reader,
    v2: context.v2,
    lookupMemories,
    lookupsAtATime: lookupsAtATime(maxConcurrentRequests),
  };
  // One admission per kind: a thousand quarantine lists waiting on one read of the organization's
  // test lists (its walk and repository lookups) would otherwise hold every place a queue needs.
  const admissions = {
    merge_queue: new PollAdmission(pollsAtOnce(maxConcurrentRequests)),
    flaky_tests: new PollAdmission(pollsAtOnce(maxConcurrentRequests)),
  };
  const runContext = { ...context, lateLog: context.lateLog ?? new LateLog(logger) };
  const repositories = new Map(config.targets.map((repository) => [repository.name, repository]));
  return targets.map((target) => {
    const intervalSeconds =
      target.kind === 'merge_queue'
        ? config.polling.mergeQueueIntervalSeconds
        : config.polling.flakyTestsIntervalSeconds;
    const repository = repositories.get(target.repo) as RepositoryTarget;
    const polled = { target, repository, intervalSeconds, config, store, logger, now };
    const poll = pollOf(polled, readers);
    // A target whose latest poll failed (it may hang) neither waits for admission nor holds a place.
    let failedLast = false;
    return {
      key: targetKey(target),
      intervalSeconds,
      run: async (signal) => {
        const entered = failedLast ? undefined : admissions[target.kind];
        failedLast = !(await runPoll(
          { target, intervalSeconds, poll, signal },
          runContext,
          entered,
        ));
      },
    };
  });
}
