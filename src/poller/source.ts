// A source: where one target's data comes from (one API's merge queue, one API's quarantine list
// and the flaky and broken tests beside it), as the poll that makes its reads. The poll jobs pick
// each target's source once (poller/jobs/sources.ts), and the budget sums the reads it declares.
import type { ExporterConfig, RepositoryTarget } from '../config/types.js';
import type { Logger } from '../log/logger.js';
import type { SnapshotStore } from '../snapshot/store.js';
import type { TestCollections } from '../snapshot/testCostTypes.js';
import type { QuarantinedTests, Target, UnhealthyTests } from '../snapshot/types.js';
import type { PollResult } from './pollRun.js';
import { PollReads, type ReadAnswer } from './pollReads.js';
import type { ReadDeclaration } from './readDeclaration.js';
import type { ReadOptions } from './readOptions.js';

/** One poll of a target: its reads, then what their answers make of the target's status. */
export type Poll = (options: ReadOptions, lookupsSent?: () => void) => Promise<PollResult>;

/** A target as its source polls it. */
export interface PolledTarget {
  readonly target: Target;
  /** The configured repository it belongs to. */
  readonly repository: RepositoryTarget;
  readonly intervalSeconds: number;
  readonly config: ExporterConfig;
  /** Where its previous status is read from (its poll is recorded by runPoll). */
  readonly store: SnapshotStore;
  readonly logger: Logger;
  /** The exporter's clock, unix seconds. */
  readonly now: () => number;
}

/** One part of a flaky-tests target as one API reads it. */
export interface TestPart<T> {
  /** The read whose part it is and whose failure it takes. */
  readonly read: ReadDeclaration;
  readonly answer: (options: ReadOptions) => Promise<ReadAnswer<T>>;
}

/**
 * A flaky-tests target's source from its parts, each read by its own API: its quarantined tests,
 * and (API v2 only) its flaky and broken ones and the organization's test collections. Each part
 * fails alone; a poll fails only when no part of its tests could be read.
 */
export function flakyTestsSource(
  polled: PolledTarget,
  quarantine: TestPart<QuarantinedTests>,
  unhealthy: TestPart<UnhealthyTests> | undefined,
  collections?: TestPart<TestCollections>,
): Poll {
  const { target, store, now } = polled;
  return async (options) => {
    const reads = new PollReads(store.latest(target), now, options.signal);
    const [quarantined, unhealthyTests, testCollections] = await Promise.all([
      reads.run(quarantine.read, () => quarantine.answer(options)),
      unhealthy && reads.run(unhealthy.read, () => unhealthy.answer(options)),
      collections && reads.run(collections.read, () => collections.answer(options)),
    ]);
    const unread = reads.unread();
    if (quarantined === undefined && unhealthyTests === undefined) throw unread?.error;
    return {
      snapshot: {
        kind: 'flaky_tests',
        repo: target.repo,
        takenAt: now(),
        quarantine: quarantined,
        ...(unhealthy === undefined ? {} : { unhealthy: unhealthyTests }),
        ...(collections === undefined ? {} : { collections: testCollections }),
      },
      ...reads.recorded(),
    };
  };
}
