import type { FlakyTestsSnapshot, MergeQueueSnapshot } from '../snapshot/types.js';
import type { StatusSource } from './snapshotView.js';

// Data series come only from snapshots the store still considers fresh: a target that went stale or
// vanished from the configuration must lose its series, not keep its last values forever.

/** Fresh merge-queue snapshots, in configuration order. */
export function currentMergeQueueSnapshots(source: StatusSource): MergeQueueSnapshot[] {
  const result: MergeQueueSnapshot[] = [];
  for (const status of source.statuses()) {
    if (status.snapshot?.kind === 'merge_queue') result.push(status.snapshot);
  }
  return result;
}

/** Fresh quarantine snapshots, in configuration order. */
export function currentFlakyTestsSnapshots(source: StatusSource): FlakyTestsSnapshot[] {
  const result: FlakyTestsSnapshot[] = [];
  for (const status of source.statuses()) {
    if (status.snapshot?.kind === 'flaky_tests') result.push(status.snapshot);
  }
  return result;
}
