// API v1 scenarios played poll by poll against an independent fake (test/support/scriptedV1.ts),
// each family's value counted by hand from what the fake sent and quoted from Trunk's documents
// (../shared/trunk-api-v1.md, ../shared/trunk-api-notes.md) and docs/metrics.md.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { select, type Sample } from './support/exposition.js';
import { configYaml, startTestExporter } from './support/exporterHarness.js';
import { SCRIPTED_TOKEN, iso, queueSettings, startScriptedV1 } from './support/scriptedV1.js';

afterEach(() => {
  vi.useRealTimers();
});

const QUEUE = { repo: 'github.com/acme/web', branch: 'main' };
const REPO = { repo: 'github.com/acme/web' };
/** A whole minute, so every time below is a literal offset from it. */
const T0 = 1_780_000_000 - (1_780_000_000 % 60);

function item(prNumber: number, fields: Record<string, unknown>): Record<string, unknown> {
  return {
    priorityValue: 100,
    priorityName: 'medium',
    skipTheLine: false,
    noBatch: false,
    prNumber,
    prTitle: `Change ${String(prNumber)}`,
    prSha: `sha-${String(prNumber)}`,
    prBaseBranch: 'main',
    prAuthor: 'bob',
    id: `id-${String(prNumber)}`,
    usedDefaultPriorityName: 'medium',
    ...fields,
  };
}

function submitted(prNumber: number, fields: Record<string, unknown>): Record<string, unknown> {
  return {
    ...item(prNumber, {}),
    forceEnqueued: false,
    isCurrentlySubmittedToQueue: true,
    ...fields,
  };
}

/** Each series of `name` for QUEUE, by the values of `labels` joined with `/`. */
function byLabels(samples: readonly Sample[], name: string, ...labels: string[]) {
  return Object.fromEntries(
    select(samples, name, QUEUE).map((sample): [string, number] => [
      labels.map((label) => sample.labels[label] ?? '').join('/'),
      sample.value,
    ]),
  );
}

/**
 * The page once the fake's step has been taken and a call of `path` came after it: that call
 * begins only when the poll that took the step has ended. The faked Date jumps: the real clock
 * bounds the wait.
 */
async function afterStep(
  exporter: { samples: () => Promise<Sample[]> },
  fake: { takenAndAfter: (path: string) => boolean },
  path: string,
): Promise<Sample[]> {
  const deadline = performance.now() + 20_000;
  while (!fake.takenAndAfter(path)) {
    if (performance.now() > deadline) throw new Error('the step was not polled');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return exporter.samples();
}

async function scriptedExporter(apiUrl: string, targets: string) {
  const exporter = await startTestExporter(
    configYaml({
      apiUrl,
      token: SCRIPTED_TOKEN,
      targets,
      polling: '  mergeQueueIntervalSeconds: 0.2\n  flakyTestsIntervalSeconds: 0.2',
    }),
  );
  return exporter;
}

describe('API v1 numbers, poll by poll', () => {
  it('counts a queue through four polls: states, readiness, exits, transitions and times', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(T0 * 1000);
    const fake = await startScriptedV1();
    const lookups0 = new Map([
      [
        2,
        submitted(2, {
          stateChangedAt: iso(T0 - 1200),
          state: 'not_ready',
          readiness: {
            requiresImpactedTargets: true,
            doesBaseBranchMatch: true,
            hasImpactedTargets: false,
            gitHubMergeability: 'not_mergeable',
          },
        }),
      ],
      [
        3,
        submitted(3, {
          stateChangedAt: iso(T0 - 300),
          state: 'not_ready',
          readiness: {
            requiresImpactedTargets: false,
            doesBaseBranchMatch: false,
            hasImpactedTargets: false,
            hostMergeability: 'mergeable',
          },
        }),
      ],
      // "state ... Required: no": an answer without one.
      [5, submitted(5, { stateChangedAt: iso(T0 - 50) })],
    ]);
    fake.next(
      {
        queue: {
          ...queueSettings('running'),
          enqueuedPullRequests: [
            item(1, {
              state: 'testing',
              stateChangedAt: iso(T0 - 600),
              priorityName: 'high',
              priorityValue: 10,
            }),
            // No `state`: "when it is absent, the state comes from getSubmittedPullRequest".
            item(2, { stateChangedAt: iso(T0 - 1200), priorityName: 'urgent', priorityValue: 0 }),
            item(3, { state: 'not_ready', stateChangedAt: iso(T0 - 300) }),
            item(4, {
              state: 'pending',
              stateChangedAt: iso(T0 - 100),
              priorityName: 'low',
              priorityValue: 200,
            }),
            item(5, { stateChangedAt: iso(T0 - 50), priorityName: 'low', priorityValue: 200 }),
            item(6, { state: 'pending', stateChangedAt: iso(T0 - 400) }),
          ],
        },
        submitted: lookups0,
      },
      () => undefined,
    );
    const exporter = await scriptedExporter(
      fake.apiUrl,
      `  - repo: ${QUEUE.repo}\n    branches: [main]`,
    );
    const afterPolls = () => afterStep(exporter, fake, 'getQueue');
    const s0 = await afterPolls();
    // Hand counts of step 0 (the first poll counts no flow).
    expect(byLabels(s0, 'trunk_merge_queue_pull_requests', 'state', 'priority')).toEqual({
      // #3 not_ready, #6 pending (medium); #1 testing high; #2 (no state: its lookup) not_ready
      // urgent; #4 pending low; #5 (no state anywhere: "state ... Required: no") unknown low.
      'not_ready/medium': 1,
      'pending/medium': 1,
      'testing/medium': 0,
      'tests_passed/medium': 0,
      'pending_failure/medium': 0,
      'testing/high': 1,
      'not_ready/urgent': 1,
      'pending/low': 1,
      'unknown/low': 1,
    });
    // "a pull request can start testing when doesBaseBranchMatch is true, the host-side
    // mergeability signal ... holds, and, when requiresImpactedTargets is true, hasImpactedTargets
    // is true": #2 (gitHubMergeability not_mergeable, targets missing), #3 (base branch).
    expect(byLabels(s0, 'trunk_merge_queue_pull_requests_blocked', 'reason')).toEqual({
      base_branch_mismatch: 1,
      not_mergeable: 1,
      impacted_targets_missing: 1,
    });
    expect(
      byLabels(s0, 'trunk_merge_queue_oldest_state_change_timestamp_seconds', 'state'),
    ).toEqual({
      testing: T0 - 600,
      not_ready: T0 - 1200,
      pending: T0 - 400,
      unknown: T0 - 50,
    });
    expect(byLabels(s0, 'trunk_merge_queue_oldest_pull_request_number', 'state')).toEqual({
      testing: 1,
      not_ready: 2,
      pending: 6,
      unknown: 5,
    });
    expect(byLabels(s0, 'trunk_merge_queue_state', 'state')).toEqual({
      running: 1,
      paused: 0,
      draining: 0,
      switching_modes: 0,
    });
    expect(
      byLabels(
        s0,
        'trunk_merge_queue_info',
        'mode',
        'merge_method',
        'direct_merge_mode',
        'optimization_mode',
      ),
    ).toEqual({ 'parallel/rebase/always/bisection_skip_redundant_tests': 1 });
    expect(byLabels(s0, 'trunk_merge_queue_setting_enabled', 'setting')).toEqual({
      batch: 1,
      can_optimistically_merge: 0,
      create_prs_for_testing_branches: 0,
      comments: 1,
      commands: 0,
      status_check: 1,
    });
    const setting = (name: string) => select(s0, name, QUEUE)[0]?.value;
    expect(setting('trunk_merge_queue_concurrency')).toBe(2);
    expect(setting('trunk_merge_queue_testing_timeout_seconds')).toBe(90 * 60);
    expect(setting('trunk_merge_queue_pending_failure_depth')).toBe(3);
    expect(setting('trunk_merge_queue_bisection_concurrency')).toBe(4);
    expect(setting('trunk_merge_queue_batching_max_wait_seconds')).toBe(5 * 60);
    expect(setting('trunk_merge_queue_batching_min_size')).toBe(2);
    expect(setting('trunk_merge_queue_required_statuses')).toBe(3);
    expect(byLabels(s0, 'trunk_merge_queue_pull_requests_exited_total', 'outcome')).toEqual({
      merged: 0,
      failed: 0,
      cancelled: 0,
      unknown: 0,
    });
    expect(setting('trunk_merge_queue_last_merge_timestamp_seconds')).toBeUndefined();

    // Step 1, a minute on: paused; #1 merged, #6 failed, #4 cancelled, #2 now pending, #7 new.
    const lookups1 = new Map([
      ...lookups0,
      [
        1,
        submitted(1, {
          state: 'merged',
          stateChangedAt: iso(T0 + 30),
          isCurrentlySubmittedToQueue: false,
        }),
      ],
      [
        6,
        submitted(6, {
          state: 'failed',
          stateChangedAt: iso(T0 + 40),
          isCurrentlySubmittedToQueue: false,
        }),
      ],
      [
        4,
        submitted(4, {
          state: 'cancelled',
          stateChangedAt: iso(T0 + 20),
          isCurrentlySubmittedToQueue: false,
        }),
      ],
    ]);
    fake.next(
      {
        queue: {
          ...queueSettings('paused'),
          enqueuedPullRequests: [
            item(2, {
              state: 'pending',
              stateChangedAt: iso(T0 + 10),
              priorityName: 'urgent',
              priorityValue: 0,
            }),
            item(3, { state: 'not_ready', stateChangedAt: iso(T0 - 300) }),
            item(5, { stateChangedAt: iso(T0 - 50), priorityName: 'low', priorityValue: 200 }),
            item(7, {
              state: 'testing',
              stateChangedAt: iso(T0 + 45),
              priorityName: 'high',
              priorityValue: 10,
            }),
          ],
        },
        submitted: lookups1,
      },
      () => {
        vi.setSystemTime((T0 + 60) * 1000);
      },
    );
    const s1 = await afterPolls();
    const flow = (s: Sample[]) => ({
      prs: byLabels(s, 'trunk_merge_queue_pull_requests', 'state', 'priority'),
      blocked: byLabels(s, 'trunk_merge_queue_pull_requests_blocked', 'reason'),
      state: byLabels(s, 'trunk_merge_queue_state', 'state'),
      exited: byLabels(s, 'trunk_merge_queue_pull_requests_exited_total', 'outcome'),
      transitions: byLabels(s, 'trunk_merge_queue_state_transitions_total', 'from', 'to'),
      tiqSum: byLabels(s, 'trunk_merge_queue_time_in_queue_seconds_sum', 'outcome'),
      tiqCount: byLabels(s, 'trunk_merge_queue_time_in_queue_seconds_count', 'outcome'),
      tisSum: byLabels(s, 'trunk_merge_queue_time_in_state_seconds_sum', 'state'),
      tisCount: byLabels(s, 'trunk_merge_queue_time_in_state_seconds_count', 'state'),
      stateSeconds: byLabels(s, 'trunk_merge_queue_state_seconds_total', 'state'),
      lastMerge: byLabels(s, 'trunk_merge_queue_last_merge_timestamp_seconds'),
      repeated: byLabels(s, 'trunk_merge_queue_repeated_failures_total'),
      oldest: byLabels(s, 'trunk_merge_queue_oldest_state_change_timestamp_seconds', 'state'),
      oldestNumber: byLabels(s, 'trunk_merge_queue_oldest_pull_request_number', 'state'),
    });
    // #1 left merged at T0+30 (in queue since T0-600, testing all along: 630 s); #6 failed at T0+40
    // (pending since T0-400: 440 s); #4 cancelled at T0+20 (pending since T0-100: 120 s); #2 went
    // not_ready -> pending at T0+10 (not_ready since T0-1200: 1210 s). A minute running.
    expect(flow(s1)).toEqual({
      prs: {
        'not_ready/medium': 1,
        'pending/medium': 0,
        'testing/medium': 0,
        'tests_passed/medium': 0,
        'pending_failure/medium': 0,
        'pending/urgent': 1,
        'unknown/low': 1,
        'testing/high': 1,
      },
      blocked: { base_branch_mismatch: 1, not_mergeable: 0, impacted_targets_missing: 0 },
      state: { running: 0, paused: 1, draining: 0, switching_modes: 0 },
      exited: { merged: 1, failed: 1, cancelled: 1, unknown: 0 },
      transitions: {
        'not_ready/pending': 1,
        'testing/merged': 1,
        'pending/cancelled': 1,
        'pending/failed': 1,
      },
      tiqSum: { merged: 630, failed: 440, cancelled: 120 },
      tiqCount: { merged: 1, failed: 1, cancelled: 1 },
      tisSum: { not_ready: 1210, testing: 630, pending: 560 },
      tisCount: { not_ready: 1, testing: 1, pending: 2 },
      stateSeconds: { running: 60, paused: 0, draining: 0, switching_modes: 0 },
      lastMerge: { '': T0 + 30 },
      repeated: { '': 0 },
      oldest: { pending: T0 + 10, not_ready: T0 - 300, unknown: T0 - 50, testing: T0 + 45 },
      oldestNumber: { pending: 2, not_ready: 3, unknown: 5, testing: 7 },
    });

    // Step 2: running; #6 resubmitted (a new stay), #7 failed, #2 testing.
    const lookups2 = new Map([
      ...lookups1,
      [
        7,
        submitted(7, {
          state: 'failed',
          stateChangedAt: iso(T0 + 115),
          isCurrentlySubmittedToQueue: false,
        }),
      ],
    ]);
    lookups2.delete(6);
    fake.next(
      {
        queue: {
          ...queueSettings('running'),
          enqueuedPullRequests: [
            item(2, {
              state: 'testing',
              stateChangedAt: iso(T0 + 70),
              priorityName: 'urgent',
              priorityValue: 0,
            }),
            item(3, { state: 'not_ready', stateChangedAt: iso(T0 - 300) }),
            item(5, { stateChangedAt: iso(T0 - 50), priorityName: 'low', priorityValue: 200 }),
            item(6, { state: 'pending', stateChangedAt: iso(T0 + 100) }),
          ],
        },
        submitted: lookups2,
      },
      () => {
        vi.setSystemTime((T0 + 120) * 1000);
      },
    );
    const s2 = await afterPolls();
    // #7 failed at T0+115 (testing since T0+45: 70 s); #2 pending -> testing at T0+70 (60 s
    // pending); #6 is back, a new stay (no transition). A minute paused.
    expect(flow(s2)).toEqual({
      prs: {
        'not_ready/medium': 1,
        'pending/medium': 1,
        'testing/medium': 0,
        'tests_passed/medium': 0,
        'pending_failure/medium': 0,
        'testing/urgent': 1,
        'unknown/low': 1,
      },
      blocked: { base_branch_mismatch: 1, not_mergeable: 0, impacted_targets_missing: 0 },
      state: { running: 1, paused: 0, draining: 0, switching_modes: 0 },
      exited: { merged: 1, failed: 2, cancelled: 1, unknown: 0 },
      transitions: {
        'not_ready/pending': 1,
        'testing/merged': 1,
        'pending/cancelled': 1,
        'pending/failed': 1,
        'pending/testing': 1,
        'testing/failed': 1,
      },
      tiqSum: { merged: 630, failed: 510, cancelled: 120 },
      tiqCount: { merged: 1, failed: 2, cancelled: 1 },
      tisSum: { not_ready: 1210, testing: 700, pending: 620 },
      tisCount: { not_ready: 1, testing: 2, pending: 3 },
      stateSeconds: { running: 60, paused: 60, draining: 0, switching_modes: 0 },
      lastMerge: { '': T0 + 30 },
      repeated: { '': 0 },
      oldest: { testing: T0 + 70, not_ready: T0 - 300, unknown: T0 - 50, pending: T0 + 100 },
      oldestNumber: { testing: 2, not_ready: 3, unknown: 5, pending: 6 },
    });

    // Step 3: #6 fails again.
    const lookups3 = new Map([
      ...lookups2,
      [
        6,
        submitted(6, {
          state: 'failed',
          stateChangedAt: iso(T0 + 170),
          isCurrentlySubmittedToQueue: false,
        }),
      ],
    ]);
    fake.next(
      {
        queue: {
          ...queueSettings('running'),
          enqueuedPullRequests: [
            item(2, {
              state: 'testing',
              stateChangedAt: iso(T0 + 70),
              priorityName: 'urgent',
              priorityValue: 0,
            }),
            item(3, { state: 'not_ready', stateChangedAt: iso(T0 - 300) }),
            item(5, { stateChangedAt: iso(T0 - 50), priorityName: 'low', priorityValue: 200 }),
          ],
        },
        submitted: lookups3,
      },
      () => {
        vi.setSystemTime((T0 + 180) * 1000);
      },
    );
    const s3 = await afterPolls();
    // #6 fails again at T0+170 (pending since T0+100: 70 s), within a day of its failure at T0+40:
    // one repeated failure. A minute running.
    expect(flow(s3)).toEqual({
      prs: {
        'not_ready/medium': 1,
        'pending/medium': 0,
        'testing/medium': 0,
        'tests_passed/medium': 0,
        'pending_failure/medium': 0,
        'testing/urgent': 1,
        'unknown/low': 1,
      },
      blocked: { base_branch_mismatch: 1, not_mergeable: 0, impacted_targets_missing: 0 },
      state: { running: 1, paused: 0, draining: 0, switching_modes: 0 },
      exited: { merged: 1, failed: 3, cancelled: 1, unknown: 0 },
      transitions: {
        'not_ready/pending': 1,
        'testing/merged': 1,
        'pending/cancelled': 1,
        'pending/failed': 2,
        'pending/testing': 1,
        'testing/failed': 1,
      },
      tiqSum: { merged: 630, failed: 580, cancelled: 120 },
      tiqCount: { merged: 1, failed: 3, cancelled: 1 },
      tisSum: { not_ready: 1210, testing: 700, pending: 690 },
      tisCount: { not_ready: 1, testing: 2, pending: 4 },
      stateSeconds: { running: 120, paused: 60, draining: 0, switching_modes: 0 },
      lastMerge: { '': T0 + 30 },
      repeated: { '': 1 },
      oldest: { testing: T0 + 70, not_ready: T0 - 300, unknown: T0 - 50 },
      oldestNumber: { testing: 2, not_ready: 3, unknown: 5 },
    });
  });
});

function test(id: number, owners: unknown, quarantinedAt: number | undefined) {
  return {
    name: `test ${String(id)}`,
    parent: null,
    file: null,
    classname: null,
    codeowners: owners,
    ...(quarantinedAt === undefined ? {} : { quarantined_at: iso(quarantinedAt) }),
    status_last_updated_at: iso(T0 - 10),
    test_case_id: `case-${String(id)}`,
    variant: '',
    status: 'FLAKY',
    quarantine_setting: 'AUTO_QUARANTINE',
  };
}

describe('API v1 quarantine list', () => {
  it('walks pages while total_rows moves', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(T0 * 1000);
    const fake = await startScriptedV1();
    const day = 86_400;
    const rows1: Record<string, unknown>[] = [];
    for (let id = 0; id < 100; id++) {
      const owners =
        id < 60 ? ['@team-a'] : id < 90 ? ['@team-b', '@team-a'] : id < 99 ? [] : ['@team-c'];
      const at =
        id < 50
          ? T0 - 100 * day
          : id < 80
            ? T0 - 40 * day
            : id < 90
              ? T0 - 10 * day
              : id < 95
                ? T0 - 3 * day
                : T0 - 3600;
      rows1.push(test(id, owners, at));
    }
    const page = (rows: unknown[], total: number, next: string, index: number) => ({
      quarantined_tests: rows,
      page: {
        total_rows: total,
        total_pages: Math.ceil(total / 100),
        next_page_token: next,
        prev_page_token: index === 0 ? '' : `p${String(index - 1)}`,
        last_page_token: 'p1',
        page_index: index,
      },
    });
    fake.next(
      {
        quarantinePages: [
          page(rows1, 103, 'p1', 0),
          page(
            [
              test(100, ['@team-b'], T0 - 7200),
              test(101, ['@team-b'], T0 - 8 * day),
              test(99, ['@team-c'], T0 - 3600),
              test(103, ['@team-a'], undefined),
            ],
            104,
            '',
            1,
          ),
        ],
      },
      () => undefined,
    );
    const exporter = await scriptedExporter(
      fake.apiUrl,
      `  - repo: ${REPO.repo}\n    flakyTests: true`,
    );
    const s = await afterStep(exporter, fake, 'flaky-tests/list-quarantined-tests');
    const get = (name: string, ...labels: string[]) =>
      Object.fromEntries(
        select(s, name, REPO).map((x): [string, number] => [
          labels.map((l) => x.labels[l] ?? '').join('/'),
          x.value,
        ]),
      );
    // total_rows moved from 103 to 104 during the walk; the rows walked are 103 distinct tests
    // (#99 repeated on page 2, counted once). Which total_rows is "Total number of rows" the
    // documents do not settle: the exporter reports the first page's (docs/metrics.md).
    expect(get('trunk_flaky_tests_quarantined')).toEqual({ '': 103 });
    // "a test with two owners counts for each ... tests without owners ... as none".
    expect(get('trunk_flaky_tests_quarantined_by_codeowner', 'codeowner')).toEqual({
      '@team-a': 91,
      '@team-b': 32,
      '@team-c': 1,
      none: 9,
    });
    expect(get('trunk_flaky_tests_oldest_quarantine_timestamp_seconds')).toEqual({
      '': T0 - 100 * day,
    });
    expect(get('trunk_flaky_tests_quarantined_recently', 'window')).toEqual({ '1d': 6, '7d': 11 });
    expect(get('trunk_flaky_tests_quarantined_older_than', 'age')).toEqual({
      '7d': 91,
      '30d': 80,
      '90d': 50,
    });
    expect(get('trunk_exporter_target_up', 'kind')).toEqual({ flaky_tests: 1 });
    fake.next(
      {
        quarantinePages: [page([{ ...test(7, null, undefined), quarantined_at: null }], 1, '', 0)],
      },
      () => {
        vi.setSystemTime((T0 + 60) * 1000);
      },
    );
    const s2 = await afterStep(exporter, fake, 'flaky-tests/list-quarantined-tests');
    const get2 = (name: string, ...labels: string[]) =>
      Object.fromEntries(
        select(s2, name, REPO).map((x): [string, number] => [
          labels.map((l) => x.labels[l] ?? '').join('/'),
          x.value,
        ]),
      );
    // The list shrank to one test with `codeowners: null` and `quarantined_at: null`: owners gone
    // are gone, the oldest time absent, every window and age 0.
    expect({
      q: get2('trunk_flaky_tests_quarantined'),
      owners: get2('trunk_flaky_tests_quarantined_by_codeowner', 'codeowner'),
      oldest: get2('trunk_flaky_tests_oldest_quarantine_timestamp_seconds'),
      recent: get2('trunk_flaky_tests_quarantined_recently', 'window'),
      older: get2('trunk_flaky_tests_quarantined_older_than', 'age'),
    }).toEqual({
      q: { '': 1 },
      owners: { none: 1 },
      oldest: {},
      recent: { '1d': 0, '7d': 0 },
      older: { '7d': 0, '30d': 0, '90d': 0 },
    });
  });
});

describe('API v1 quarantine rows without an identifier', () => {
  it('counts every row of one page whose test_case_id is absent, null or empty', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(T0 * 1000);
    const fake = await startScriptedV1();
    const row = (id: number, owner: string, caseId: unknown) => {
      const rest: Record<string, unknown> = test(id, [owner], T0 - 3600);
      delete rest.test_case_id;
      return caseId === undefined ? rest : { ...rest, test_case_id: caseId };
    };
    // One page of four different tests (names 1 to 4), "total_rows ... Total number of rows" 4:
    // a single page repeats no row, so each counts for its owner.
    fake.next(
      {
        quarantinePages: [
          {
            quarantined_tests: [
              row(1, '@a', undefined),
              row(2, '@b', null),
              row(3, '@c', ''),
              row(4, '@d', ''),
            ],
            page: { total_rows: 4, total_pages: 1, next_page_token: '', page_index: 0 },
          },
        ],
      },
      () => undefined,
    );
    const exporter = await scriptedExporter(
      fake.apiUrl,
      `  - repo: ${REPO.repo}\n    flakyTests: true`,
    );
    const s = await afterStep(exporter, fake, 'flaky-tests/list-quarantined-tests');
    const get = (name: string, label: string) =>
      Object.fromEntries(
        select(s, name, REPO).map((x): [string, number] => [x.labels[label] ?? '', x.value]),
      );
    expect({
      owners: get('trunk_flaky_tests_quarantined_by_codeowner', 'codeowner'),
      recent: get('trunk_flaky_tests_quarantined_recently', 'window'),
    }).toEqual({
      owners: { '@a': 1, '@b': 1, '@c': 1, '@d': 1 },
      recent: { '1d': 4, '7d': 4 },
    });
  });
});

describe('API v1 odd shapes', () => {
  it('looks up again each poll a PR whose item has neither state nor a usable stateChangedAt', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(T0 * 1000);
    const fake = await startScriptedV1();
    // "when it is absent, the state comes from getSubmittedPullRequest": with no stateChangedAt
    // (#1 leaves it out, #2 sends null) nothing in the item says the state has moved since.
    const queue = {
      ...queueSettings('running'),
      enqueuedPullRequests: [
        item(1, {}),
        item(2, { stateChangedAt: null }),
        item(3, { stateChangedAt: iso(T0 - 100) }),
      ],
    };
    const lookups = (state: string, changedAt: number) =>
      new Map(
        [1, 2].map((n): [number, Record<string, unknown>] => [
          n,
          submitted(n, { state, stateChangedAt: iso(changedAt) }),
        ]),
      );
    fake.next(
      {
        queue,
        submitted: new Map([
          ...lookups('pending', T0 - 100),
          [3, submitted(3, { state: 'pending', stateChangedAt: iso(T0 - 100) })],
        ]),
      },
      () => undefined,
    );
    const exporter = await scriptedExporter(
      fake.apiUrl,
      `  - repo: ${QUEUE.repo}\n    branches: [main]`,
    );
    const states = (s: Sample[]) =>
      byLabels(s, 'trunk_merge_queue_pull_requests', 'state', 'priority');
    expect(states(await afterStep(exporter, fake, 'getQueue'))).toMatchObject({
      'pending/medium': 3,
      'testing/medium': 0,
    });
    // A second on (no recheck of an unchanged PR is due): #1 and #2 now testing by their lookups;
    // #3's item is unchanged, so its remembered pending stands.
    fake.next(
      {
        queue,
        submitted: new Map([
          ...lookups('testing', T0),
          [3, submitted(3, { state: 'pending', stateChangedAt: iso(T0 - 100) })],
        ]),
      },
      () => {
        vi.setSystemTime((T0 + 1) * 1000);
      },
    );
    expect(states(await afterStep(exporter, fake, 'getQueue'))).toMatchObject({
      'pending/medium': 1,
      'testing/medium': 2,
    });
  });

  it('reads nulls, absent states, both mergeability spellings and final states listed', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(T0 * 1000);
    const fake = await startScriptedV1();
    const notReady = (n: number, readiness: Record<string, unknown>) =>
      submitted(n, { state: 'not_ready', stateChangedAt: iso(T0 - 100), readiness });
    fake.next(
      {
        queue: {
          ...queueSettings('frozen'),
          testingTimeoutMinutes: null,
          enqueuedPullRequests: [
            item(1, {
              state: 'testing',
              stateChangedAt: '2026-05-28T22:20:00.5+02:00',
              priorityName: null,
              priorityValue: 10,
            }),
            item(2, { state: null, stateChangedAt: iso(T0 - 100) }),
            item(3, { state: 'not_ready', stateChangedAt: iso(T0 - 100) }),
            item(4, { state: 'merged', stateChangedAt: iso(T0 - 20) }),
            item(5, { stateChangedAt: iso(T0 - 100) }),
            item(8, { state: 'testing', stateChangedAt: iso(T0 - 100) }),
            item(9, { state: 'not_ready', stateChangedAt: iso(T0 - 100) }),
          ],
        },
        submitted: new Map([
          [
            2,
            notReady(2, {
              doesBaseBranchMatch: true,
              gitHubMergeability: 'mergeable',
              requiresImpactedTargets: true,
              hasImpactedTargets: true,
            }),
          ],
          [3, notReady(3, { doesBaseBranchMatch: true, hostMergeability: 'not_mergeable' })],
          [9, notReady(9, { doesBaseBranchMatch: true, gitHubMergeability: 'in_progress' })],
        ]),
      },
      () => undefined,
    );
    const exporter = await scriptedExporter(
      fake.apiUrl,
      `  - repo: ${QUEUE.repo}\n    branches: [main]`,
    );
    const afterPolls = () => afterStep(exporter, fake, 'getQueue');
    const flow = (s: Sample[]) => ({
      prs: byLabels(s, 'trunk_merge_queue_pull_requests', 'state', 'priority'),
      blocked: byLabels(s, 'trunk_merge_queue_pull_requests_blocked', 'reason'),
      state: byLabels(s, 'trunk_merge_queue_state', 'state'),
      timeout: byLabels(s, 'trunk_merge_queue_testing_timeout_seconds'),
      exited: byLabels(s, 'trunk_merge_queue_pull_requests_exited_total', 'outcome'),
      transitions: byLabels(s, 'trunk_merge_queue_state_transitions_total', 'from', 'to'),
      tiqSum: byLabels(s, 'trunk_merge_queue_time_in_queue_seconds_sum', 'outcome'),
      tisSum: byLabels(s, 'trunk_merge_queue_time_in_state_seconds_sum', 'state'),
      tisCount: byLabels(s, 'trunk_merge_queue_time_in_state_seconds_count', 'state'),
      stateSeconds: byLabels(s, 'trunk_merge_queue_state_seconds_total', 'state'),
      lastMerge: byLabels(s, 'trunk_merge_queue_last_merge_timestamp_seconds'),
      oldest: byLabels(s, 'trunk_merge_queue_oldest_state_change_timestamp_seconds', 'state'),
      oldestNumber: byLabels(s, 'trunk_merge_queue_oldest_pull_request_number', 'state'),
      up: byLabels(s, 'trunk_exporter_target_up'),
    });
    // #1 priorityName null (priorityValue 10): `unknown`, the name not inferred from the number;
    // #2 `state: null` takes its lookup's not_ready; #5's lookup 404s: left between the calls;
    // #4 listed merged; #3 hostMergeability not_mergeable, #9 gitHubMergeability in_progress.
    expect(flow(await afterPolls())).toMatchObject({
      prs: {
        'not_ready/medium': 3,
        'pending/medium': 0,
        'testing/medium': 1,
        'testing/unknown': 1,
        'merged/medium': 1,
      },
      blocked: { base_branch_mismatch: 0, not_mergeable: 2, impacted_targets_missing: 0 },
      state: { running: 0, paused: 0, draining: 0, switching_modes: 0, frozen: 1 },
      timeout: {},
      oldest: { testing: T0 - 359.5, not_ready: T0 - 100, merged: T0 - 20 },
      oldestNumber: { testing: 1, not_ready: 2, merged: 4 },
    });
    // Step 1: #4 gone (merged before we watched); #8 listed merged (no state change time move? it merged); #1 gone merged; #5 lookup now 404.
    fake.next(
      {
        queue: {
          ...queueSettings('running'),
          enqueuedPullRequests: [
            item(2, { state: null, stateChangedAt: iso(T0 - 100) }),
            item(3, { state: 'not_ready', stateChangedAt: iso(T0 - 100) }),
            item(8, { state: 'merged', stateChangedAt: iso(T0 + 30) }),
            item(9, { state: 'not_ready', stateChangedAt: iso(T0 + 20) }),
          ],
        },
        submitted: new Map([
          [1, submitted(1, { state: 'merged', stateChangedAt: iso(T0 + 10) })],
          [4, submitted(4, { state: 'merged', stateChangedAt: iso(T0 - 20) })],
          [
            2,
            notReady(2, {
              doesBaseBranchMatch: true,
              gitHubMergeability: 'mergeable',
              requiresImpactedTargets: true,
              hasImpactedTargets: true,
            }),
          ],
          [3, notReady(3, { doesBaseBranchMatch: true, hostMergeability: 'not_mergeable' })],
          [9, notReady(9, { doesBaseBranchMatch: true, gitHubMergeability: 'in_progress' })],
        ]),
      },
      () => {
        vi.setSystemTime((T0 + 60) * 1000);
      },
    );
    // #1 merged at T0+10 (369.5 s after its state change); #4, listed merged by the first poll,
    // left before the exporter watched: no exit, no merge; #8 listed merged at T0+30 (130 s
    // testing); #9 back in not_ready since T0+20: no transition.
    expect(flow(await afterPolls())).toMatchObject({
      exited: { merged: 1, failed: 0, cancelled: 0, unknown: 0 },
      transitions: { 'testing/merged': 2 },
      tiqSum: { merged: 369.5 },
      tisSum: { testing: 499.5 },
      tisCount: { testing: 2 },
      stateSeconds: { frozen: 60 },
      lastMerge: { '': T0 + 10 },
    });
    fake.next(
      {
        queue: {
          ...queueSettings('running'),
          enqueuedPullRequests: [
            item(2, { state: null, stateChangedAt: iso(T0 - 100) }),
            item(3, { state: 'not_ready', stateChangedAt: iso(T0 - 100) }),
          ],
        },
        submitted: new Map([
          [8, submitted(8, { state: 'merged', stateChangedAt: iso(T0 + 30) })],
          [9, submitted(9, { state: 'cancelled', stateChangedAt: iso(T0 + 90) })],
          [
            2,
            notReady(2, {
              doesBaseBranchMatch: true,
              gitHubMergeability: 'mergeable',
              requiresImpactedTargets: true,
              hasImpactedTargets: true,
            }),
          ],
          [3, notReady(3, { doesBaseBranchMatch: true, hostMergeability: 'not_mergeable' })],
        ]),
      },
      () => {
        vi.setSystemTime((T0 + 120) * 1000);
      },
    );
    // #8 gone: its exit counts once (its transition counted when listed merged), 130 s in queue;
    // #9 cancelled at T0+90: 190 s in queue, 70 s in not_ready since it re-entered it.
    expect(flow(await afterPolls())).toMatchObject({
      exited: { merged: 2, failed: 0, cancelled: 1, unknown: 0 },
      transitions: { 'testing/merged': 2, 'not_ready/cancelled': 1 },
      tiqSum: { merged: 499.5, cancelled: 190 },
      tisSum: { testing: 499.5, not_ready: 70 },
      stateSeconds: { frozen: 60, running: 60 },
      lastMerge: { '': T0 + 30 },
    });
  });
});
