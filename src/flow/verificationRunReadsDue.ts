// When a merge queue's verification runs are read again: what the live list shows of testing since
// the previous poll, and what the last read left in progress.
import type { MergeQueueSnapshot } from '../snapshot/types.js';
import type { VerificationRuns } from '../snapshot/verificationRunTypes.js';
import { testingBeganBetween, testingMayHaveEndedBetween } from './testingSeen.js';

/**
 * Whether this poll reads the queue's runs: the previous read failed; or the live list shows a PR
 * begin testing (a run was created for it) or end a stretch of testing (its run concluded, or left
 * it: testingSeen.ts); or a run the last read saw in progress has no PR in `testing` (it lists
 * none, or Trunk concluded its entries before it), so it concludes at a poll that sees no change;
 * while one of its PRs tests on, its leaving `testing` shows the run's end.
 * A PR that left the queue from another state than `testing` concluded no run: its run did when it
 * left `testing`, at a poll that saw that.
 */
export function runsReadDue(
  runs: VerificationRuns,
  previous: MergeQueueSnapshot | undefined,
  current: MergeQueueSnapshot,
): boolean {
  if (runs.reads.failed) return true;
  if (
    previous !== undefined &&
    (testingBeganBetween(previous, current) || testingMayHaveEndedBetween(previous, current))
  ) {
    return true;
  }
  // No stretch began or ended since the last read: a PR testing now is in the stretch it was in
  // then, and its leaving it will show the run's end; a run with none (`testedPullRequests` may be
  // empty) has no such witness.
  const testingNow = testingSince(current);
  return [...runs.reads.inProgress.values()].some(
    ({ pullRequests }) => !pullRequests.some((number) => testingNow.has(number)),
  );
}

/** The PRs a snapshot lists in `testing`, with when they entered it. */
export function testingSince(snapshot: MergeQueueSnapshot): Map<number, number | undefined> {
  return new Map(
    snapshot.pullRequests
      .filter((pr) => pr.state === 'testing')
      .map((pr) => [pr.number, pr.stateChangedAt]),
  );
}
