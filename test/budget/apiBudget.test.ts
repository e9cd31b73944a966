// The API budget: the estimate from a config (exact arithmetic on the documented assumptions), the
// warning when it exceeds trunk.maxRequestsPerSecond, and an exporter that logs it and exposes it.
// The reads each case expects, and how often, are written by hand from what the poller does;
// shardBudget.test.ts holds the estimate to the calls a fake upstream counts.
import { describe, expect, it } from 'vitest';
import { computeApiBudget, type OrganizationLists } from '../../src/budget/apiBudget.js';
import { describeBudgetExcess } from '../../src/budget/budgetReport.js';
import { parseConfig } from '../../src/config/load.js';
import type { ExporterConfig } from '../../src/config/types.js';
import { BUDGET_ASSUMPTIONS } from '../../src/poller/readCost.js';
import { select } from '../support/exposition.js';
import { configYaml, startFrozenSimulator, startTestExporter } from '../support/exporterHarness.js';

const TARGETS = [
  'targets:',
  '  - repo: github.com/acme/web',
  '    branches: [main, release]',
  '    flakyTests: true',
  '  - repo: github.com/acme/api',
  '    branches: [main, next]',
].join('\n');

/** Webhook events poll a queue at most every 5 s and walk a test list at most every minute. */
const EVENT_SPACING = { mergeQueueMs: 5_000, flakyTestsMs: 60_000 };

const WEBHOOKS =
  'webhooks:\n  enabled: true\n  signingSecret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

async function config(extra: string, targets = TARGETS): Promise<ExporterConfig> {
  const yaml = ['trunk:', '  token: t', '  orgUrlSlug: acme', extra, targets].join('\n');
  return parseConfig(yaml, { source: 'budget.yaml', env: {} });
}

/** A config with an API key and no v1 token, `extra` lines at the top level. */
async function keyConfig(extra: string, targets = TARGETS): Promise<ExporterConfig> {
  const yaml = ['trunk:', '  apiKey: trunk_v2_k', extra, targets].join('\n');
  return parseConfig(yaml, { source: 'budget.yaml', env: {} });
}

function budgetOf(exporterConfig: ExporterConfig, organization?: OrganizationLists) {
  return computeApiBudget(exporterConfig, {
    eventSpacing: EVENT_SPACING,
    ...(organization === undefined ? {} : { organization }),
  });
}

/** `count` repositories, each with a `main` queue and a quarantine list. */
function repositories(count: number): string {
  return [
    'targets:',
    ...Array.from({ length: count }, (_, index) => [
      `  - repo: github.com/acme/r${index}`,
      '    branches: [main]',
      '    flakyTests: true',
    ]).flat(),
  ].join('\n');
}

describe('computeApiBudget through API v1', () => {
  it('adds getQueue per queue, lookups per assumed PR, and quarantine pages per list', async () => {
    const budget = budgetOf(
      await config(
        'polling:\n  mergeQueueIntervalSeconds: 30\n  pullRequestRecheckSeconds: 300\n  flakyTestsIntervalSeconds: 300',
      ),
    );
    // 4 queues every 30 s.
    expect(budget.byEndpoint.getQueue).toBeCloseTo(4 / 30, 9);
    // Per PR: 6 state changes an hour plus one recheck per 300 s; 10 PRs in each of 4 queues.
    expect(BUDGET_ASSUMPTIONS.pullRequestsPerQueue).toBe(10);
    expect(budget.byEndpoint.getSubmittedPullRequest).toBeCloseTo(40 * (6 / 3600 + 1 / 300), 9);
    // One list of an assumed 500 tests: 5 pages of 100 every 300 s.
    expect(budget.byEndpoint['flaky-tests/list-quarantined-tests']).toBeCloseTo(5 / 300, 9);
    expect(budget.requestsPerSecond).toBeCloseTo(4 / 30 + 0.2 + 5 / 300, 9);
    expect(budget.maxRequestsPerSecond).toBe(10);
    expect(budget.withWebhooks).toBeUndefined();
    expect(budget.organization).toBeUndefined();
  });

  it('counts no lookups without PR details, one page without quarantine detail, and at most one lookup per PR per poll', async () => {
    const lean = budgetOf(
      await config(
        'polling:\n  pullRequestDetails: false\n  flakyTestDetails: false\n  flakyTestsIntervalSeconds: 60',
      ),
    );
    expect(lean.byEndpoint.getSubmittedPullRequest).toBe(0);
    expect(lean.byEndpoint['flaky-tests/list-quarantined-tests']).toBeCloseTo(1 / 60, 9);
    const everyPoll = budgetOf(
      await config('polling:\n  mergeQueueIntervalSeconds: 10\n  pullRequestRecheckSeconds: 0'),
    );
    expect(everyPoll.byEndpoint.getSubmittedPullRequest).toBeCloseTo(40 / 10, 9);
  });

  it("counts only this shard's targets, and the shards' budgets add up to the unsharded one", async () => {
    const whole = budgetOf(await config(''));
    const shards = await Promise.all(
      [0, 1, 2].map(async (shard) =>
        budgetOf(await config(`sharding:\n  shard: ${shard}\n  totalShards: 3`)),
      ),
    );
    const total = shards.reduce((sum, budget) => sum + budget.requestsPerSecond, 0);
    expect(total).toBeCloseTo(whole.requestsPerSecond, 9);
    expect(shards.every((budget) => budget.requestsPerSecond < whole.requestsPerSecond)).toBe(true);
  });

  it('with webhooks, polls each queue up to every 5 s and walks each list up to every minute', async () => {
    const budget = budgetOf(await config(WEBHOOKS));
    // Defaults: queues every 30 s, lists every 300 s; events may ask for more, up to the spacing.
    expect(budget.byEndpoint.getQueue).toBeCloseTo(4 / 30, 9);
    expect(budget.withWebhooks?.byEndpoint.getQueue).toBeCloseTo(4 / 5, 9);
    expect(budget.withWebhooks?.byEndpoint['flaky-tests/list-quarantined-tests']).toBeCloseTo(
      5 / 60,
      9,
    );
  });
});

describe('computeApiBudget through API v2', () => {
  it('with an API key: the list of queues, one pull-requests read per queue and poll plus exit reads, testing-results reads where testing ends, and both test walks', async () => {
    const budget = budgetOf(await keyConfig('polling:\n  mergeQueueIntervalSeconds: 30'));
    expect(budget.byEndpoint.getQueue).toBeUndefined();
    expect(budget.byEndpoint.getSubmittedPullRequest).toBeUndefined();
    // One page of the list of queues per interval.
    expect(budget.byEndpoint['v2/merge-queues']).toBeCloseTo(1 / 30, 9);
    expect(BUDGET_ASSUMPTIONS.exitReadsPerQueuePoll).toBe(0.09);
    expect(budget.byEndpoint['v2/merge-queues/{id}/pull-requests']).toBeCloseTo((4 * 1.09) / 30, 9);
    // Testing-results reads on an assumed 20 % of polls: those that see testing end or a PR leave.
    expect(BUDGET_ASSUMPTIONS.testingReadsPerQueuePoll).toBe(0.2);
    expect(budget.byEndpoint['v2/merge-queues/{id}/testing-results']).toBeCloseTo(
      (4 * 0.2) / 30,
      9,
    );
    // Verification-run reads on an assumed 20 % of polls: those that see testing begin or end or a PR leave.
    expect(BUDGET_ASSUMPTIONS.verificationRunReadsPerQueuePoll).toBe(0.2);
    expect(budget.byEndpoint['v2/merge-queues/{id}/verification-runs']).toBeCloseTo(
      (4 * 0.2) / 30,
      9,
    );
    // One repository with tests (web) as configured: an assumed 500 quarantined tests and 100
    // flaky or broken ones, 5 and 1 pages every 300 s.
    expect(BUDGET_ASSUMPTIONS.unhealthyTestsPerRepository).toBe(100);
    expect(budget.byEndpoint['v2/tests']).toBeCloseTo((5 + 1) / 300, 9);
    expect(budget.byEndpoint['flaky-tests/list-quarantined-tests']).toBeUndefined();
    // One page of test collections (the newest 100) every 300 s, with a flaky-tests target.
    expect(budget.byEndpoint['v2/test-collections']).toBeCloseTo(1 / 300, 9);
    // Queue-entry histories: 4 queues × 10 PRs × 6 changes an hour = 2 changed PRs per 30 s,
    // one call of up to 50 every 30 s.
    expect(budget.byEndpoint['v2/queue-entry-history']).toBeCloseTo(1 / 30, 9);
    expect(budget.requestsPerSecond).toBeCloseTo(
      1 / 30 + 4.36 / 30 + 0.8 / 30 + 0.8 / 30 + 6 / 300 + 1 / 300 + 1 / 30,
      9,
    );
    expect(budget.organization).toEqual({
      queues: 4,
      repositoriesWithTests: 1,
      from: 'configuration',
    });
  });

  it('with reads.verificationRuns: false expects no verification-run reads', async () => {
    const budget = budgetOf(await keyConfig('reads:\n  verificationRuns: false'));
    expect(budget.byEndpoint['v2/merge-queues/{id}/verification-runs']).toBeUndefined();
    expect(budget.byEndpoint['v2/merge-queues/{id}/testing-results']).toBeCloseTo(
      (4 * 0.2) / 30,
      9,
    );
  });

  it("every shard walks the whole organization's tests and reads its whole list of queues (issue 40: 60 repositories on 3 shards)", async () => {
    const shards = await Promise.all(
      [0, 1, 2].map(async (shard) =>
        budgetOf(
          await keyConfig(`sharding:\n  shard: ${shard}\n  totalShards: 3`, repositories(60)),
        ),
      ),
    );
    for (const budget of shards) {
      // 60 repositories × 500 quarantined = 300 pages, × 100 flaky or broken = 60 pages, every
      // 300 s: 1.2 requests/s on each shard, not a third of it.
      expect(budget.byEndpoint['v2/tests']).toBeCloseTo(360 / 300, 9);
      // 60 queues: one page every 30 s on each shard.
      expect(budget.byEndpoint['v2/merge-queues']).toBeCloseTo(1 / 30, 9);
    }
    // The shards' own queues still divide: 60 queues polled once each between them.
    const pullRequests = shards.reduce(
      (sum, budget) => sum + (budget.byEndpoint['v2/merge-queues/{id}/pull-requests'] ?? 0),
      0,
    );
    expect(pullRequests).toBeCloseTo((60 * 1.09) / 30, 9);
  });

  it("sizes the queue-entry histories by the shard's own queues: each shard asks for its own pull requests", async () => {
    const whole = budgetOf(await keyConfig('', repositories(600)));
    const shards = await Promise.all(
      [0, 1, 2].map(async (shard) =>
        budgetOf(
          await keyConfig(`sharding:\n  shard: ${shard}\n  totalShards: 3`, repositories(600)),
        ),
      ),
    );
    // 600 queues × 10 PRs × 6 changes an hour = 300 changed PRs per 30 s: 6 calls of 50.
    expect(whole.byEndpoint['v2/queue-entry-history']).toBeCloseTo(6 / 30, 9);
    const queuesOf = (budget: typeof whole) =>
      Math.round(((budget.byEndpoint['v2/merge-queues/{id}/pull-requests'] ?? 0) * 30) / 1.09);
    expect(shards.reduce((sum, budget) => sum + queuesOf(budget), 0)).toBe(600);
    for (const budget of shards) {
      // Half a changed PR per queue and 30 s: a shard asks for its own queues' PRs, one call per
      // 100 of its queues (about 200), not the 6 the organization's 600 would take.
      const calls = Math.ceil(queuesOf(budget) / 100);
      expect(calls).toBeLessThan(6);
      expect(budget.byEndpoint['v2/queue-entry-history']).toBeCloseTo(calls / 30, 9);
    }
  });

  it('sizes the organization-wide reads by what its lists named, once read', async () => {
    const budget = budgetOf(await keyConfig('polling:\n  mergeQueueIntervalSeconds: 30'), {
      queues: 250,
      // web is configured too, spelled otherwise: one repository.
      repositoriesWithTests: ['github.com/Acme/Web', 'github.com/acme/docs', 'github.com/acme/ml'],
    });
    // 250 queues: 3 pages every 30 s.
    expect(budget.byEndpoint['v2/merge-queues']).toBeCloseTo(3 / 30, 9);
    // 3 repositories: 15 pages of quarantined tests and 3 of flaky or broken ones every 300 s.
    expect(budget.byEndpoint['v2/tests']).toBeCloseTo(18 / 300, 9);
    expect(budget.organization).toEqual({ queues: 250, repositoriesWithTests: 3, from: 'lists' });
  });

  it('with a token and orgUrlSlug beside the key: configured quarantine lists are walked through v1, and only the flaky and broken walk through v2 (issue 37 item 12)', async () => {
    const budget = budgetOf(
      await parseConfig(
        ['trunk:', '  token: t', '  orgUrlSlug: acme', '  apiKey: trunk_v2_k', TARGETS].join('\n'),
        { source: 'budget.yaml', env: {} },
      ),
    );
    // web's list through v1: an assumed 500 tests, 5 pages every 300 s.
    expect(budget.byEndpoint['flaky-tests/list-quarantined-tests']).toBeCloseTo(5 / 300, 9);
    // No quarantined walk; the flaky and broken walk for web: 1 page every 300 s.
    expect(budget.byEndpoint['v2/tests']).toBeCloseTo(1 / 300, 9);
    expect(budget.byEndpoint['v2/merge-queues/{id}/pull-requests']).toBeCloseTo((4 * 1.09) / 30, 9);
  });

  it('adds no discovery reads of the list of queues: discovery reuses the one the polls read (issue 37 item 12)', async () => {
    const discovery = (seconds: number) =>
      `discovery:\n  enabled: true\n  intervalSeconds: ${seconds}\n  flakyTests: false`;
    // Discovery every 10 s, polls every 30 s: the list is read at most once per 30 s.
    const polled = budgetOf(await keyConfig(discovery(10)));
    expect(polled.byEndpoint['v2/merge-queues']).toBeCloseTo(1 / 30, 9);
    // A shard without a queue of its own reads it for discovery alone: every 600 s, or every
    // 30 s when discovery asks more often than that.
    const alone = (seconds: number) => keyConfig(discovery(seconds), 'targets: []');
    expect(budgetOf(await alone(600)).byEndpoint['v2/merge-queues']).toBeCloseTo(1 / 600, 9);
    expect(budgetOf(await alone(10)).byEndpoint['v2/merge-queues']).toBeCloseTo(1 / 30, 9);
    expect(budgetOf(await alone(600)).byEndpoint['v2/tests']).toBe(0);
  });

  it('reads no test collections with reads.testCollections off, nor without a flaky-tests target', async () => {
    const off = budgetOf(await keyConfig('reads:\n  testCollections: false'));
    expect(off.byEndpoint['v2/test-collections']).toBeUndefined();
    const queuesOnly = budgetOf(
      await keyConfig('', 'targets:\n  - repo: github.com/acme/web\n    branches: [main]'),
    );
    // The gauge shows every endpoint its API's reads may call, at 0 when none is made.
    expect(queuesOnly.byEndpoint['v2/test-collections']).toBe(0);
  });

  it('walks both test lists for discovery of repositories with tests, with no flaky-tests target of its own', async () => {
    const budget = budgetOf(
      await keyConfig('discovery:\n  enabled: true\n  intervalSeconds: 600', 'targets: []'),
      { queues: 0, repositoriesWithTests: ['github.com/acme/a', 'github.com/acme/b'] },
    );
    // 2 repositories: 10 + 2 pages, every 600 s (discovery is slower than the 300 s of the lists).
    expect(budget.byEndpoint['v2/tests']).toBeCloseTo(12 / 600, 9);
    expect(budget.byEndpoint['v2/merge-queues']).toBeCloseTo(1 / 600, 9);
  });

  it('with webhooks: each queue polled up to every 5 s and the test lists walked up to every minute, the list of queues as before', async () => {
    const budget = budgetOf(await keyConfig(WEBHOOKS));
    const bound = budget.withWebhooks;
    expect(bound?.byEndpoint['v2/merge-queues/{id}/pull-requests']).toBeCloseTo((4 * 1.09) / 5, 9);
    expect(bound?.byEndpoint['v2/merge-queues/{id}/testing-results']).toBeCloseTo((4 * 0.2) / 5, 9);
    expect(bound?.byEndpoint['v2/tests']).toBeCloseTo((5 + 1) / 60, 9);
    expect(bound?.byEndpoint['v2/merge-queues']).toBeCloseTo(1 / 30, 9);
    // Events do not refresh the test collections.
    expect(bound?.byEndpoint['v2/test-collections']).toBeCloseTo(1 / 300, 9);
    // The histories are read once per merge-queue interval however often events poll.
    expect(bound?.byEndpoint['v2/queue-entry-history']).toBeCloseTo(1 / 30, 9);
    expect(bound?.requestsPerSecond).toBeCloseTo(
      4.36 / 5 + 0.8 / 5 + 0.8 / 5 + 6 / 60 + 1 / 30 + 1 / 300 + 1 / 30,
      9,
    );
    // The steady estimate stays without them.
    expect(budget.byEndpoint['v2/tests']).toBeCloseTo(6 / 300, 9);
  });

  it("with webhooks and the lists kept on v1, events walk the v1 lists and the organization's flaky and broken tests, not its quarantined ones", async () => {
    const both = ['trunk:', '  token: t', '  orgUrlSlug: acme', '  apiKey: trunk_v2_k', WEBHOOKS];
    const budget = budgetOf(
      await parseConfig([...both, TARGETS].join('\n'), { source: 'budget.yaml', env: {} }),
    );
    expect(budget.withWebhooks?.byEndpoint['flaky-tests/list-quarantined-tests']).toBeCloseTo(
      5 / 60,
      9,
    );
    // An event about web's tests reads the organization's lists again (web's flaky and broken
    // tests come from them): 1 page every minute; the quarantined list is read by no one.
    expect(budget.withWebhooks?.byEndpoint['v2/tests']).toBeCloseTo(1 / 60, 9);
    expect(budget.byEndpoint['v2/tests']).toBeCloseTo(1 / 300, 9);
  });
});

describe('describeBudgetExcess', () => {
  it('says by how much the estimate exceeds the limit, and nothing when it fits', () => {
    const byEndpoint = {
      getQueue: 1,
      getSubmittedPullRequest: 2,
      'flaky-tests/list-quarantined-tests': 0.5,
    };
    const budget = {
      requestsPerSecond: 3.5,
      byEndpoint,
      maxRequestsPerSecond: 2,
      withWebhooks: undefined,
      organization: undefined,
    };
    expect(describeBudgetExcess(budget)).toBe(
      'expected API load 3.5 requests/s exceeds trunk.maxRequestsPerSecond 2 by 1.5 requests/s ' +
        '(75%): polls will wait for the rate limiter and finish late; raise the intervals, shard, ' +
        'or raise the limit',
    );
    expect(describeBudgetExcess({ ...budget, requestsPerSecond: 2 })).toBeUndefined();
  });
});

describe('the exporter at start', () => {
  const targets = [
    '  - repo: github.com/acme/web',
    '    branches: [main, release]',
    '    flakyTests: true',
  ].join('\n');

  it('exposes the budget by endpoint as trunk_exporter_api_budget_requests_per_second and warns when over the limit', async () => {
    const { simulator } = await startFrozenSimulator();
    const yaml = configYaml({ apiUrl: simulator.baseUrl, targets }).replace(
      'maxRequestsPerSecond: 500',
      'maxRequestsPerSecond: 0.03',
    );
    const running = await startTestExporter(yaml);
    // Polling every 600 s: 2 getQueue, 20 PRs looked up at most once a poll, 5 quarantine pages.
    const gauges = select(await running.samples(), 'trunk_exporter_api_budget_requests_per_second');
    const byEndpoint = new Map(gauges.map((gauge) => [gauge.labels.endpoint, gauge.value]));
    expect([...byEndpoint.keys()].sort()).toEqual([
      'flaky-tests/list-quarantined-tests',
      'getQueue',
      'getSubmittedPullRequest',
    ]);
    expect(byEndpoint.get('getQueue')).toBeCloseTo(2 / 600, 9);
    expect(byEndpoint.get('getSubmittedPullRequest')).toBeCloseTo(20 / 600, 9);
    expect(byEndpoint.get('flaky-tests/list-quarantined-tests')).toBeCloseTo(5 / 600, 9);
    const warning = running
      .logs()
      .split('\n')
      .filter((line) => line.includes('exceeds trunk.maxRequestsPerSecond'));
    expect(warning).toHaveLength(1);
    expect(JSON.parse(warning[0] ?? '{}')).toMatchObject({
      level: 40,
      msg: expect.stringContaining(
        '0.045 requests/s exceeds trunk.maxRequestsPerSecond 0.03 by 0.015 requests/s (50%)',
      ) as unknown,
      expectedRequestsPerSecond: 0.045,
      maxRequestsPerSecond: 0.03,
    });
  });
});
