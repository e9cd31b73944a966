// When a merge queue's verification runs are read again: what the live list shows changed since
// the previous poll, and what the last read left in progress.
import type { MergeQueueSnapshot } from '../snapshot/types.js';
import type { VerificationRuns } from '../snapshot/verificationRunTypes.js';

/**
 * Whether this poll reads the queue's runs: the previous read failed; or the live list shows the
 * testing set changed (a PR entered or left `testing`, or entered it again) or a PR left the queue
 * (it may have been tested and concluded between the two polls); or a run the last read saw in
 * progress tests a PR that is no longer testing (Trunk concluded the entry before the run).
 */
export function runsReadDue(
  runs: VerificationRuns,
  previous: MergeQueueSnapshot | undefined,
  current: MergeQueueSnapshot,
): boolean {
  if (runs.reads.failed) return true;
  const testingNow = testingSince(current);
  const testingBefore = previous === undefined ? testingNow : testingSince(previous);
  if (testingNow.size !== testingBefore.size) return true;
  for (const [number, since] of testingNow) {
    if (!testingBefore.has(number) || testingBefore.get(number) !== since) return true;
  }
  const listed = new Set(current.pullRequests.map((pr) => pr.number));
  if (previous?.pullRequests.some((pr) => !listed.has(pr.number)) === true) return true;
  for (const run of runs.reads.inProgress.values()) {
    if (run.pullRequests.some((number) => !testingNow.has(number))) return true;
  }
  return false;
}

/** The PRs a snapshot lists in `testing`, with when they entered it. */
export function testingSince(snapshot: MergeQueueSnapshot): Map<number, number | undefined> {
  return new Map(
    snapshot.pullRequests
      .filter((pr) => pr.state === 'testing')
      .map((pr) => [pr.number, pr.stateChangedAt]),
  );
}
