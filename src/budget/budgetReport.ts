// What an operator is told of the API budget: the start-up (and reload, and discovery) log line,
// and the warning, there and from --check-config, when it exceeds trunk.maxRequestsPerSecond.
import type { Logger } from '../log/logger.js';
import { BUDGET_ASSUMPTIONS, type OrganizationSize } from '../poller/readCost.js';
import type { ApiBudget } from './apiBudget.js';

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

/**
 * Logs a budget: a warning when it exceeds the limit, else info; either says what webhooks may
 * add and what size of organization the organization-wide reads were estimated for.
 */
export function logApiBudget(budget: ApiBudget, logger: Logger): void {
  const { withWebhooks, organization } = budget;
  const context = {
    expectedRequestsPerSecond: round(budget.requestsPerSecond),
    maxRequestsPerSecond: budget.maxRequestsPerSecond,
    byEndpoint: rounded(budget.byEndpoint),
    ...(withWebhooks === undefined
      ? {}
      : {
          withWebhooksUpToRequestsPerSecond: round(withWebhooks.requestsPerSecond),
          withWebhooksByEndpoint: rounded(withWebhooks.byEndpoint),
        }),
    ...(organization === undefined ? {} : { organization }),
    assumptions: BUDGET_ASSUMPTIONS,
  };
  const details = [
    ...(withWebhooks === undefined
      ? []
      : [`with webhooks up to ${round(withWebhooks.requestsPerSecond)} requests/s`]),
    ...(organization === undefined ? [] : [describeOrganization(organization)]),
  ];
  const suffix = details.length === 0 ? '' : ` (${details.join('; ')})`;
  const excess = describeBudgetExcess(budget);
  if (excess === undefined) {
    logger.info(
      context,
      `expected API load ${round(budget.requestsPerSecond)} requests/s${suffix}`,
    );
  } else {
    logger.warn(context, `${excess}${suffix}`);
  }
}

/** `organization-wide reads for 250 queues and 3 repositories with tests, as its lists named them`. */
function describeOrganization(organization: OrganizationSize): string {
  const queues = count(organization.queues, 'queue', 'queues');
  const repositories = count(organization.repositoriesWithTests, 'repository', 'repositories');
  const size = `organization-wide reads for ${queues} and ${repositories} with tests`;
  return organization.from === 'lists'
    ? `${size}, as the organization's lists named them`
    : `${size}, as the configuration names them until the organization's lists are read`;
}

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

function rounded(byEndpoint: ApiBudget['byEndpoint']): Record<string, number> {
  return Object.fromEntries(
    Object.entries(byEndpoint).map(([endpoint, rate]) => [endpoint, round(rate)]),
  );
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
