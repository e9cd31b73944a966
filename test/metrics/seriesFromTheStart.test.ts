// What a merge queue's page writes at 0 before anything has happened, so that rate() and increase()
// see the first count, and what it writes only from its first count: the combinations Trunk's
// definition says a queue can have are written from the start, every other one once it occurs. A
// page of 1,000 queues carries each zero 1,000 times (issue 39 item 10).
import { describe, expect, it } from 'vitest';
import { advanceQueueFlow, startQueueFlow } from '../../src/flow/queueFlow.js';
import { createRegistry, registerExporterMetrics } from '../../src/metrics/index.js';
import { MetricsPage } from '../../src/metrics/metricsPage.js';
import { countTestingResults, startTestingAttempts } from '../../src/poller/v2TestingResults.js';
import { SnapshotStore } from '../../src/snapshot/store.js';
import type { MergeQueueSnapshot, PullRequestSnapshot, Target } from '../../src/snapshot/types.js';
import { parseExposition, select } from '../support/exposition.js';
import { renderPage } from './page.js';

const T0 = 1_767_225_600;
const TARGET: Target = { kind: 'merge_queue', repo: 'github.com/acme/web', branch: 'main' };
const FLOW_OPTIONS = { maxGapSeconds: 600, lookupRetrySeconds: 600, intervalSeconds: 30 };

function pullRequest(number: number, state: string): PullRequestSnapshot {
  return {
    number,
    state,
    priorityName: 'medium',
    stateChangedAt: T0 - 600,
    blockedReasons: [],
  };
}

function queue(takenAt: number, batch: boolean, pullRequests: PullRequestSnapshot[]) {
  const snapshot: MergeQueueSnapshot = {
    kind: 'merge_queue',
    repo: TARGET.repo,
    branch: TARGET.branch,
    takenAt,
    state: 'running',
    mode: 'parallel',
    mergeMethod: 'squash',
    directMergeMode: 'off',
    optimizationMode: 'off',
    concurrency: 2,
    testingTimeoutSeconds: 3600,
    pendingFailureDepth: 0,
    bisectionConcurrency: 1,
    batchingMaxWaitSeconds: 0,
    batchingMinSize: 1,
    requiredStatuses: 0,
    settings: {
      batch,
      can_optimistically_merge: false,
      create_prs_for_testing_branches: false,
      comments: false,
      commands: false,
      status_check: false,
    },
    pullRequests,
    readinessKnown: true,
  };
  return snapshot;
}

/** The page of a store whose one queue went from `first` to `second` (API v2: with attempts). */
async function page(
  first: MergeQueueSnapshot,
  second: MergeQueueSnapshot,
  exits: ReadonlyMap<number, { outcome: 'unknown'; leftAt: number }>,
  testingResults: Parameters<typeof countTestingResults>[1],
) {
  const store = new SnapshotStore(600, () => second.takenAt);
  store.setTargets([TARGET]);
  const flow = advanceQueueFlow(startQueueFlow(first), second, exits, {
    ...FLOW_OPTIONS,
    webhooks: false,
  });
  const started = startTestingAttempts(first.takenAt, second.settings.batch);
  const { attempts } = countTestingResults(started, testingResults, second.takenAt);
  store.recordSuccess(TARGET, second, 0.1, flow, attempts);
  const registry = createRegistry({ defaultMetrics: false });
  const { snapshotMetrics } = registerExporterMetrics({
    registry,
    store,
    version: 'test',
    mergeQueueIntervalSeconds: 30,
    flakyTestsIntervalSeconds: 300,
    topCodeowners: 20,
  });
  const samples = parseExposition(
    await renderPage(new MetricsPage({ registry, store, snapshotMetrics })),
  );
  return {
    pullRequests: select(samples, 'trunk_merge_queue_pull_requests').map(
      ({ labels, value }) => `${labels.state ?? ''}/${labels.priority ?? ''} ${String(value)}`,
    ),
    timeInQueue: select(samples, 'trunk_merge_queue_time_in_queue_seconds_count').map(
      ({ labels, value }) => `${labels.outcome ?? ''} ${String(value)}`,
    ),
    testing: select(samples, 'trunk_merge_queue_testing_duration_seconds_count').map(
      ({ labels, value }) => `${labels.outcome ?? ''}/${labels.bisection ?? ''} ${String(value)}`,
    ),
  };
}

/** Every priority name Trunk documents, at 0, for `state`. */
const zeros = (state: string): string[] =>
  ['urgent', 'high', 'medium', 'low'].map((priority) => `${state}/${priority} 0`);

describe('the series of a queue before its first count', () => {
  it('are the live entry states, the final states and the testing outcomes a batching queue can have', async () => {
    const empty = queue(T0, true, []);
    const { pullRequests, timeInQueue, testing } = await page(
      empty,
      { ...empty, takenAt: T0 + 30 },
      new Map(),
      [],
    );
    // "Queue-entry states: notReady, pending, testing, testsPassed, pendingFailure (not final),
    // merged, failed, cancelled (final)": a pull request in the queue has one of the first five.
    expect(pullRequests).toEqual([
      ...zeros('not_ready'),
      ...zeros('pending'),
      ...zeros('testing'),
      ...zeros('tests_passed'),
      ...zeros('pending_failure'),
    ]);
    // How an entry leaves: one of the three final states.
    expect(timeInQueue).toEqual(['merged 0', 'failed 0', 'cancelled 0']);
    // TestingOutcome: "`passed` — the run passed, including a passing bisection step. `failed` —
    // the run failed, or the pull request entered bisection. `interrupted` — testing was cut short
    // and will be retried [...]. `cancelled` — the pull request left the queue while testing";
    // startedBisection "Can be true together with `isBisection`, when a bisection step splits
    // again": a bisection step passes or fails.
    expect(testing).toEqual([
      'passed/false 0',
      'failed/false 0',
      'interrupted/false 0',
      'cancelled/false 0',
      'passed/true 0',
      'failed/true 0',
    ]);
  });

  it('has no bisection steps where the queue does not batch: only a batch is split', async () => {
    const empty = queue(T0, false, []);
    const { testing } = await page(empty, { ...empty, takenAt: T0 + 30 }, new Map(), []);
    expect(testing).toEqual([
      'passed/false 0',
      'failed/false 0',
      'interrupted/false 0',
      'cancelled/false 0',
    ]);
  });
});

describe('any other series', () => {
  it('appears with its first count', async () => {
    // PR 7 is listed merged (API v1's getQueue may list a pull request that just left), PR 8 left
    // and its lookup could not tell how, and a bisection step of PR 9 was cut short.
    const first = queue(T0, true, [pullRequest(7, 'testing'), pullRequest(8, 'testing')]);
    const second = queue(T0 + 30, true, [pullRequest(7, 'merged')]);
    const { pullRequests, timeInQueue, testing } = await page(
      first,
      second,
      new Map([[8, { outcome: 'unknown', leftAt: T0 + 30 }]]),
      [
        {
          pullRequestNumber: 9,
          endedAt: '2026-01-01T00:00:20Z',
          testingDurationMs: 120_000,
          outcome: 'interrupted',
          isBisection: true,
          startedBisection: false,
        },
      ],
    );
    expect(pullRequests.slice(20)).toEqual(['merged/medium 1']);
    expect(timeInQueue).toEqual(['merged 0', 'failed 0', 'cancelled 0', 'unknown 1']);
    expect(testing.slice(6)).toEqual(['interrupted/true 1']);
  });
});
