// One merge queue's stretches of testing, as v2's testing results list them: every time a pull
// request leaves `testing`, one attempt with how it ended. Recorded by the queue model as the world
// moves, oldest first, and bounded like Trunk's own window (45 days) and in number.
import type { PullRequestState, SimulatedPullRequest } from './pullRequest.js';

/** How a stretch of testing ended (v2's `TestingOutcome`). */
export type TestingOutcome = 'passed' | 'failed' | 'interrupted' | 'cancelled';

/** How a stretch of testing ended, when the state it left for does not say it alone. */
export interface TestingEnding {
  readonly outcome: TestingOutcome;
  /** Its failure split the batch. */
  readonly startedBisection: boolean;
}

/** The outcome of a stretch of testing that ended by moving to `to`. */
export function outcomeOf(to: PullRequestState): TestingOutcome {
  switch (to) {
    case 'tests_passed':
    case 'merged':
      return 'passed';
    case 'pending_failure':
    case 'failed':
      return 'failed';
    case 'cancelled':
      return 'cancelled';
    // A restart: testing was cut short and will be tried again.
    case 'not_ready':
    case 'pending':
    case 'testing':
      return 'interrupted';
  }
}

/** One pull request's stretch of testing. */
export interface TestingAttempt {
  /** Increases with every attempt of the queue: with `endedAt`, the attempt's place in the list. */
  readonly sequence: number;
  readonly pr: SimulatedPullRequest;
  /** Which trip through the queue (submission) of the pull request it belongs to, from 0. */
  readonly trip: number;
  /** Unix seconds. */
  readonly startedAt: number;
  /** Unix seconds. */
  readonly endedAt: number;
  readonly outcome: TestingOutcome;
  /** The run it was part of: pull requests started together in a batching queue share one. */
  readonly batch: number;
  readonly isBisection: boolean;
  /** Its failure split the batch: the other pull requests of the batch were bisected. */
  readonly startedBisection: boolean;
}

/** How far back the attempts are kept: the longest window v2's testing results answer. */
export const TESTING_HISTORY_SECONDS = 45 * 86_400;
/** At most this many attempts per queue, so a busy or long-running world stays small. */
export const TESTING_HISTORY_ATTEMPTS = 1000;

export interface TestingHistory {
  /** Ended attempts, oldest first (by end, then sequence). */
  readonly attempts: readonly TestingAttempt[];
  /** Records the end of `pr`'s current stretch of testing, which began at `startedAt`. */
  record(pr: SimulatedPullRequest, ending: TestingEnding, startedAt: number, endedAt: number): void;
}

/** An empty history; `trip` tells which submission of a pull request is in progress. */
export function createTestingHistory(trip: (pr: SimulatedPullRequest) => number): TestingHistory {
  const attempts: TestingAttempt[] = [];
  let sequence = 0;
  return {
    attempts,
    record(pr, ending, startedAt, endedAt) {
      sequence += 1;
      attempts.push({
        sequence,
        pr,
        trip: trip(pr),
        startedAt,
        endedAt,
        outcome: ending.outcome,
        batch: pr.testingRun.batch,
        isBisection: pr.testingRun.isBisection,
        startedBisection: ending.startedBisection,
      });
      while (
        attempts.length > TESTING_HISTORY_ATTEMPTS ||
        (attempts[0] !== undefined && attempts[0].endedAt < endedAt - TESTING_HISTORY_SECONDS)
      ) {
        attempts.shift();
      }
    },
  };
}
