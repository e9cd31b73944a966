// The API load a configuration asks for, estimated without a call, so an operator learns at
// start-up, not from late polls, that the intervals and targets do not fit under
// `trunk.maxRequestsPerSecond`. Queue depths and list sizes are not in the config: the estimate
// assumes typical values (BUDGET_ASSUMPTIONS), and says so. Through API v2 some reads cover the
// whole organization, and every shard makes them in full: their pages follow the organization's
// size as its lists were last read, or as the configuration names it before that.
import { readsQuarantineThroughV2 } from '../config/credentials.js';
import { repositoryKey } from '../config/repositoryKey.js';
import { configuredTargets } from '../config/targets.js';
import type { ExporterConfig } from '../config/types.js';
import type { Target } from '../snapshot/types.js';
import { ENDPOINTS, MAX_PAGE_SIZE, type Endpoint } from '../trunk/schemas.js';
import { V2_ENTRY_HISTORY_MAX_IDS } from '../trunk/v2EntryHistorySchemas.js';
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

/** Requests per second, in total and per endpoint. */
export interface EndpointRates {
  readonly requestsPerSecond: number;
  readonly byEndpoint: Readonly<Partial<Record<Endpoint, number>>>;
}

/** The organization the organization-wide v2 reads (queue list, test walks) are sized for. */
export interface OrganizationSize {
  readonly queues: number;
  readonly repositoriesWithTests: number;
  /** `lists`: its lists were read, and named at least these; `configuration`: none read yet. */
  readonly from: 'lists' | 'configuration';
}

/** This instance's expected steady-state requests per second, and what webhooks may add. */
export interface ApiBudget extends EndpointRates {
  /**
   * With webhooks on: the most this instance may make while events ask for every poll they can,
   * each queue polled and each test list walked once per trigger spacing; undefined when off.
   */
  readonly withWebhooks: EndpointRates | undefined;
  /** With an API key: the organization its organization-wide reads were sized for. */
  readonly organization: OrganizationSize | undefined;
  /** The configured limit the estimate is compared with. */
  readonly maxRequestsPerSecond: number;
}

/** What the organization's shared lists named when last read (nothing before the first read). */
export interface OrganizationLists {
  /** Every queue of `GET /v2/merge-queues`, whichever this instance polls. */
  readonly queues: number;
  /** Every repository the test lists (quarantined; flaky and broken) named. */
  readonly repositoriesWithTests: readonly string[];
}

/** How often webhook events may poll a queue and walk a test list, at most (TriggerSpacing). */
export interface EventPollSpacing {
  readonly mergeQueueMs: number;
  readonly flakyTestsMs: number;
}

interface BudgetInputs {
  /** This instance's targets, configured and discovered; its configured ones when absent. */
  readonly targets?: readonly Target[];
  readonly organization?: OrganizationLists;
  readonly eventSpacing: EventPollSpacing;
}

/** How often a queue is polled and a test list walked, in seconds. */
interface Cadence {
  readonly mergeQueueSeconds: number;
  readonly flakyTestsSeconds: number;
}

/**
 * Expected requests per second of this instance. Through API v1: one getQueue per polled
 * (repo, branch) per mergeQueueInterval; per PR, a lookup when its state changes plus one per
 * recheck interval (at most one per poll); per quarantine list, its pages per flakyTestsInterval.
 * Through API v2 (v2Rates), the organization-wide reads besides this instance's own. Start-up is
 * busier: the first poll of each queue looks up every PR (v1), names every repository (v2).
 */
export function computeApiBudget(config: ExporterConfig, inputs: BudgetInputs): ApiBudget {
  const targets = inputs.targets ?? configuredTargets(config);
  const { polling } = config;
  const organization =
    config.trunk.apiKey === undefined ? undefined : organizationSize(config, inputs.organization);
  const rates = (cadence: Cadence): EndpointRates =>
    withTotal(
      organization === undefined
        ? v1Rates(config, targets, cadence)
        : v2Rates(config, targets, organization, cadence),
    );
  const { mergeQueueMs, flakyTestsMs } = inputs.eventSpacing;
  return {
    ...rates({
      mergeQueueSeconds: polling.mergeQueueIntervalSeconds,
      flakyTestsSeconds: polling.flakyTestsIntervalSeconds,
    }),
    withWebhooks: config.webhooks.enabled
      ? rates({
          mergeQueueSeconds: Math.min(polling.mergeQueueIntervalSeconds, mergeQueueMs / 1000),
          flakyTestsSeconds: Math.min(polling.flakyTestsIntervalSeconds, flakyTestsMs / 1000),
        })
      : undefined,
    organization,
    maxRequestsPerSecond: config.trunk.maxRequestsPerSecond,
  };
}

type Rates = Partial<Record<Endpoint, number>>;

function v1Rates(config: ExporterConfig, targets: readonly Target[], cadence: Cadence): Rates {
  const { polling } = config;
  const queues = targets.filter((target) => target.kind === 'merge_queue').length;
  const pollsPerSecond = 1 / cadence.mergeQueueSeconds;
  const lookupsPerPullRequestPerSecond = polling.pullRequestDetails
    ? Math.min(
        pollsPerSecond,
        BUDGET_ASSUMPTIONS.stateChangesPerPullRequestPerHour / 3600 +
          (polling.pullRequestRecheckSeconds > 0
            ? 1 / polling.pullRequestRecheckSeconds
            : pollsPerSecond),
      )
    : 0;
  return {
    [ENDPOINTS.getQueue]: queues * pollsPerSecond,
    [ENDPOINTS.getSubmittedPullRequest]:
      queues * BUDGET_ASSUMPTIONS.pullRequestsPerQueue * lookupsPerPullRequestPerSecond,
    [ENDPOINTS.listQuarantinedTests]: v1QuarantineWalks(config, targets.length - queues, cadence),
  };
}

/** The pages of `lists` quarantine lists read through API v1, per second. */
function v1QuarantineWalks(config: ExporterConfig, lists: number, cadence: Cadence): number {
  const pagesPerWalk = config.polling.flakyTestDetails
    ? pages(BUDGET_ASSUMPTIONS.quarantinedTestsPerRepository)
    : 1;
  return (lists * pagesPerWalk) / cadence.flakyTestsSeconds;
}

/**
 * API v2 (an API key is set). Each shard reads, in full: the organization's list of queues (100
 * a page) when it polls a queue, or for discovery; the organization's quarantined tests when it
 * reads a quarantine list through v2, or for discovery of repositories with tests; its flaky and
 * broken tests when it has any flaky-tests target (the quarantine list read through v1 or v2), or
 * for that discovery. Each such list is read at most once per interval however many ask
 * (poller/sharedRead.ts), so discovery adds a read only when nothing else asks; events refresh
 * the test lists only for the lists read through v2. Its own queues: one pull-requests read per
 * poll plus the exit reads, the testing-results reads of the polls that see testing end, and (for
 * all of them together) the queue-entry history reads of the PRs they see change. Quarantine lists kept on
 * v1 (a token with orgUrlSlug beside the key) are walked as v1Rates says.
 */
function v2Rates(
  config: ExporterConfig,
  targets: readonly Target[],
  organization: OrganizationSize,
  cadence: Cadence,
): Rates {
  const { polling } = config;
  const discovery = config.discovery?.enabled === true ? config.discovery : undefined;
  const queues = targets.filter((target) => target.kind === 'merge_queue').length;
  const lists = targets.filter((target) => target.kind === 'flaky_tests');
  const v2Lists = lists.filter((list) =>
    readsQuarantineThroughV2(config, list.discovered === true),
  );
  const v1Lists = lists.length - v2Lists.length;
  const queueListEvery =
    queues > 0
      ? polling.mergeQueueIntervalSeconds
      : discovery === undefined
        ? undefined
        : Math.max(discovery.intervalSeconds, polling.mergeQueueIntervalSeconds);
  const discoveryWalkEvery =
    discovery?.flakyTests === true
      ? Math.max(discovery.intervalSeconds, polling.flakyTestsIntervalSeconds)
      : undefined;
  const quarantinedWalkEvery = v2Lists.length > 0 ? cadence.flakyTestsSeconds : discoveryWalkEvery;
  const unhealthyWalkEvery =
    v2Lists.length > 0
      ? cadence.flakyTestsSeconds
      : lists.length > 0
        ? polling.flakyTestsIntervalSeconds
        : discoveryWalkEvery;
  const repositories = organization.repositoriesWithTests;
  return {
    [V2_ENDPOINTS.listMergeQueues]: perSecond(pages(organization.queues), queueListEvery),
    [V2_ENDPOINTS.listQueuePullRequests]:
      (queues * (1 + BUDGET_ASSUMPTIONS.exitReadsPerQueuePoll)) / cadence.mergeQueueSeconds,
    [V2_ENDPOINTS.listTestingResults]:
      (queues * BUDGET_ASSUMPTIONS.testingReadsPerQueuePoll) / cadence.mergeQueueSeconds,
    ...(config.reads?.queueEntryHistory === false
      ? {}
      : {
          [V2_ENDPOINTS.listQueueEntryHistory]: historyCallsPerSecond(
            queues,
            polling.mergeQueueIntervalSeconds,
          ),
        }),
    [V2_ENDPOINTS.listTests]:
      perSecond(
        pages(repositories * BUDGET_ASSUMPTIONS.quarantinedTestsPerRepository),
        quarantinedWalkEvery,
      ) +
      perSecond(
        pages(repositories * BUDGET_ASSUMPTIONS.unhealthyTestsPerRepository),
        unhealthyWalkEvery,
      ),
    ...(v1Lists > 0
      ? { [ENDPOINTS.listQuarantinedTests]: v1QuarantineWalks(config, v1Lists, cadence) }
      : {}),
  };
}

/**
 * The queue-entry history reads: one per merge-queue interval for the organization (events that
 * poll sooner do not read it sooner), 50 changed pull requests a call: each poll asks for those it
 * saw change state or leave.
 */
function historyCallsPerSecond(queues: number, intervalSeconds: number): number {
  if (queues === 0) return 0;
  const { pullRequestsPerQueue, stateChangesPerPullRequestPerHour } = BUDGET_ASSUMPTIONS;
  const changes =
    (queues * pullRequestsPerQueue * stateChangesPerPullRequestPerHour * intervalSeconds) / 3600;
  return Math.ceil(changes / V2_ENTRY_HISTORY_MAX_IDS) / intervalSeconds;
}

/**
 * The organization as its lists last named it, never less than the configuration names (every
 * shard's targets: each shard's file names them all): queues, and repositories with tests.
 */
function organizationSize(config: ExporterConfig, lists?: OrganizationLists): OrganizationSize {
  const configuredQueues = config.targets.reduce((sum, repo) => sum + repo.branches.length, 0);
  const withTests = new Set(
    config.targets.filter((repo) => repo.flakyTests).map((repo) => repositoryKey(repo.name)),
  );
  for (const name of lists?.repositoriesWithTests ?? []) withTests.add(repositoryKey(name));
  const read = (lists?.queues ?? 0) > 0 || (lists?.repositoriesWithTests.length ?? 0) > 0;
  return {
    queues: Math.max(configuredQueues, lists?.queues ?? 0),
    repositoriesWithTests: withTests.size,
    from: read ? 'lists' : 'configuration',
  };
}

/** Pages of a list of `rows` at the largest page size; an empty list is one call too. */
function pages(rows: number): number {
  return Math.max(1, Math.ceil(rows / MAX_PAGE_SIZE));
}

/** `calls` once per `everySeconds`, per second; none when the read is not made. */
function perSecond(calls: number, everySeconds: number | undefined): number {
  return everySeconds === undefined ? 0 : calls / everySeconds;
}

function withTotal(byEndpoint: Rates): EndpointRates {
  const requestsPerSecond = Object.values(byEndpoint).reduce((sum, rate) => sum + rate, 0);
  return { requestsPerSecond, byEndpoint };
}
