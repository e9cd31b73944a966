// What two successive polls of a merge queue's live list see of its testing: a stretch of testing
// that ended between them, or one that began. Trunk's QueueEntryState: `testing` is "A
// verification run is in flight for this entry", `testsPassed` "Verification succeeded; waiting to
// merge"; and an entry's stateChangedAt is "When the entry entered its current `state`", so an
// entry listed in the same state since the same instant at both polls made no transition between
// them. These are what the reads of testing results and verification runs are made on.
import type { MergeQueueSnapshot, PullRequestSnapshot } from '../snapshot/types.js';

/**
 * Whether a stretch of testing may have ended between the two polls: a PR the previous poll saw
 * testing is in another state or testing since a later instant (a restart); a PR is in
 * `tests_passed` that the previous poll did not see there since the same instant (its verification
 * succeeded after that poll, even one no poll saw begin); or a PR left the queue, from any state,
 * since nothing the list shows rules out a stretch of testing no poll saw between its last listing
 * and its exit.
 */
export function testingMayHaveEndedBetween(
  previous: MergeQueueSnapshot,
  current: MergeQueueSnapshot,
): boolean {
  const listed = byNumber(current);
  const endedOrLeft = (pr: PullRequestSnapshot) =>
    !listed.has(pr.number) || (pr.state === 'testing' && !sameStay(pr, listed));
  if (previous.pullRequests.some(endedOrLeft)) return true;
  const before = byNumber(previous);
  return current.pullRequests.some((pr) => pr.state === 'tests_passed' && !sameStay(pr, before));
}

/** Whether a PR is testing that the previous poll did not see testing since the same instant. */
export function testingBeganBetween(
  previous: MergeQueueSnapshot,
  current: MergeQueueSnapshot,
): boolean {
  const before = byNumber(previous);
  return current.pullRequests.some((pr) => pr.state === 'testing' && !sameStay(pr, before));
}

/** Whether `others` lists `pr` in the same state since the same instant. */
function sameStay(pr: PullRequestSnapshot, others: ReadonlyMap<number, PullRequestSnapshot>) {
  const other = others.get(pr.number);
  return other?.state === pr.state && other.stateChangedAt === pr.stateChangedAt;
}

function byNumber(snapshot: MergeQueueSnapshot): Map<number, PullRequestSnapshot> {
  return new Map(snapshot.pullRequests.map((pr) => [pr.number, pr]));
}
