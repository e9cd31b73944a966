// Flow counters and histograms as rendered from the store's ledgers: exact samples for a small
// ledger, what stale and removed targets show, and promtool's verdict on the page.
import { describe, expect, it } from 'vitest';
import { advanceQueueFlow, startQueueFlow } from '../../src/flow/queueFlow.js';
import { SnapshotStore } from '../../src/snapshot/store.js';
import type { MergeQueueSnapshot, Target } from '../../src/snapshot/types.js';
import { parseExposition, select, sum } from '../support/exposition.js';
import { promtoolCheckMetrics } from '../support/promtool.js';
import { renderPage, storePage } from './page.js';
import { findSystemBinary } from '../support/systemBinary.js';

const T0 = 1_767_225_600;
const TARGET: Target = { kind: 'merge_queue', repo: 'github.com/acme/web', branch: 'main' };

function queue(takenAt: number, numbers: number[]): MergeQueueSnapshot {
  return {
    kind: 'merge_queue',
    repo: TARGET.repo,
    branch: TARGET.branch,
    takenAt,
    state: 'running',
    mode: 'single',
    mergeMethod: 'squash',
    directMergeMode: 'off',
    optimizationMode: 'off',
    concurrency: 1,
    testingTimeoutSeconds: 3600,
    pendingFailureDepth: 0,
    bisectionConcurrency: 1,
    batchingMaxWaitSeconds: 0,
    batchingMinSize: 1,
    requiredStatuses: 0,
    settings: {
      batch: false,
      can_optimistically_merge: false,
      create_prs_for_testing_branches: false,
      comments: false,
      commands: false,
      status_check: false,
    },
    pullRequests: numbers.map((number) => ({
      number,
      state: 'testing',
      priorityName: 'medium',
      priorityValue: 100,
      stateChangedAt: T0 - 1000,
      sha: 'abc',
      skipTheLine: false,
      blockedReasons: [],
    })),
    readinessKnown: true,
  };
}

/** A store whose web/main queue saw PR 1 merge 1030 s after its testing began, 30 s of running. */
function storeWithOneMerge(clock: { now: number }) {
  const store = new SnapshotStore(600, () => clock.now);
  store.setTargets([TARGET]);
  const first = queue(T0, [1, 2]);
  const second = queue(T0 + 30, [2]);
  const flow = advanceQueueFlow(
    startQueueFlow(first),
    second,
    new Map([[1, { outcome: 'merged' as const, leftAt: T0 + 30 }]]),
    { maxGapSeconds: 600, lookupRetrySeconds: 600, intervalSeconds: 30, webhooks: false },
  );
  store.recordSuccess(TARGET, second, 0.1, flow);
  const metricsPage = storePage(store);
  const page = () => renderPage(metricsPage);
  return { store, page };
}

const promtool = findSystemBinary('promtool', 'prometheus');

describe('queue flow metrics', () => {
  it('renders the ledger as counters and cumulative histogram buckets', async () => {
    const { page } = storeWithOneMerge({ now: T0 + 30 });
    const samples = parseExposition(await page());
    const labels = { repo: TARGET.repo, branch: TARGET.branch };

    expect(
      select(samples, 'trunk_merge_queue_pull_requests_exited_total').map((s) => [
        s.labels.outcome,
        s.value,
      ]),
    ).toEqual([
      ['merged', 1],
      ['failed', 0],
      ['cancelled', 0],
      ['unknown', 0],
    ]);
    expect(
      select(samples, 'trunk_merge_queue_state_transitions_total', { ...labels, from: 'testing' }),
    ).toEqual([
      {
        name: 'trunk_merge_queue_state_transitions_total',
        labels: { ...labels, from: 'testing', to: 'merged' },
        value: 1,
      },
    ]);
    const merged = { ...labels, outcome: 'merged' };
    // 1030 s: above the 600 s bound, within 1200 s.
    expect(
      sum(samples, 'trunk_merge_queue_time_in_queue_seconds_bucket', { ...merged, le: '600' }),
    ).toBe(0);
    expect(
      sum(samples, 'trunk_merge_queue_time_in_queue_seconds_bucket', { ...merged, le: '1200' }),
    ).toBe(1);
    expect(
      sum(samples, 'trunk_merge_queue_time_in_queue_seconds_bucket', { ...merged, le: '+Inf' }),
    ).toBe(1);
    expect(sum(samples, 'trunk_merge_queue_time_in_queue_seconds_sum', merged)).toBe(1030);
    expect(sum(samples, 'trunk_merge_queue_time_in_queue_seconds_count', merged)).toBe(1);
    expect(
      select(samples, 'trunk_merge_queue_time_in_queue_seconds_bucket', merged).map(
        (s) => s.labels.le,
      ),
    ).toEqual(['300', '600', '1200', '1800', '3600', '7200', '14400', '86400', '+Inf']);
    expect(
      sum(samples, 'trunk_merge_queue_time_in_state_seconds_count', { state: 'testing' }),
    ).toBe(1);
    expect(sum(samples, 'trunk_merge_queue_state_seconds_total', { state: 'running' })).toBe(30);
  });

  it('keeps the counters of a stale target, and drops them with a target removed from the config', async () => {
    const clock = { now: T0 + 30 };
    const { store, page } = storeWithOneMerge(clock);
    store.recordFailure(TARGET, 'HTTP 503', 0.1);
    clock.now = T0 + 30 + 601;
    const stale = parseExposition(await page());
    // The queue's gauges are gone, its counters stay: they only count what was seen.
    expect(select(stale, 'trunk_merge_queue_state')).toEqual([]);
    expect(sum(stale, 'trunk_merge_queue_pull_requests_exited_total', { outcome: 'merged' })).toBe(
      1,
    );

    store.setTargets([]);
    expect(await page()).not.toContain('trunk_merge_queue_');
  });

  it.skipIf(promtool === undefined)('passes promtool check metrics', async () => {
    const { page } = storeWithOneMerge({ now: T0 + 30 });
    const result = await promtoolCheckMetrics(promtool ?? 'promtool', await page());
    expect(result).toEqual({ code: 0, output: '' });
  });
});
