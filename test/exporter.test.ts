// End to end: a real exporter polling a real simulator over loopback, scraped over HTTP. Every
// expectation is computed from the simulator world's own answers, independently of the poller.
import { describe, expect, it } from 'vitest';
import type { SimulatorWorld } from '../src/simulator/world.js';
import { select, sum, type Sample } from './support/exposition.js';
import {
  configYaml,
  startFrozenSimulator,
  startTestExporter,
  SIMULATOR_TOKEN,
} from './support/exporterHarness.js';
import { promtoolCheckMetrics } from './support/promtool.js';
import { findSystemBinary } from './support/systemBinary.js';

const QUEUES = [
  { repo: { host: 'github.com', owner: 'acme', name: 'web' }, branch: 'main' },
  { repo: { host: 'github.com', owner: 'acme', name: 'web' }, branch: 'release' },
  { repo: { host: 'github.com', owner: 'acme', name: 'api' }, branch: 'main' },
  { repo: { host: 'github.com', owner: 'acme', name: 'mobile' }, branch: 'develop' },
] as const;

const ALL_TARGETS = [
  '  - repo: github.com/acme/web',
  '    branches: [main, release]',
  '    flakyTests: true',
  '  - repo: github.com/acme/api',
  '    branches: [main]',
  '    flakyTests: true',
  '  - repo: { host: github.com, owner: acme, name: mobile }',
  '    branches: [develop]',
  '    flakyTests: true',
].join('\n');

type Repo = (typeof QUEUES)[number]['repo'];
const nameOf = (repo: Repo) => `${repo.host}/${repo.owner}/${repo.name}`;

/** What the queue metrics must say, computed from the world's answers and the documented rules. */
function expectedQueue(world: SimulatorWorld, repo: Repo, branch: string) {
  const answer = world.getQueue(repo, branch);
  if (!answer.ok) throw new Error(answer.message);
  const queue = answer.body;
  const counts = new Map<string, number>();
  const oldest = new Map<string, number>();
  const blocked = { base_branch_mismatch: 0, not_mergeable: 0, impacted_targets_missing: 0 };
  for (const item of queue.enqueuedPullRequests) {
    const detail = world.getSubmittedPullRequest(repo, branch, item.prNumber);
    if (!detail.ok) throw new Error(detail.message);
    const state = item.state ?? detail.body.state;
    const key = `${state}|${item.priorityName}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    const changed = Date.parse(item.stateChangedAt) / 1000;
    oldest.set(state, Math.min(oldest.get(state) ?? Infinity, changed));
    const readiness = detail.body.readiness;
    if (state === 'not_ready') {
      if (!readiness.doesBaseBranchMatch) blocked.base_branch_mismatch++;
      const mergeability = readiness.hostMergeability ?? readiness.gitHubMergeability;
      if (mergeability !== undefined && mergeability !== 'mergeable') blocked.not_mergeable++;
      if (readiness.requiresImpactedTargets && !readiness.hasImpactedTargets) {
        blocked.impacted_targets_missing++;
      }
    }
  }
  return { queue, counts, oldest, blocked };
}

/** What the quarantine metrics must say: a walk of every page of the world's list. */
function expectedQuarantine(world: SimulatorWorld, repo: Repo) {
  const owners = new Map<string, number>();
  let token = '';
  let total: number;
  let oldest = Infinity;
  do {
    const answer = world.listQuarantinedTests(repo, 100, token);
    if (!answer.ok) throw new Error(answer.message);
    total = answer.body.page.total_rows;
    for (const test of answer.body.quarantined_tests) {
      const testOwners = test.codeowners.length > 0 ? new Set(test.codeowners) : ['none'];
      for (const owner of testOwners) owners.set(owner, (owners.get(owner) ?? 0) + 1);
      if (test.quarantined_at) oldest = Math.min(oldest, Date.parse(test.quarantined_at) / 1000);
    }
    token = answer.body.page.next_page_token;
  } while (token !== '');
  return { total, owners, oldest };
}

function assertQueueMetrics(samples: Sample[], world: SimulatorWorld): void {
  for (const { repo, branch } of QUEUES) {
    const labels = { repo: nameOf(repo), branch };
    const expected = expectedQueue(world, repo, branch);
    const { queue } = expected;
    expect(
      select(samples, 'trunk_merge_queue_state', { ...labels, state: queue.state })[0]?.value,
    ).toBe(1);
    expect(sum(samples, 'trunk_merge_queue_state', labels)).toBe(1);
    expect(select(samples, 'trunk_merge_queue_info', labels)[0]?.labels).toEqual({
      ...labels,
      mode: queue.mode,
      merge_method: queue.mergeMethod,
      direct_merge_mode: queue.directMergeMode,
      optimization_mode: queue.optimizationMode,
    });
    expect(sum(samples, 'trunk_merge_queue_concurrency', labels)).toBe(queue.concurrency);
    expect(sum(samples, 'trunk_merge_queue_testing_timeout_seconds', labels)).toBe(
      queue.testingTimeoutMinutes * 60,
    );
    expect(sum(samples, 'trunk_merge_queue_pending_failure_depth', labels)).toBe(
      queue.pendingFailureDepth,
    );
    expect(sum(samples, 'trunk_merge_queue_bisection_concurrency', labels)).toBe(
      queue.bisectionConcurrency,
    );
    expect(sum(samples, 'trunk_merge_queue_batching_max_wait_seconds', labels)).toBe(
      queue.batchingMaxWaitTimeMinutes * 60,
    );
    expect(sum(samples, 'trunk_merge_queue_batching_min_size', labels)).toBe(queue.batchingMinSize);
    expect(sum(samples, 'trunk_merge_queue_required_statuses', labels)).toBe(
      queue.requiredStatuses.length,
    );
    const settings: Record<string, boolean> = {
      batch: queue.batch,
      can_optimistically_merge: queue.canOptimisticallyMerge,
      create_prs_for_testing_branches: queue.createPrsForTestingBranches,
      comments: queue.commentsEnabled,
      commands: queue.commandsEnabled,
      status_check: queue.statusCheckEnabled,
    };
    for (const [setting, enabled] of Object.entries(settings)) {
      expect(sum(samples, 'trunk_merge_queue_setting_enabled', { ...labels, setting })).toBe(
        enabled ? 1 : 0,
      );
    }
    // Every PR counted once, in the right (state, priority) cell.
    expect(sum(samples, 'trunk_merge_queue_pull_requests', labels)).toBe(
      queue.enqueuedPullRequests.length,
    );
    for (const [key, count] of expected.counts) {
      const [state = '', priority = ''] = key.split('|');
      expect(sum(samples, 'trunk_merge_queue_pull_requests', { ...labels, state, priority })).toBe(
        count,
      );
    }
    const oldest = new Map(
      select(samples, 'trunk_merge_queue_oldest_state_change_timestamp_seconds', labels).map(
        (s) => [s.labels.state ?? '', s.value],
      ),
    );
    expect(oldest).toEqual(expected.oldest);
    for (const [reason, count] of Object.entries(expected.blocked)) {
      expect(sum(samples, 'trunk_merge_queue_pull_requests_blocked', { ...labels, reason })).toBe(
        count,
      );
    }
  }
}

describe('exporter against the simulator', () => {
  it.each(['documented', 'live'] as const)(
    'exports exactly what the %s-shaped API says, and counts every API call it made',
    async (flavour) => {
      const { world, simulator } = await startFrozenSimulator(flavour);
      const subject = await startTestExporter(
        configYaml({ apiUrl: simulator.baseUrl, targets: ALL_TARGETS }),
      );
      await subject.waitUntilReady();
      const samples = await subject.samples();

      assertQueueMetrics(samples, world);
      for (const repo of [QUEUES[0].repo, QUEUES[2].repo, QUEUES[3].repo]) {
        const labels = { repo: nameOf(repo) };
        const expected = expectedQuarantine(world, repo);
        expect(sum(samples, 'trunk_flaky_tests_quarantined', labels)).toBe(expected.total);
        const owners = new Map(
          select(samples, 'trunk_flaky_tests_quarantined_by_codeowner', labels).map((s) => [
            s.labels.codeowner ?? '',
            s.value,
          ]),
        );
        expect(owners).toEqual(expected.owners);
        expect(sum(samples, 'trunk_flaky_tests_oldest_quarantine_timestamp_seconds', labels)).toBe(
          expected.oldest,
        );
      }
      expect(select(samples, 'trunk_exporter_target_up').map((s) => s.value)).toEqual([
        1, 1, 1, 1, 1, 1, 1,
      ]);
      expect(select(samples, 'trunk_exporter_last_success_timestamp_seconds')).toHaveLength(7);
      expect(select(samples, 'trunk_exporter_build_info', { version: '0.0.0-test' })).toHaveLength(
        1,
      );

      const calls = simulator.requestCounts();
      for (const [endpoint, path] of [
        ['getQueue', '/v1/getQueue'],
        ['getSubmittedPullRequest', '/v1/getSubmittedPullRequest'],
        ['flaky-tests/list-quarantined-tests', '/v1/flaky-tests/list-quarantined-tests'],
      ] as const) {
        expect(sum(samples, 'trunk_exporter_api_requests_total', { endpoint, code: '200' })).toBe(
          calls[path] ?? 0,
        );
      }
      expect(calls['/v1/getQueue']).toBe(4);
      const enqueued = QUEUES.map(
        ({ repo, branch }) => expectedQueue(world, repo, branch).queue.enqueuedPullRequests,
      );
      const lookups = calls['/v1/getSubmittedPullRequest'] ?? 0;
      if (flavour === 'documented') {
        // Queue items carry no state there: every PR needs its lookup.
        expect(lookups).toBe(enqueued.flat().length);
      } else {
        // The live shape carries the state: only PRs waiting on readiness are looked up.
        expect(lookups).toBe(enqueued.flat().filter((item) => item.state === 'not_ready').length);
      }
    },
  );

  it('follows the queue as it moves: departed PRs and emptied states lose their series', async () => {
    const { world, simulator } = await startFrozenSimulator('documented', 11);
    const subject = await startTestExporter(
      configYaml({
        apiUrl: simulator.baseUrl,
        targets: ALL_TARGETS,
        polling: '  mergeQueueIntervalSeconds: 0.2\n  flakyTestsIntervalSeconds: 0.2',
      }),
    );
    await subject.waitUntilReady();
    const before = world.getQueue(QUEUES[0].repo, 'main');
    // An hour of simulated time: every PR that was there has merged, failed or been cancelled.
    world.advance(world.now() + 3600);
    const after = world.getQueue(QUEUES[0].repo, 'main');
    if (!before.ok || !after.ok) throw new Error('simulator refused getQueue');
    const stayed = after.body.enqueuedPullRequests.filter((pr) =>
      before.body.enqueuedPullRequests.some((old) => old.prNumber === pr.prNumber),
    );
    expect(stayed.length).toBeLessThan(before.body.enqueuedPullRequests.length);

    // Wait for a poll that started after the move (last success later than now), then compare.
    const movedAt = Date.now() / 1000;
    const samples = await subject.waitFor(
      (current) =>
        select(current, 'trunk_exporter_last_success_timestamp_seconds').every(
          (s) => s.value > movedAt + 0.05,
        ),
      'a poll after the world moved',
    );
    assertQueueMetrics(samples, world);
  });

  it('keeps the other targets polling when one target fails', async () => {
    const { world, simulator } = await startFrozenSimulator();
    const subject = await startTestExporter(
      configYaml({
        apiUrl: simulator.baseUrl,
        targets: `${ALL_TARGETS}\n  - repo: github.com/acme/unknown\n    branches: [main]\n    flakyTests: true`,
      }),
    );
    await subject.waitUntilReady();
    const samples = await subject.samples();
    assertQueueMetrics(samples, world);
    const unknown = { repo: 'github.com/acme/unknown' };
    expect(
      select(samples, 'trunk_exporter_target_up', unknown).map((s) => [s.labels.kind, s.value]),
    ).toEqual([
      ['merge_queue', 0],
      ['flaky_tests', 0],
    ]);
    expect(select(samples, 'trunk_exporter_last_success_timestamp_seconds', unknown)).toEqual([]);
    expect(select(samples, 'trunk_merge_queue_state', unknown)).toEqual([]);
    expect(sum(samples, 'trunk_exporter_target_up')).toBe(7);
    expect(sum(samples, 'trunk_exporter_api_requests_total', { code: '404' })).toBe(2);
    const failures = subject
      .logs()
      .split('\n')
      .filter((line) => line.includes('poll failed'));
    expect(failures).toHaveLength(2);
    for (const line of failures) {
      expect(line).toContain('github.com/acme/unknown');
      expect(line).toContain('HTTP 404');
    }
  });

  it('keeps last values with target_up 0 while polls fail, and drops them after staleAfterSeconds', async () => {
    const { simulator } = await startFrozenSimulator();
    const subject = await startTestExporter(
      configYaml({
        apiUrl: simulator.baseUrl,
        targets: '  - repo: github.com/acme/api\n    branches: [main]',
        polling: '  mergeQueueIntervalSeconds: 0.2\n  staleAfterSeconds: 1.5',
      }),
    );
    await subject.waitUntilReady();
    const labels = { repo: 'github.com/acme/api', branch: 'main' };
    const healthy = await subject.samples();
    const concurrency = sum(healthy, 'trunk_merge_queue_concurrency', labels);
    expect(concurrency).toBeGreaterThan(0);

    await simulator.close();
    const failing = await subject.waitFor(
      (current) => sum(current, 'trunk_exporter_target_up', labels) === 0,
      'target_up 0',
    );
    // Still there, with the last known value, while within staleAfterSeconds.
    expect(sum(failing, 'trunk_merge_queue_concurrency', labels)).toBe(concurrency);
    expect(select(failing, 'trunk_merge_queue_pull_requests', labels).length).toBeGreaterThan(0);

    const stale = await subject.waitFor(
      (current) => select(current, 'trunk_merge_queue_concurrency', labels).length === 0,
      'stale series to be dropped',
    );
    expect(select(stale, 'trunk_merge_queue_state', labels)).toEqual([]);
    expect(select(stale, 'trunk_merge_queue_pull_requests', labels)).toEqual([]);
    expect(sum(stale, 'trunk_exporter_target_up', labels)).toBe(0);
    expect(select(stale, 'trunk_exporter_last_success_timestamp_seconds', labels)).toHaveLength(1);
    expect(
      sum(stale, 'trunk_exporter_api_requests_total', { code: 'network_error' }),
    ).toBeGreaterThan(0);
  });

  it('never shows the token: not in logs (even at trace level), pages, or error messages', async () => {
    const { simulator } = await startFrozenSimulator();
    const wrongToken = 'tok-WRONG-9f8e7d6c5b4a';
    const wrong = await startTestExporter(
      configYaml({ apiUrl: simulator.baseUrl, token: wrongToken, targets: ALL_TARGETS }),
      'trace',
    );
    const right = await startTestExporter(
      configYaml({ apiUrl: simulator.baseUrl, targets: ALL_TARGETS }),
      'trace',
    );
    await wrong.waitUntilReady();
    await right.waitUntilReady();
    const wrongSamples = await wrong.samples();
    expect(sum(wrongSamples, 'trunk_exporter_target_up')).toBe(0);
    expect(sum(wrongSamples, 'trunk_exporter_api_requests_total', { code: '401' })).toBe(7);

    for (const [subject, token] of [
      [wrong, wrongToken],
      [right, SIMULATOR_TOKEN],
    ] as const) {
      const emitted = [
        subject.logs(),
        await subject.scrape('/'),
        await subject.scrape('/metrics'),
        await subject.scrape('/metrics', { Accept: 'application/openmetrics-text; version=1.0.0' }),
        await subject.scrape('/readyz'),
        await subject.scrape('/healthz'),
        JSON.stringify(subject.exporter.store.statuses()),
      ].join('\n');
      expect(emitted.length).toBeGreaterThan(1000);
      expect(emitted).not.toContain(token);
    }
    // The failures were logged, with what to check, just without the token.
    expect(wrong.logs()).toContain('HTTP 401');
  });

  it('stops once however often it is told to: a second stop waits for the first', async () => {
    const { simulator } = await startFrozenSimulator('live');
    const subject = await startTestExporter(
      configYaml({ apiUrl: simulator.baseUrl, targets: ALL_TARGETS }),
    );
    await subject.waitUntilReady();
    const first = subject.exporter.stop();
    const second = subject.exporter.stop();
    await expect(Promise.all([first, second])).resolves.toEqual([undefined, undefined]);
    await expect(subject.exporter.stop()).resolves.toBeUndefined();
    await expect(fetch(`${subject.exporter.url}/healthz`)).rejects.toThrow();
  });

  const promtool = findSystemBinary('promtool', 'prometheus');
  it.skipIf(promtool === undefined)(
    'serves a page that promtool check metrics accepts without a word',
    async () => {
      const { simulator } = await startFrozenSimulator('live');
      const subject = await startTestExporter(
        configYaml({
          apiUrl: simulator.baseUrl,
          targets: `${ALL_TARGETS}\n  - repo: github.com/acme/unknown\n    branches: [main]`,
        }),
      );
      await subject.waitUntilReady();
      const page = await subject.scrape();
      expect(page).toContain('trunk_merge_queue_pull_requests{');
      const result = await promtoolCheckMetrics(promtool ?? 'promtool', page);
      expect(result).toEqual({ code: 0, output: '' });
    },
  );
});
