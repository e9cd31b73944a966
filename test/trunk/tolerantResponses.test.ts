// Response shapes the real Trunk may send, each a fixture file named for what it pins, answered by
// a real local HTTP server to a real exporter (config → scheduler → TrunkClient → snapshot →
// /metrics). Only what a metric or the paging reads is required: an odd field costs nothing, an
// unusable item costs itself (counted as invalid_item), an unusable response costs the poll.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { configYaml, startTestExporter } from '../support/exporterHarness.js';
import { select, sum, type Sample } from '../support/exposition.js';
import { queueResponse, pullRequestResponse, quarantinePageResponse } from './fixtures.js';
import { cleanUp, sendJson, startApiServer } from './harness.js';

afterEach(cleanUp);

const REPO = 'github.com/acme/web';
const QUEUE = { repo: REPO, branch: 'main' };
const LIST = 'flaky-tests/list-quarantined-tests';

function fixtureText(name: string): string {
  return readFileSync(new URL(`fixtures/polling/${name}`, import.meta.url), 'utf8');
}

function fixture(name: string): unknown {
  return JSON.parse(fixtureText(name));
}

/** What the fake API answers; each endpoint not given answers its healthy shape. */
interface Answers {
  /** A string is sent as it is: JSON.stringify would write a number too large for a double as null. */
  readonly queue?: unknown;
  readonly pullRequest?: unknown;
  readonly page?: unknown;
}

/**
 * The page of an exporter after one poll of each of its two targets (the merge queue and the
 * quarantine list of one repository): intervals are long, so nothing moves while it is read.
 */
async function pageAfterOnePoll(answers: Answers): Promise<Sample[]> {
  const server = await startApiServer((req, res) => {
    if (req.url === '/v1/getQueue' && typeof answers.queue === 'string') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(answers.queue);
    } else if (req.url === '/v1/getQueue') sendJson(res, 200, answers.queue ?? queueResponse());
    else if (req.url === '/v1/getSubmittedPullRequest') {
      sendJson(res, 200, answers.pullRequest ?? pullRequestResponse());
    } else sendJson(res, 200, answers.page ?? quarantinePageResponse());
  });
  const subject = await startTestExporter(
    configYaml({
      apiUrl: server.apiUrl,
      targets: `  - repo: ${REPO}\n    branches: [main]\n    flakyTests: true`,
    }),
  );
  return subject.waitFor(
    (samples) => select(samples, 'trunk_exporter_target_up').length === 2,
    'one poll of each target',
  );
}

function anomalies(samples: readonly Sample[], endpoint: string, kind: string): number {
  return sum(samples, 'trunk_exporter_api_anomalies_total', { endpoint, kind });
}

function pullRequests(samples: readonly Sample[], labels: Record<string, string> = {}): number {
  return sum(samples, 'trunk_merge_queue_pull_requests', { ...QUEUE, ...labels });
}

function targetUp(samples: readonly Sample[], kind: 'merge_queue' | 'flaky_tests'): number {
  return sum(samples, 'trunk_exporter_target_up', { kind, repo: REPO });
}

function mismatches(samples: readonly Sample[], endpoint: string): number {
  return sum(samples, 'trunk_exporter_api_schema_mismatches_total', { endpoint });
}

/**
 * The queue's poll succeeded, `invalidFields` fields counted as invalid_field and each of the
 * `absent` families left out, and the queue's three PRs (11 and 13 testing, 12 pending) read.
 */
function expectQueueReadWithout(
  samples: readonly Sample[],
  invalidFields: number,
  absent: readonly string[],
): void {
  expect(targetUp(samples, 'merge_queue')).toBe(1);
  expect(mismatches(samples, 'getQueue')).toBe(0);
  expect(anomalies(samples, 'getQueue', 'invalid_field')).toBe(invalidFields);
  for (const name of absent) expect(select(samples, name, QUEUE), name).toEqual([]);
  expect(pullRequests(samples, { state: 'testing', priority: 'medium' })).toBe(2);
  expect(pullRequests(samples, { state: 'pending', priority: 'medium' })).toBe(1);
}

describe('getQueue answers read tolerantly', () => {
  it('queue-item-null-title.json: nulls in fields no metric reads cost nothing', async () => {
    const samples = await pageAfterOnePoll({ queue: fixture('queue-item-null-title.json') });

    expect(targetUp(samples, 'merge_queue')).toBe(1);
    expect(pullRequests(samples)).toBe(3);
    expect(pullRequests(samples, { state: 'testing', priority: 'medium' })).toBe(2);
    expect(pullRequests(samples, { state: 'pending', priority: 'medium' })).toBe(1);
    expect(anomalies(samples, 'getQueue', 'invalid_item')).toBe(0);
    expect(mismatches(samples, 'getQueue')).toBe(0);
  });

  it('queue-item-without-pr-number.json: each PR without a whole-number prNumber is left out and counted', async () => {
    const samples = await pageAfterOnePoll({ queue: fixture('queue-item-without-pr-number.json') });

    expect(targetUp(samples, 'merge_queue')).toBe(1);
    // Absent, null and "204": three items; 201 (testing) and 205 (pending) stay.
    expect(anomalies(samples, 'getQueue', 'invalid_item')).toBe(3);
    expect(pullRequests(samples)).toBe(2);
    expect(pullRequests(samples, { state: 'testing', priority: 'medium' })).toBe(1);
    expect(pullRequests(samples, { state: 'pending', priority: 'medium' })).toBe(1);
    expect(mismatches(samples, 'getQueue')).toBe(0);
  });

  it('queue-item-with-pr-number-zero-or-negative.json: a PR numbered 0 or below is left out and counted, as one without a whole-number prNumber is', async () => {
    // A pull request's number is above 0 in Trunk's definition ("exclusiveMinimum": 0 for the
    // number a pull request is submitted with, and for a testing result's pullRequestNumber).
    const samples = await pageAfterOnePoll({
      queue: fixture('queue-item-with-pr-number-zero-or-negative.json'),
    });

    expect(targetUp(samples, 'merge_queue')).toBe(1);
    // 0 (testing) and -7 (pending) out; 301 (testing) and 302 (pending) stay.
    expect(anomalies(samples, 'getQueue', 'invalid_item')).toBe(2);
    expect(pullRequests(samples)).toBe(2);
    expect(pullRequests(samples, { state: 'testing', priority: 'medium' })).toBe(1);
    expect(pullRequests(samples, { state: 'pending', priority: 'medium' })).toBe(1);
    expect(mismatches(samples, 'getQueue')).toBe(0);
  });

  it('queue-item-not-an-object.json: null, a string and an array among the items are left out and counted', async () => {
    const samples = await pageAfterOnePoll({ queue: fixture('queue-item-not-an-object.json') });

    expect(targetUp(samples, 'merge_queue')).toBe(1);
    expect(anomalies(samples, 'getQueue', 'invalid_item')).toBe(3);
    expect(pullRequests(samples)).toBe(2);
    expect(mismatches(samples, 'getQueue')).toBe(0);
  });

  it('queue-item-null-priority-and-timestamp.json: the PR counts under priority "unknown", its timestamp is not exported', async () => {
    const samples = await pageAfterOnePoll({
      queue: fixture('queue-item-null-priority-and-timestamp.json'),
    });

    expect(targetUp(samples, 'merge_queue')).toBe(1);
    expect(pullRequests(samples, { state: 'testing', priority: 'medium' })).toBe(1);
    expect(pullRequests(samples, { state: 'testing', priority: 'unknown' })).toBe(1);
    expect(pullRequests(samples, { state: 'pending', priority: 'unknown' })).toBe(1);
    // 401's timestamp is the only one left: testing's oldest, and no pending series at all.
    expect(
      select(samples, 'trunk_merge_queue_oldest_state_change_timestamp_seconds', QUEUE).map(
        (sample) => [sample.labels['state'], sample.value],
      ),
    ).toEqual([['testing', Date.parse('2026-01-01T10:01:00Z') / 1000]]);
    // A null and a number where a timestamp belongs.
    expect(anomalies(samples, 'getQueue', 'invalid_field')).toBe(2);
    expect(anomalies(samples, 'getQueue', 'invalid_item')).toBe(0);
  });

  it('queue-settings-outside-their-documented-ranges.json: each numeric setting that is a fraction or below its documented floor is counted as invalid_field and not exported; the rest of the queue is read', async () => {
    // The same settings as API v2's queue `config` (trunk-api-v2.md, "v1 → v2 mapping"): each an
    // "integer", its floor in its description. concurrency -1; testingTimeoutMinutes -5 ("`0`
    // means no timeout"); pendingFailureDepth 2.5; bisectionConcurrency 1e400 (past the largest
    // double); batchingMinSize 0 ("At least 1"); batchingMaxWaitTimeMinutes 20160, above the 10080
    // a setting may be written with, yet an integer the answer allows: kept.
    const samples = await pageAfterOnePoll({
      queue: fixtureText('queue-settings-outside-their-documented-ranges.json'),
    });

    expectQueueReadWithout(samples, 5, [
      'trunk_merge_queue_concurrency',
      'trunk_merge_queue_testing_timeout_seconds',
      'trunk_merge_queue_pending_failure_depth',
      'trunk_merge_queue_bisection_concurrency',
      'trunk_merge_queue_batching_min_size',
    ]);
    // 20160 minutes is 1209600 seconds.
    expect(sum(samples, 'trunk_merge_queue_batching_max_wait_seconds', QUEUE)).toBe(1_209_600);
    expect(sum(samples, 'trunk_merge_queue_required_statuses', QUEUE)).toBe(1);
    expect(sum(samples, 'trunk_merge_queue_setting_enabled', { ...QUEUE, setting: 'batch' })).toBe(
      1,
    );
  });

  it('queue-settings-of-the-wrong-type.json: each setting of another type than its definition gives is counted as invalid_field and its series left out; the rest of the queue is read', async () => {
    // trunk-api-v1.md 2.5: "All fields below are required in the response", each with its type:
    // concurrency, testingTimeoutMinutes, pendingFailureDepth, batchingMinSize "number"; mode,
    // optimizationMode "string enum"; canOptimisticallyMerge, createPrsForTestingBranches,
    // commandsEnabled "boolean"; requiredStatuses "string[]". The fixture sends concurrency
    // "eight", testingTimeoutMinutes null, mode 2, canOptimisticallyMerge "yes",
    // pendingFailureDepth {"value": 1}, batchingMinSize [2], createPrsForTestingBranches null,
    // commandsEnabled 1, requiredStatuses "ci/build", optimizationMode null: ten fields. The
    // others are of their type: batch true, batchingMaxWaitTimeMinutes 10, commentsEnabled true,
    // statusCheckEnabled false, bisectionConcurrency 2, directMergeMode "off", mergeMethod
    // "squash", and the queue's three PRs (11 and 13 testing, 12 pending).
    const samples = await pageAfterOnePoll({
      queue: fixture('queue-settings-of-the-wrong-type.json'),
    });

    expectQueueReadWithout(samples, 10, [
      'trunk_merge_queue_concurrency',
      'trunk_merge_queue_testing_timeout_seconds',
      'trunk_merge_queue_pending_failure_depth',
      'trunk_merge_queue_batching_min_size',
      'trunk_merge_queue_required_statuses',
    ]);
    // 10 minutes is 600 seconds.
    expect(sum(samples, 'trunk_merge_queue_batching_max_wait_seconds', QUEUE)).toBe(600);
    expect(sum(samples, 'trunk_merge_queue_bisection_concurrency', QUEUE)).toBe(2);
    expect(
      Object.fromEntries(
        select(samples, 'trunk_merge_queue_setting_enabled', QUEUE).map((sample) => [
          sample.labels['setting'],
          sample.value,
        ]),
      ),
    ).toEqual({ batch: 1, comments: 1, status_check: 0 });
    expect(select(samples, 'trunk_merge_queue_info', QUEUE).map((sample) => sample.labels)).toEqual(
      [
        {
          ...QUEUE,
          mode: 'unknown',
          merge_method: 'squash',
          direct_merge_mode: 'off',
          optimization_mode: 'unknown',
        },
      ],
    );
    expect(sum(samples, 'trunk_merge_queue_state', { ...QUEUE, state: 'running' })).toBe(1);
  });

  it.each([
    'queue-without-state.json',
    'queue-without-pull-request-list.json',
    // trunk-api-v1.md 2.5: "All fields below are required in the response"; nothing in Trunk's
    // words lets a setting be left out, so an answer without one is not the queue's.
    'queue-without-its-concurrency.json',
  ])('%s: a queue that cannot be used is a schema mismatch, the target down', async (name) => {
    const samples = await pageAfterOnePoll({ queue: fixture(name) });

    expect(targetUp(samples, 'merge_queue')).toBe(0);
    expect(mismatches(samples, 'getQueue')).toBe(1);
    expect(select(samples, 'trunk_merge_queue_pull_requests', QUEUE)).toEqual([]);
    // The other target of the same repository does not notice.
    expect(targetUp(samples, 'flaky_tests')).toBe(1);
  });
});

describe('getSubmittedPullRequest answers read tolerantly', () => {
  it('submitted-pull-request-null-fields.json: nulls cost nothing, the readiness signals present still count', async () => {
    const queue = queueResponse();
    const samples = await pageAfterOnePoll({
      queue,
      pullRequest: fixture('submitted-pull-request-null-fields.json'),
    });

    expect(targetUp(samples, 'merge_queue')).toBe(1);
    expect(mismatches(samples, 'getSubmittedPullRequest')).toBe(0);
    // The queue's one not_ready PR (13) is looked up: impacted targets required and missing.
    const blocked = select(samples, 'trunk_merge_queue_pull_requests_blocked', QUEUE);
    expect(
      Object.fromEntries(blocked.map((sample) => [sample.labels['reason'], sample.value])),
    ).toEqual({ base_branch_mismatch: 0, not_mergeable: 0, impacted_targets_missing: 1 });
  });
});

describe('list-quarantined-tests answers read tolerantly', () => {
  it('page-without-total-pages.json: only total_rows and next_page_token are needed', async () => {
    const samples = await pageAfterOnePoll({ page: fixture('page-without-total-pages.json') });

    expect(targetUp(samples, 'flaky_tests')).toBe(1);
    expect(sum(samples, 'trunk_flaky_tests_quarantined', { repo: REPO })).toBe(3);
    expect(
      sum(samples, 'trunk_flaky_tests_quarantined_by_codeowner', { codeowner: '@acme/web' }),
    ).toBe(2);
    expect(
      sum(samples, 'trunk_flaky_tests_quarantined_by_codeowner', { codeowner: '@acme/api' }),
    ).toBe(1);
    expect(mismatches(samples, LIST)).toBe(0);
  });

  it('page-last-without-next-page-token.json: a page without a next_page_token is the last one', async () => {
    const samples = await pageAfterOnePoll({
      page: fixture('page-last-without-next-page-token.json'),
    });

    expect(targetUp(samples, 'flaky_tests')).toBe(1);
    expect(sum(samples, 'trunk_flaky_tests_quarantined', { repo: REPO })).toBe(3);
    expect(mismatches(samples, LIST)).toBe(0);
  });

  it('page-null-total-rows-and-next-page-token.json: without a total the three tests listed are the count', async () => {
    const samples = await pageAfterOnePoll({
      page: fixture('page-null-total-rows-and-next-page-token.json'),
    });

    expect(targetUp(samples, 'flaky_tests')).toBe(1);
    expect(sum(samples, 'trunk_flaky_tests_quarantined', { repo: REPO })).toBe(3);
    expect(
      sum(samples, 'trunk_flaky_tests_quarantined_by_codeowner', { codeowner: '@acme/web' }),
    ).toBe(2);
    expect(mismatches(samples, LIST)).toBe(0);
  });

  it('page-empty-list-with-empty-values-left-out.json: an empty list whose page object is empty counts 0', async () => {
    const samples = await pageAfterOnePoll({
      page: fixture('page-empty-list-with-empty-values-left-out.json'),
    });

    expect(targetUp(samples, 'flaky_tests')).toBe(1);
    expect(sum(samples, 'trunk_flaky_tests_quarantined', { repo: REPO })).toBe(0);
    expect(select(samples, 'trunk_flaky_tests_quarantined', { repo: REPO })).toHaveLength(1);
    expect(mismatches(samples, LIST)).toBe(0);
  });

  it('quarantined-test-not-an-object.json: rows that are not objects are left out and counted', async () => {
    const samples = await pageAfterOnePoll({
      page: fixture('quarantined-test-not-an-object.json'),
    });

    expect(targetUp(samples, 'flaky_tests')).toBe(1);
    // null, "tc-2", 42 and an array.
    expect(anomalies(samples, LIST, 'invalid_item')).toBe(4);
    // The total is the API's own count; the per-owner counts are of the rows that could be read.
    expect(sum(samples, 'trunk_flaky_tests_quarantined', { repo: REPO })).toBe(6);
    expect(
      sum(samples, 'trunk_flaky_tests_quarantined_by_codeowner', { codeowner: '@acme/web' }),
    ).toBe(1);
    expect(
      sum(samples, 'trunk_flaky_tests_quarantined_by_codeowner', { codeowner: '@acme/api' }),
    ).toBe(1);
    expect(mismatches(samples, LIST)).toBe(0);
  });

  it('quarantined-test-null-parent.json: null parent/file/classname, unknown status and odd owners cost nothing', async () => {
    const samples = await pageAfterOnePoll({ page: fixture('quarantined-test-null-parent.json') });

    expect(targetUp(samples, 'flaky_tests')).toBe(1);
    const owners = select(samples, 'trunk_flaky_tests_quarantined_by_codeowner', { repo: REPO });
    // Row 2 has codeowners null (no owner); row 3 has a null and a number among its owners.
    expect(
      Object.fromEntries(owners.map((sample) => [sample.labels['codeowner'], sample.value])),
    ).toEqual({ '@acme/web': 1, '@acme/api': 1, none: 1 });
    // Row 3's quarantined_at has no time and no zone.
    expect(anomalies(samples, LIST, 'invalid_field')).toBe(1);
    expect(anomalies(samples, LIST, 'invalid_item')).toBe(0);
    expect(
      sum(samples, 'trunk_flaky_tests_oldest_quarantine_timestamp_seconds', { repo: REPO }),
    ).toBe(Date.parse('2025-12-02T00:00:00Z') / 1000);
    expect(mismatches(samples, LIST)).toBe(0);
  });

  it('page-without-list.json: a page without its list is a schema mismatch, the target down', async () => {
    const samples = await pageAfterOnePoll({ page: fixture('page-without-list.json') });

    expect(targetUp(samples, 'flaky_tests')).toBe(0);
    expect(mismatches(samples, LIST)).toBe(1);
    expect(select(samples, 'trunk_flaky_tests_quarantined', { repo: REPO })).toEqual([]);
    expect(targetUp(samples, 'merge_queue')).toBe(1);
  });
});
