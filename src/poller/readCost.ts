// What the reads' costs are estimated from where the configuration says nothing: queue depths,
// list sizes, how often a poll needs the reads that not every poll makes. Each read's declaration
// names the assumptions its cost takes.
import { MAX_PAGE_SIZE } from '../trunk/schemas.js';

/** What the estimate assumes about the parts of the load the config does not say. */
export const BUDGET_ASSUMPTIONS = {
  /** PRs enqueued in each merge queue at a time. */
  pullRequestsPerQueue: 10,
  /** State changes per enqueued PR per hour (queued → pending → testing → passed → merged). */
  stateChangesPerPullRequestPerHour: 6,
  /** Quarantined tests per repository (pages walked when flakyTestDetails is on). */
  quarantinedTestsPerRepository: 500,
  /** API v2: flaky and broken tests per repository (the organization's second walk). */
  unhealthyTestsPerRepository: 100,
  /**
   * API v2: share of a queue's polls that read its concluded entries: those that see PRs leave, or
   * one back in `not_ready` (docs/benchmarks.md measures each share at 1,000 queues × 30 PRs).
   */
  exitReadsPerQueuePoll: 0.09,
  /**
   * API v2: share of a queue's polls that read its testing results: those that see a stretch of
   * testing end (a PR leave `testing` or reach `testsPassed`) or a PR leave the queue.
   */
  testingReadsPerQueuePoll: 0.2,
  /**
   * API v2: share of a queue's polls that read its verification runs: those that see a stretch of
   * testing begin or end, or a PR leave the queue.
   */
  verificationRunReadsPerQueuePoll: 0.2,
} as const;

/** The name of one assumption. */
export type BudgetAssumption = keyof typeof BUDGET_ASSUMPTIONS;

/** The organization the organization-wide v2 reads (queue list, test walks) are sized for. */
export interface OrganizationSize {
  readonly queues: number;
  readonly repositoriesWithTests: number;
  /** `lists`: its lists were read, and named at least these; `configuration`: none read yet. */
  readonly from: 'lists' | 'configuration';
}

/** Pages of a list of `rows` at the largest page size; an empty list is one call too. */
export function pages(rows: number): number {
  return Math.max(1, Math.ceil(rows / MAX_PAGE_SIZE));
}
