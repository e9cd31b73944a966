// The API load a configuration asks for, estimated without a call, so an operator learns at
// start-up, not from late polls, that the intervals and targets do not fit under
// `trunk.maxRequestsPerSecond`. It sums the reads each target's source declares
// (poller/readDeclaration.ts), each at the cost its declaration estimates: queue depths and list
// sizes are not in the config, so the costs assume typical values (BUDGET_ASSUMPTIONS), and say
// so. Through API v2 some reads cover the whole organization, and every shard makes them in full:
// their pages follow the organization's size as its lists were last read, or as the configuration
// names it before that.
import { repositoryKey } from '../config/repositoryKey.js';
import { credentialsOf } from '../config/targetApis.js';
import { configuredTargets } from '../config/targets.js';
import type { ExporterConfig } from '../config/types.js';
import { ALL_READS, discoveryReads, readsOf } from '../poller/jobs/sources.js';
import type { OrganizationSize } from '../poller/readCost.js';
import type { PollInterval, ReadDeclaration } from '../poller/readDeclaration.js';
import type { Target } from '../snapshot/types.js';
import type { Endpoint } from '../trunk/schemas.js';

/** Requests per second, in total and per endpoint. */
export interface EndpointRates {
  readonly requestsPerSecond: number;
  readonly byEndpoint: Readonly<Partial<Record<Endpoint, number>>>;
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

/** Seconds between two polls of each kind of target. */
type Periods = Readonly<Record<PollInterval, number>>;

/**
 * Expected requests per second of this instance: the reads its targets' sources declare, each
 * run once per poll of its target, and each organization-wide read once per the shortest period
 * any target or discovery asks for it (poller/sharedRead.ts: however many ask). Start-up is
 * busier: the first poll of each queue looks up every PR (v1), names every repository (v2).
 */
export function computeApiBudget(config: ExporterConfig, inputs: BudgetInputs): ApiBudget {
  const targets = inputs.targets ?? configuredTargets(config);
  const { polling } = config;
  const organization =
    config.trunk.apiKey === undefined ? undefined : organizationSize(config, inputs.organization);
  const scheduled: Periods = {
    mergeQueue: polling.mergeQueueIntervalSeconds,
    flakyTests: polling.flakyTestsIntervalSeconds,
  };
  const rates = (periods: Periods): EndpointRates =>
    withTotal(declaredRates(config, targets, organization, { scheduled, periods }));
  const { mergeQueueMs, flakyTestsMs } = inputs.eventSpacing;
  return {
    ...rates(scheduled),
    withWebhooks: config.webhooks.enabled
      ? rates({
          mergeQueue: Math.min(scheduled.mergeQueue, mergeQueueMs / 1000),
          flakyTests: Math.min(scheduled.flakyTests, flakyTestsMs / 1000),
        })
      : undefined,
    organization,
    maxRequestsPerSecond: config.trunk.maxRequestsPerSecond,
  };
}

type Rates = Partial<Record<Endpoint, number>>;

interface PollPeriods {
  /** The configured intervals. */
  readonly scheduled: Periods;
  /** How often polls come: the intervals, or with webhooks, as often as events may ask. */
  readonly periods: Periods;
}

/**
 * The calls per second of the reads `targets` make, with a rate (0 when none is made) for each
 * endpoint the reads of the instance's API estimate, so that the gauge shows every one of them.
 */
function declaredRates(
  config: ExporterConfig,
  targets: readonly Target[],
  organization: OrganizationSize | undefined,
  { scheduled, periods }: PollPeriods,
): Rates {
  const size = organization ?? { queues: 0, repositoriesWithTests: 0, from: 'configuration' };
  const callsOf = (read: ReadDeclaration, periodSeconds: number, askedBy: number) =>
    Object.entries(read.cost.calls({ config, organization: size, periodSeconds, askedBy })) as [
      Endpoint,
      number,
    ][];
  const rates: Rates = {};
  const api = organization === undefined ? 'v1' : 'v2';
  for (const read of ALL_READS) {
    if (read.api !== api) continue;
    for (const [endpoint] of callsOf(read, scheduled.mergeQueue, Math.max(1, size.queues))) {
      rates[endpoint] = 0;
    }
  }
  const add = (read: ReadDeclaration, periodSeconds: number, askedBy = 1) => {
    for (const [endpoint, calls] of callsOf(read, periodSeconds, askedBy)) {
      rates[endpoint] = (rates[endpoint] ?? 0) + calls / periodSeconds;
    }
  };
  const shared = new Map<ReadDeclaration, { period: number; askedBy: number }>();
  const ask = (read: ReadDeclaration, periodSeconds: number, by: number) => {
    const asked = shared.get(read) ?? { period: Infinity, askedBy: 0 };
    shared.set(read, {
      period: Math.min(periodSeconds, asked.period),
      askedBy: asked.askedBy + by,
    });
  };
  const credentials = credentialsOf(config);
  for (const target of targets) {
    const period = periods[target.kind === 'merge_queue' ? 'mergeQueue' : 'flakyTests'];
    for (const read of readsOf(credentials, target)) {
      const { cadence } = read;
      if (cadence.kind !== 'shared') add(read, period);
      // Events refresh a shared read by invalidating it; otherwise it is read once per interval.
      else ask(read, (cadence.refreshedByEvents ? periods : scheduled)[cadence.interval], 1);
    }
  }
  const discovery = config.discovery;
  if (organization !== undefined && discovery?.enabled === true) {
    for (const read of discoveryReads(discovery)) {
      if (read.cadence.kind !== 'shared') continue;
      // Discovery reuses a read younger than the read's interval.
      ask(read, Math.max(discovery.intervalSeconds, scheduled[read.cadence.interval]), 0);
    }
  }
  for (const [read, { period, askedBy }] of shared) add(read, period, askedBy);
  return rates;
}

/**
 * The organization as its lists last named it, never less than the configuration names (every
 * shard's targets: each shard's file names them all): queues, and repositories with tests. What
 * discovery added to the targets is left to the lists, which named it: discovery gives every
 * repository of a queue a quarantine list, tests or not.
 */
function organizationSize(config: ExporterConfig, lists?: OrganizationLists): OrganizationSize {
  const configuredQueues = config.targets.reduce(
    (sum, repo) => sum + repo.branches.length - (repo.discovered?.branches.size ?? 0),
    0,
  );
  const withTests = new Set(
    config.targets
      .filter((repo) => repo.flakyTests && repo.discovered?.flakyTests !== true)
      .map((repo) => repositoryKey(repo.name)),
  );
  for (const name of lists?.repositoriesWithTests ?? []) withTests.add(repositoryKey(name));
  const read = (lists?.queues ?? 0) > 0 || (lists?.repositoriesWithTests.length ?? 0) > 0;
  return {
    queues: Math.max(configuredQueues, lists?.queues ?? 0),
    repositoriesWithTests: withTests.size,
    from: read ? 'lists' : 'configuration',
  };
}

function withTotal(byEndpoint: Rates): EndpointRates {
  const requestsPerSecond = Object.values(byEndpoint).reduce((sum, rate) => sum + rate, 0);
  return { requestsPerSecond, byEndpoint };
}
