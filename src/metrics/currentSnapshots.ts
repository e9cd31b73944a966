import type { FlakyTestsSnapshot, MergeQueueSnapshot, TargetStatus } from '../snapshot/types.js';
import type { FamilySettings, Sample } from './family.js';

// Data series come only from snapshots the store still considers fresh: a target that went stale or
// vanished from the configuration must lose its series, not keep its last values forever.

/** The samples of a target's fresh merge-queue snapshot; none without one. */
export function ofMergeQueue(
  samples: (snapshot: MergeQueueSnapshot, settings: FamilySettings) => Iterable<Sample>,
): (status: TargetStatus, settings: FamilySettings) => Iterable<Sample> {
  return (status, settings) =>
    status.snapshot?.kind === 'merge_queue' ? samples(status.snapshot, settings) : [];
}

/** The samples of a target's fresh quarantine snapshot; none without one. */
export function ofFlakyTests(
  samples: (snapshot: FlakyTestsSnapshot, settings: FamilySettings) => Iterable<Sample>,
): (status: TargetStatus, settings: FamilySettings) => Iterable<Sample> {
  return (status, settings) =>
    status.snapshot?.kind === 'flaky_tests' ? samples(status.snapshot, settings) : [];
}
