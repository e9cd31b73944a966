// The API budget: the estimate from a config (exact arithmetic on the documented assumptions), the
// warning when it exceeds trunk.maxRequestsPerSecond, and an exporter that logs it and exposes it.
import { describe, expect, it } from 'vitest';
import {
  BUDGET_ASSUMPTIONS,
  computeApiBudget,
  describeBudgetExcess,
} from '../../src/budget/apiBudget.js';
import { parseConfig } from '../../src/config/load.js';
import type { ExporterConfig } from '../../src/config/types.js';
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

async function config(extra: string): Promise<ExporterConfig> {
  const yaml = ['trunk:', '  token: t', '  orgUrlSlug: acme', extra, TARGETS].join('\n');
  return parseConfig(yaml, { source: 'budget.yaml', env: {} });
}

describe('computeApiBudget', () => {
  it('adds getQueue per queue, lookups per assumed PR, and quarantine pages per list', async () => {
    const budget = computeApiBudget(
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
  });

  it('with an API key: a share of the list of queues, one pull-requests read per queue and poll plus exit reads, testing-results reads where testing ends, and the quarantine walk', async () => {
    const yaml = [
      'trunk:',
      '  apiKey: trunk_v2_k',
      'polling:',
      '  mergeQueueIntervalSeconds: 30',
      TARGETS,
    ].join('\n');
    const budget = computeApiBudget(await parseConfig(yaml, { source: 'budget.yaml', env: {} }));
    expect(budget.byEndpoint.getQueue).toBeUndefined();
    expect(budget.byEndpoint.getSubmittedPullRequest).toBeUndefined();
    // One page of the list of queues per interval, for every queue.
    expect(budget.byEndpoint['v2/merge-queues']).toBeCloseTo(1 / 30, 9);
    expect(BUDGET_ASSUMPTIONS.exitReadsPerQueuePoll).toBe(0.1);
    expect(budget.byEndpoint['v2/merge-queues/{id}/pull-requests']).toBeCloseTo((4 * 1.1) / 30, 9);
    // Testing-results reads on an assumed 20 % of polls: those that see testing end.
    expect(BUDGET_ASSUMPTIONS.testingReadsPerQueuePoll).toBe(0.2);
    expect(budget.byEndpoint['v2/merge-queues/{id}/testing-results']).toBeCloseTo(
      (4 * 0.2) / 30,
      9,
    );
    // One repository's assumed 500 quarantined tests and 100 flaky or broken ones in the
    // organization-wide walks: 5 and 1 pages every 300 s.
    expect(BUDGET_ASSUMPTIONS.unhealthyTestsPerRepository).toBe(100);
    expect(budget.byEndpoint['v2/tests']).toBeCloseTo((5 + 1) / 300, 9);
    expect(budget.requestsPerSecond).toBeCloseTo(1 / 30 + 4.4 / 30 + 0.8 / 30 + 6 / 300, 9);
  });

  it('counts no lookups without PR details, one page without quarantine detail, and at most one lookup per PR per poll', async () => {
    const lean = computeApiBudget(
      await config(
        'polling:\n  pullRequestDetails: false\n  flakyTestDetails: false\n  flakyTestsIntervalSeconds: 60',
      ),
    );
    expect(lean.byEndpoint.getSubmittedPullRequest).toBe(0);
    expect(lean.byEndpoint['flaky-tests/list-quarantined-tests']).toBeCloseTo(1 / 60, 9);
    const everyPoll = computeApiBudget(
      await config('polling:\n  mergeQueueIntervalSeconds: 10\n  pullRequestRecheckSeconds: 0'),
    );
    expect(everyPoll.byEndpoint.getSubmittedPullRequest).toBeCloseTo(40 / 10, 9);
  });

  it("counts only this shard's targets, and the shards' budgets add up to the unsharded one", async () => {
    const whole = computeApiBudget(await config(''));
    const shards = await Promise.all(
      [0, 1, 2].map(async (shard) =>
        computeApiBudget(await config(`sharding:\n  shard: ${shard}\n  totalShards: 3`)),
      ),
    );
    const total = shards.reduce((sum, budget) => sum + budget.requestsPerSecond, 0);
    expect(total).toBeCloseTo(whole.requestsPerSecond, 9);
    expect(shards.every((budget) => budget.requestsPerSecond < whole.requestsPerSecond)).toBe(true);
  });
});

describe('describeBudgetExcess', () => {
  it('says by how much the estimate exceeds the limit, and nothing when it fits', () => {
    const byEndpoint = {
      getQueue: 1,
      getSubmittedPullRequest: 2,
      'flaky-tests/list-quarantined-tests': 0.5,
    };
    expect(
      describeBudgetExcess({ requestsPerSecond: 3.5, byEndpoint, maxRequestsPerSecond: 2 }),
    ).toBe(
      'expected API load 3.5 requests/s exceeds trunk.maxRequestsPerSecond 2 by 1.5 requests/s ' +
        '(75%): polls will wait for the rate limiter and finish late; raise the intervals, shard, ' +
        'or raise the limit',
    );
    expect(
      describeBudgetExcess({ requestsPerSecond: 2, byEndpoint, maxRequestsPerSecond: 2 }),
    ).toBeUndefined();
  });
});

describe('the exporter at start', () => {
  const targets = [
    '  - repo: github.com/acme/web',
    '    branches: [main, release]',
    '    flakyTests: true',
  ].join('\n');

  it('exposes the budget as trunk_exporter_api_budget_requests_per_second and warns when over the limit', async () => {
    const { simulator } = await startFrozenSimulator();
    const yaml = configYaml({ apiUrl: simulator.baseUrl, targets }).replace(
      'maxRequestsPerSecond: 500',
      'maxRequestsPerSecond: 0.03',
    );
    const running = await startTestExporter(yaml);
    // Polling every 600 s: 2 getQueue, 20 PRs looked up at most once a poll, 5 quarantine pages.
    const expected = (2 + 20 + 5) / 600;
    const [gauge] = select(
      await running.samples(),
      'trunk_exporter_api_budget_requests_per_second',
    );
    expect(gauge?.value).toBeCloseTo(expected, 9);
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
