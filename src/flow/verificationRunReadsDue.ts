// When a merge queue's verification runs are read again: what the live list shows of testing since
// the previous poll, and what the last read left in progress.
import type { MergeQueueSnapshot } from '../snapshot/types.js';
import type { RunInProgress, VerificationRuns } from '../snapshot/verificationRunTypes.js';
import { testingBeganBetween, testingMayHaveEndedBetween } from './testingSeen.js';

/**
 * Whether this poll reads the queue's runs: the previous read failed; or the live list shows a PR
 * begin testing (a run was created for it) or end a stretch of testing (its run concluded, or left
 * it: testingSeen.ts); or a run the last read saw in progress has no PR in `testing` that vouches
 * for it (it lists none, Trunk concluded its entries before it, or they test on a newer run since
 * a restart), so it concludes at a poll that sees no change; while a PR in `testing` vouches for
 * it, that PR's leaving `testing` shows the run's end.
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
  // then, on the newest run in progress that tests it, and its leaving it will show that run's end.
  const vouched = runsVouchedFor(runs.reads.inProgress.values(), testingSince(current));
  return runs.reads.inProgress.size > vouched.size;
}

/**
 * The runs in progress a PR in `testing` vouches for: of the runs that test it, the newest (one
 * "in flight for this entry"; an older one it was tested on before a restart has no witness). A run
 * whose `testedPullRequests` is empty (or lists none with a usable number) has none either.
 */
function runsVouchedFor(
  inProgress: Iterable<RunInProgress>,
  testingNow: ReadonlyMap<number, number | undefined>,
): Set<RunInProgress> {
  const newestOf = new Map<number, RunInProgress>();
  for (const run of inProgress) {
    for (const number of run.pullRequests) {
      const newest = newestOf.get(number);
      if (testingNow.has(number) && (newest === undefined || run.createdAt > newest.createdAt)) {
        newestOf.set(number, run);
      }
    }
  }
  return new Set(newestOf.values());
}

/** The PRs a snapshot lists in `testing`, with when they entered it. */
export function testingSince(snapshot: MergeQueueSnapshot): Map<number, number | undefined> {
  return new Map(
    snapshot.pullRequests
      .filter((pr) => pr.state === 'testing')
      .map((pr) => [pr.number, pr.stateChangedAt]),
  );
}
