// The API load a configuration asks for, estimated from the config alone (no call is made), so an
// operator learns at start-up, not from late polls, that the intervals and targets do not fit
// under `trunk.maxRequestsPerSecond`. Queue depths and list sizes are not in the config: the
// estimate assumes typical values (BUDGET_ASSUMPTIONS), and says so.
import { configuredTargets } from '../config/targets.js';
import type { ExporterConfig } from '../config/types.js';
import type { Logger } from '../log/logger.js';
import type { Target } from '../snapshot/types.js';
import { ENDPOINTS, MAX_PAGE_SIZE, type Endpoint } from '../trunk/schemas.js';
import { V2_ENDPOINTS } from '../trunk/v2Schemas.js';

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
  /** API v2: share of a queue's polls that read its concluded entries (PRs left since the last). */
  exitReadsPerQueuePoll: 0.1,
  /**
   * API v2: share of a queue's polls that read its testing results: those that see a PR leave
   * testing or the queue (docs/benchmarks.md measures it).
   */
  testingReadsPerQueuePoll: 0.2,
} as const;

/** Expected steady-state requests per second of this instance, in total and per endpoint. */
export interface ApiBudget {
  readonly requestsPerSecond: number;
  readonly byEndpoint: Readonly<Partial<Record<Endpoint, number>>>;
  /** The configured limit the estimate is compared with. */
  readonly maxRequestsPerSecond: number;
}

/**
 * Expected requests per second from the config: one getQueue per polled (repo, branch) per
 * mergeQueueInterval; per PR, a lookup when its state changes plus one per recheck interval (at
 * most one per poll); per quarantine list, its pages per flakyTestsInterval. Only this shard's
 * targets count (`targets`: the configured ones unless given, such as with discovered ones).
 * Start-up is busier: the first poll of each queue looks up every PR.
 */
export function computeApiBudget(
  config: ExporterConfig,
  targets: readonly Target[] = configuredTargets(config),
): ApiBudget {
  const { polling } = config;
  const queues = targets.filter((target) => target.kind === 'merge_queue').length;
  const quarantineLists = targets.length - queues;

  const pollsPerSecond = 1 / polling.mergeQueueIntervalSeconds;
  const lookupsPerPullRequestPerSecond = polling.pullRequestDetails
    ? Math.min(
        pollsPerSecond,
        BUDGET_ASSUMPTIONS.stateChangesPerPullRequestPerHour / 3600 +
          (polling.pullRequestRecheckSeconds > 0
            ? 1 / polling.pullRequestRecheckSeconds
            : pollsPerSecond),
      )
    : 0;
  const pagesPerWalk = polling.flakyTestDetails
    ? Math.max(1, Math.ceil(BUDGET_ASSUMPTIONS.quarantinedTestsPerRepository / MAX_PAGE_SIZE))
    : 1;

  if (config.trunk.apiKey !== undefined) {
    return v2Budget(config, queues, quarantineLists);
  }
  const byEndpoint: Partial<Record<Endpoint, number>> = {
    [ENDPOINTS.getQueue]: queues * pollsPerSecond,
    [ENDPOINTS.getSubmittedPullRequest]:
      queues * BUDGET_ASSUMPTIONS.pullRequestsPerQueue * lookupsPerPullRequestPerSecond,
    [ENDPOINTS.listQuarantinedTests]:
      (quarantineLists * pagesPerWalk) / polling.flakyTestsIntervalSeconds,
  };
  const requestsPerSecond = Object.values(byEndpoint).reduce((sum, rate) => sum + rate, 0);
  return { requestsPerSecond, byEndpoint, maxRequestsPerSecond: config.trunk.maxRequestsPerSecond };
}

/**
 * API v2 (an API key is set): the organization's list of queues once per merge-queue interval
 * (100 a page; discovery reuses it when its interval is no shorter), one pull-requests read per
 * queue and poll plus the exit reads, the testing-results reads of the polls that see testing end, and two
 * organization-wide walks of tests (the quarantined, the flaky and broken) per flaky-tests
 * interval. The list pages are estimated from this instance's queues and repositories.
 */
function v2Budget(config: ExporterConfig, queues: number, quarantineLists: number): ApiBudget {
  const { polling } = config;
  const listPages = Math.max(1, Math.ceil(queues / MAX_PAGE_SIZE));
  const discovery = config.discovery?.enabled === true ? config.discovery : undefined;
  const discoveryReads =
    discovery !== undefined && discovery.intervalSeconds < polling.mergeQueueIntervalSeconds
      ? listPages / discovery.intervalSeconds
      : 0;
  const walkPages = (testsPerRepository: number) =>
    Math.ceil((quarantineLists * testsPerRepository) / MAX_PAGE_SIZE);
  const testPages =
    walkPages(BUDGET_ASSUMPTIONS.quarantinedTestsPerRepository) +
    walkPages(BUDGET_ASSUMPTIONS.unhealthyTestsPerRepository);
  const byEndpoint: Partial<Record<Endpoint, number>> = {
    [V2_ENDPOINTS.listMergeQueues]:
      (queues > 0 ? listPages / polling.mergeQueueIntervalSeconds : 0) + discoveryReads,
    [V2_ENDPOINTS.listQueuePullRequests]:
      (queues * (1 + BUDGET_ASSUMPTIONS.exitReadsPerQueuePoll)) / polling.mergeQueueIntervalSeconds,
    [V2_ENDPOINTS.listTestingResults]:
      (queues * BUDGET_ASSUMPTIONS.testingReadsPerQueuePoll) / polling.mergeQueueIntervalSeconds,
    [V2_ENDPOINTS.listTests]: testPages / polling.flakyTestsIntervalSeconds,
  };
  const requestsPerSecond = Object.values(byEndpoint).reduce((sum, rate) => sum + rate, 0);
  return { requestsPerSecond, byEndpoint, maxRequestsPerSecond: config.trunk.maxRequestsPerSecond };
}

/** The warning for a budget over its limit, or undefined when it fits. */
export function describeBudgetExcess(budget: ApiBudget): string | undefined {
  const { requestsPerSecond: expected, maxRequestsPerSecond: limit } = budget;
  if (expected <= limit) return undefined;
  const over = expected - limit;
  return (
    `expected API load ${round(expected)} requests/s exceeds trunk.maxRequestsPerSecond ` +
    `${round(limit)} by ${round(over)} requests/s (${Math.round((over / limit) * 100)}%): polls ` +
    'will wait for the rate limiter and finish late; raise the intervals, shard, or raise the limit'
  );
}

/** Logs a budget: a warning when it exceeds the limit, else info. */
export function logApiBudget(budget: ApiBudget, logger: Logger): void {
  const context = {
    expectedRequestsPerSecond: round(budget.requestsPerSecond),
    maxRequestsPerSecond: budget.maxRequestsPerSecond,
    byEndpoint: Object.fromEntries(
      Object.entries(budget.byEndpoint).map(([endpoint, rate]) => [endpoint, round(rate)]),
    ),
    assumptions: BUDGET_ASSUMPTIONS,
  };
  const excess = describeBudgetExcess(budget);
  if (excess === undefined) {
    logger.info(context, `expected API load ${round(budget.requestsPerSecond)} requests/s`);
  } else {
    logger.warn(context, excess);
  }
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
