// API v2 as Trunk's published definition lets it answer, each shape a fixture file named for what
// it pins (test/trunk/fixtures/v2/), served by a fake organization on loopback to a real exporter
// that holds only an API key: null hosts and names in another letter case, repository lookups that
// fail, organization-wide lists that fail, repositories with tests and no merge queue, the test
// list's former path, the readiness signal list rows leave out, queue-entry states Trunk adds,
// empty pages with a cursor, an apiUrl ending in /v2, and a resubmitted entry's createdAt.
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_EXIT_LOOKUP_ATTEMPTS } from '../src/snapshot/queueFlowTypes.js';
import { select, sum, type Sample } from './support/exposition.js';
import {
  anomalyLines,
  configYaml,
  startTestExporter,
  type ExporterUnderTest,
} from './support/exporterHarness.js';
import {
  fixtureAt,
  pageAt,
  rowsAt,
  startFakeV2,
  type EntryRow,
  type FakeV2,
  type FixturePage,
} from './support/fakeTrunkV2.js';
import { cleanUp } from './trunk/harness.js';

afterEach(cleanUp);

const API_KEY = 'trunk_v2_answers-test-key';
const WEB_ID = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const API_ID = '0b7a8f1e-3c2d-4e5f-9a8b-7c6d5e4f3a2b';
const TOOLS_ID = '5d4c3b2a-1f0e-4a1b-8c9d-0e1f2a3b4c5d';
const DOCS_ID = '9f8e7d6c-5b4a-4c3d-8e2f-1a0b9c8d7e6f';
const WEB_QUEUE = 'xK9mP2nQ';

const REPOSITORIES = {
  [WEB_ID]: fixtureAt('repository-on-the-providers-default-host.json'),
  [API_ID]: fixtureAt('repository-on-a-self-hosted-gitlab.json'),
  [TOOLS_ID]: fixtureAt('repository-of-an-unknown-provider-named-by-its-url.json'),
  [DOCS_ID]: fixtureAt('repository-without-a-merge-queue.json'),
};

/** An exporter with only an API key, polling `fake`. */
function keyOnlyExporter(
  fake: FakeV2,
  targets: string,
  options: { polling?: string; discovery?: string; apiUrl?: string } = {},
): Promise<ExporterUnderTest> {
  let yaml = configYaml({
    apiUrl: options.apiUrl ?? fake.origin,
    token: null,
    apiKey: API_KEY,
    targets,
    polling:
      options.polling ?? '  mergeQueueIntervalSeconds: 0.2\n  flakyTestsIntervalSeconds: 0.2',
  });
  if (options.discovery !== undefined) {
    yaml = yaml.replace('targets:\n', `discovery:\n${options.discovery}targets:\n`);
  }
  return startTestExporter(yaml);
}

/** Targets lines for repositories with flaky tests and no merge queue. */
function flakyTestsOf(...repos: string[]): string {
  return repos.map((repo) => `  - repo: ${repo}\n    flakyTests: true`).join('\n');
}

function value(samples: readonly Sample[], name: string, labels: Record<string, string>) {
  const found = select(samples, name, labels);
  return found.length === 1 ? found[0]?.value : undefined;
}

const up = (samples: readonly Sample[], labels: Record<string, string>) =>
  value(samples, 'trunk_exporter_target_up', labels) === 1;

const WEB_MAIN = { repo: 'github.com/acme/web', branch: 'main' };
const API_MAIN = { repo: 'github.com/acme/api', branch: 'main' };

/**
 * The page of an exporter polling the main queues of github.com/acme/web (its entries three PRs)
 * and github.com/acme/api, listed in the fixture `queues`, once both are up.
 */
async function pageOfWebAndApiQueues(queues: string): Promise<Sample[]> {
  const fake = await startFakeV2({
    queues: pageAt(queues),
    entries: {
      [WEB_QUEUE]: rowsAt('pull-requests-not-ready-without-the-impacted-targets-signal.json'),
    },
  });
  const exporter = await keyOnlyExporter(
    fake,
    '  - repo: github.com/acme/web\n    branches: [main]\n  - repo: github.com/acme/api\n    branches: [main]',
  );
  return exporter.waitFor(
    (current) => sum(current, 'trunk_exporter_target_up', { kind: 'merge_queue' }) === 2,
    'both queues up',
  );
}

/** The page of an exporter polling only github.com/acme/web's main queue, whose entries are `entries`, once it is up. */
async function pageOfWebQueue(entries: EntryRow[]): Promise<Sample[]> {
  const fake = await startFakeV2({
    queues: pageAt('merge-queues-of-an-organization.json'),
    entries: { [WEB_QUEUE]: entries },
  });
  const exporter = await keyOnlyExporter(
    fake,
    '  - repo: github.com/acme/web\n    branches: [main]',
  );
  return exporter.waitFor((current) => up(current, { kind: 'merge_queue' }), 'the queue up');
}

describe('API v2 answers through a real exporter', () => {
  it('names repositories as the providers do: a null host is the default host, a self-hosted one its own, else the host of the url; letter case aside; tests of no nameable repository are counted', async () => {
    const fake = await startFakeV2({
      tests: pageAt('tests-of-repositories-named-three-ways.json').data,
      repositories: REPOSITORIES,
    });
    const exporter = await keyOnlyExporter(
      fake,
      flakyTestsOf(
        'github.com/ACME/Web',
        'gitlab.acme.internal/platform/api',
        'git.example.org/tools/lint',
      ),
    );
    const samples = await exporter.waitFor(
      (current) => sum(current, 'trunk_exporter_target_up') === 3,
      'three quarantine lists up',
    );
    const quarantined = (repo: string) => value(samples, 'trunk_flaky_tests_quarantined', { repo });
    // The configured spelling names the series; Trunk's `acme/web` is the same repository.
    expect(quarantined('github.com/ACME/Web')).toBe(3);
    expect(quarantined('gitlab.acme.internal/platform/api')).toBe(2);
    expect(quarantined('git.example.org/tools/lint')).toBe(1);
    expect(
      value(samples, 'trunk_exporter_api_anomalies_total', {
        endpoint: 'v2/tests',
        kind: 'unnamed_repository',
      }),
    ).toBeGreaterThanOrEqual(2);
    // And a warn line says so, as for any odd answer (operations.md, "Logs and signals").
    expect(await anomalyLines(exporter, 'unnamed_repository')).toEqual([
      expect.objectContaining({ level: 40, endpoint: 'v2/tests', repo: '(organization)' }),
    ]);
    // Each id named once; the nil UUID of uploads without a repository is never looked up.
    expect(
      fake
        .requestsTo(/^\/v2\/repositories\//)
        .map((r) => r.url)
        .sort(),
    ).toEqual([WEB_ID, API_ID, TOOLS_ID].map((id) => `/v2/repositories/${id}`).sort());
  });

  it('looks a repository up again on the next read when its lookup failed; meanwhile a target not yet named fails rather than read 0', async () => {
    const fake = await startFakeV2({
      tests: pageAt('tests-of-repositories-named-three-ways.json').data,
      repositories: REPOSITORIES,
    });
    fake.fail(new RegExp(`^/v2/repositories/${API_ID}$`), 400 + 100);
    const exporter = await keyOnlyExporter(
      fake,
      flakyTestsOf('github.com/acme/web', 'gitlab.acme.internal/platform/api'),
      { polling: '  mergeQueueIntervalSeconds: 0.3\n  flakyTestsIntervalSeconds: 0.3' },
    );
    const web = { kind: 'flaky_tests', repo: 'github.com/acme/web' };
    const gitlab = { kind: 'flaky_tests', repo: 'gitlab.acme.internal/platform/api' };
    const failing = await exporter.waitFor(
      (current) => up(current, web) && value(current, 'trunk_exporter_target_up', gitlab) === 0,
      'the named repository up, the other down',
    );
    expect(value(failing, 'trunk_flaky_tests_quarantined', { repo: 'github.com/acme/web' })).toBe(
      3,
    );
    expect(select(failing, 'trunk_flaky_tests_quarantined', { repo: gitlab.repo })).toEqual([]);
    expect(exporter.logs()).toContain("repository id(s) of the organization's");
    fake.recover();
    const recovered = await exporter.waitFor(
      (current) => up(current, gitlab),
      'the repository named on a later read',
    );
    expect(value(recovered, 'trunk_flaky_tests_quarantined', { repo: gitlab.repo })).toBe(2);
    // The named id is never looked up again; the failed one on each read until it answers.
    expect(fake.requestsTo(new RegExp(`^/v2/repositories/${WEB_ID}$`))).toHaveLength(1);
    expect(fake.requestsTo(new RegExp(`^/v2/repositories/${API_ID}$`)).length).toBeGreaterThan(1);
  });

  it('reads a failing list of queues at most once per interval however many queues share it, and is up again once it answers', async () => {
    const fake = await startFakeV2({
      queues: pageAt('merge-queues-of-an-organization.json'),
    });
    const exporter = await keyOnlyExporter(
      fake,
      [
        '  - repo: github.com/acme/web',
        '    branches: [main]',
        '  - repo: github.com/acme/api',
        '    branches: [main, release]',
      ].join('\n'),
      {
        polling:
          '  mergeQueueIntervalSeconds: 0.5\n  flakyTestsIntervalSeconds: 600\n  staleAfterSeconds: 1',
      },
    );
    await exporter.waitFor(
      (current) => sum(current, 'trunk_exporter_target_up', { kind: 'merge_queue' }) === 3,
      'three queues up',
    );
    // 400 is not retried: each read is one request.
    fake.fail(/^\/v2\/merge-queues$/, 400);
    const failedFrom = fake.requests.length;
    const failingSince = Date.now();
    // Polls go on with the last list until it is older than staleAfterSeconds, then fail.
    await exporter.waitFor(
      (current) => sum(current, 'trunk_exporter_target_up', { kind: 'merge_queue' }) === 0,
      'three queues down',
    );
    const failingFor = (Date.now() - failingSince) / 1000;
    const reads = fake.requests
      .slice(failedFrom)
      .filter((request) => request.url.startsWith('/v2/merge-queues?')).length;
    // Three queues polled every 0.5 s would ask six times a second; shared, at most one read per interval.
    expect(reads).toBeGreaterThan(0);
    expect(reads).toBeLessThanOrEqual(failingFor / 0.5 + 1);
    fake.recover();
    await exporter.waitFor(
      (current) => sum(current, 'trunk_exporter_target_up', { kind: 'merge_queue' }) === 3,
      'three queues up again',
    );
  });

  it('reads a failing list of tests at most once per interval however many repositories share it', async () => {
    const fake = await startFakeV2({
      tests: pageAt('tests-of-repositories-named-three-ways.json').data,
      repositories: REPOSITORIES,
    });
    fake.fail(/^\/v2\/tests$/, 500);
    const failingSince = Date.now();
    const exporter = await keyOnlyExporter(
      fake,
      flakyTestsOf(
        'github.com/acme/web',
        'gitlab.acme.internal/platform/api',
        'git.example.org/tools/lint',
      ),
      { polling: '  mergeQueueIntervalSeconds: 600\n  flakyTestsIntervalSeconds: 0.5' },
    );
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const counts = ['quarantineState=quarantined', 'status=flaky%2Cbroken'].map(
      (list) =>
        [
          list,
          fake.requestsTo(/^\/v2\/tests$/).filter((request) => request.url.includes(list)).length,
        ] as const,
    );
    // Measured after counting: a busy machine's 3 s timer may fire late, and the reads go on.
    const failingFor = (Date.now() - failingSince) / 1000;
    // 500 is retried within the poll's interval: at most 4 attempts a read, one read per interval,
    // for each of the two lists (quarantined; flaky and broken).
    for (const [list, requests] of counts) {
      expect(requests, list).toBeGreaterThan(0);
      expect(requests, list).toBeLessThanOrEqual((failingFor / 0.5 + 1) * 4);
    }
    expect(sum(await exporter.samples(), 'trunk_exporter_target_up', { kind: 'flaky_tests' })).toBe(
      0,
    );
    fake.recover();
    await exporter.waitFor(
      (current) => sum(current, 'trunk_exporter_target_up', { kind: 'flaky_tests' }) === 3,
      'three quarantine lists up',
    );
  });

  it('discovers a repository with tests and no merge queue from the test list, beside the queues', async () => {
    const fake = await startFakeV2({
      queues: pageAt('merge-queues-of-an-organization.json'),
      tests: pageAt('tests-of-a-repository-without-a-merge-queue.json').data,
      repositories: REPOSITORIES,
    });
    const exporter = await keyOnlyExporter(fake, '  []', {
      discovery: '  enabled: true\n  intervalSeconds: 0.2\n',
    });
    const samples = await exporter.waitFor(
      (current) =>
        ['github.com/acme/docs', 'github.com/Acme/Web', 'github.com/acme/api'].every(
          (repo) => value(current, 'trunk_flaky_tests_quarantined', { repo }) !== undefined,
        ),
      'the quarantine lists of the three repositories',
    );
    expect(value(samples, 'trunk_flaky_tests_quarantined', { repo: 'github.com/acme/docs' })).toBe(
      2,
    );
    // acme/web is one repository whether Trunk spells it Acme/Web (its queue) or acme/web (its id).
    expect(value(samples, 'trunk_flaky_tests_quarantined', { repo: 'github.com/Acme/Web' })).toBe(
      1,
    );
    expect(
      select(samples, 'trunk_flaky_tests_quarantined', { repo: 'github.com/acme/web' }),
    ).toEqual([]);
    // acme/api has queues and no tests listed: discovered with its quarantine list at 0.
    expect(value(samples, 'trunk_flaky_tests_quarantined', { repo: 'github.com/acme/api' })).toBe(
      0,
    );
    expect(value(samples, 'trunk_exporter_discovered_targets', { kind: 'flaky_tests' })).toBe(3);
    expect(select(samples, 'trunk_merge_queue_state', { repo: 'github.com/acme/docs' })).toEqual(
      [],
    );
  });

  it('reads the test list at /v2/test-cases after a 404 at /v2/tests, and keeps to that path', async () => {
    const fake = await startFakeV2({
      tests: pageAt('tests-of-repositories-named-three-ways.json').data,
      repositories: REPOSITORIES,
      testListPath: 'test-cases',
    });
    const exporter = await keyOnlyExporter(fake, flakyTestsOf('github.com/acme/web'), {
      polling: '  mergeQueueIntervalSeconds: 600\n  flakyTestsIntervalSeconds: 0.2',
    });
    const samples = await exporter.waitFor(
      (current) => up(current, { kind: 'flaky_tests' }),
      'the quarantine list up',
    );
    expect(value(samples, 'trunk_flaky_tests_quarantined', { repo: 'github.com/acme/web' })).toBe(
      3,
    );
    await exporter.waitFor(
      () => fake.requestsTo(/^\/v2\/test-cases$/).length >= 3,
      'three reads at the former path',
    );
    // Its two lists (quarantined; flaky and broken) asked /v2/tests at most once each, at first.
    expect(fake.requestsTo(/^\/v2\/tests$/).length).toBeLessThanOrEqual(2);
  });

  it('exports no impacted_targets_missing for a queue read through v2, whose list rows cannot tell it', async () => {
    const samples = await pageOfWebQueue(
      rowsAt('pull-requests-not-ready-without-the-impacted-targets-signal.json'),
    );
    expect(
      select(samples, 'trunk_merge_queue_pull_requests_blocked').map((sample) => [
        sample.labels.reason,
        sample.value,
      ]),
    ).toEqual([
      ['base_branch_mismatch', 1],
      ['not_mergeable', 1],
    ]);
  });

  it('pull-requests-numbered-zero-and-below.json: a pull request numbered 0 or -7 is left out of the counts and counted as invalid_item; the queue and its other pull requests are read', async () => {
    // A pull request is submitted with a "number" of "exclusiveMinimum": 0 (SubmitPullRequestRequest),
    // and a testing result names it by a pullRequestNumber of "exclusiveMinimum": 0.
    const samples = await pageOfWebQueue(rowsAt('pull-requests-numbered-zero-and-below.json'));
    const web = { repo: 'github.com/acme/web', branch: 'main' };
    // 41 (testing) and 42 (pending) stay; 0 (testing) and -7 (pending) are out.
    expect(sum(samples, 'trunk_merge_queue_pull_requests', web)).toBe(2);
    expect(sum(samples, 'trunk_merge_queue_pull_requests', { ...web, state: 'testing' })).toBe(1);
    expect(sum(samples, 'trunk_merge_queue_pull_requests', { ...web, state: 'pending' })).toBe(1);
    // Two per read of the live entries, however many reads were counted.
    const unusable = sum(samples, 'trunk_exporter_api_anomalies_total', {
      endpoint: 'v2/merge-queues/{id}/pull-requests',
      kind: 'invalid_item',
    });
    expect(unusable).toBeGreaterThan(0);
    expect(unusable % 2).toBe(0);
  });

  it('merge-queues-with-settings-outside-their-documented-ranges.json: a setting that is a fraction or below its documented floor is counted as invalid_field and not exported; its queue is read, and another queue at the floors and above the bounds a setting is written with is exported whole', async () => {
    // MergeQueueConfig: each setting an "integer", its floor in its description ("`0` means
    // bisection gets no dedicated capacity", "`0` disables this", "At least 1", "`0` means never
    // wait", "`0` means no timeout"). web/main: concurrency -3, bisectionConcurrency -1,
    // pendingFailureDepth 1.5, batchingMaxWaitTimeMinutes -1, batchingMinSize 0 (five out),
    // testingTimeoutMinutes 60 (in). api/main: every setting at its floor or above, concurrency
    // 5000 (UpdateMergeQueueConfigRequest writes at most 1000; the answer allows any integer).
    const samples = await pageOfWebAndApiQueues(
      'merge-queues-with-settings-outside-their-documented-ranges.json',
    );
    const setting = (name: string, labels: Record<string, string>) =>
      value(samples, `trunk_merge_queue_${name}`, labels);
    // Five per read of the list of queues, however many reads were counted.
    const outOfRange = sum(samples, 'trunk_exporter_api_anomalies_total', {
      endpoint: 'v2/merge-queues',
      kind: 'invalid_field',
    });
    expect(outOfRange).toBeGreaterThan(0);
    expect(outOfRange % 5).toBe(0);
    expect(sum(samples, 'trunk_exporter_api_anomalies_total', { kind: 'invalid_item' })).toBe(0);
    for (const name of [
      'concurrency',
      'bisection_concurrency',
      'pending_failure_depth',
      'batching_max_wait_seconds',
      'batching_min_size',
    ]) {
      expect(select(samples, `trunk_merge_queue_${name}`, WEB_MAIN), name).toEqual([]);
    }
    expect(setting('testing_timeout_seconds', WEB_MAIN)).toBe(3600);
    expect(setting('required_statuses', WEB_MAIN)).toBe(1);
    expect(sum(samples, 'trunk_merge_queue_pull_requests', WEB_MAIN)).toBe(3);
    expect(setting('concurrency', API_MAIN)).toBe(5000);
    expect(setting('bisection_concurrency', API_MAIN)).toBe(0);
    expect(setting('pending_failure_depth', API_MAIN)).toBe(1000);
    expect(setting('batching_max_wait_seconds', API_MAIN)).toBe(604_800);
    expect(setting('batching_min_size', API_MAIN)).toBe(1);
    expect(setting('testing_timeout_seconds', API_MAIN)).toBe(0);
  });

  it('merge-queues-with-settings-of-the-wrong-type.json: a setting of another type than MergeQueueConfig gives is counted as invalid_field and its series left out; its queue is still listed and read', async () => {
    // MergeQueue requires `mode` (MergeQueueMode, a string enum); MergeQueueConfig requires each
    // setting, none nullable: concurrency, bisectionConcurrency, batchingMinSize,
    // testingTimeoutMinutes "integer"; canOptimisticallyMerge, allowBatching, areCommentsEnabled
    // "boolean"; requiredStatuses an "array" of "string"; optimizationMode a string enum.
    // web/main sends mode null, concurrency "eight", bisectionConcurrency null,
    // canOptimisticallyMerge "false", allowBatching null, batchingMinSize {"min": 2},
    // testingTimeoutMinutes "60", areCommentsEnabled 1, requiredStatuses ["ci/build", 7],
    // optimizationMode 0: ten fields. Of their type: pendingFailureDepth 2,
    // batchingMaxWaitTimeMinutes 10, createsPrsForTestingBranches false, areCommandsEnabled and
    // isStatusCheckEnabled true, directMergeMode "always", mergeMethod "squash". api/main is whole.
    const samples = await pageOfWebAndApiQueues(
      'merge-queues-with-settings-of-the-wrong-type.json',
    );
    // Ten per read of the list of queues, however many reads were counted; no queue left out.
    const wrongType = sum(samples, 'trunk_exporter_api_anomalies_total', {
      endpoint: 'v2/merge-queues',
      kind: 'invalid_field',
    });
    expect(wrongType).toBeGreaterThan(0);
    expect(wrongType % 10).toBe(0);
    expect(sum(samples, 'trunk_exporter_api_anomalies_total', { kind: 'invalid_item' })).toBe(0);
    expect(select(samples, 'trunk_merge_queue_info', WEB_MAIN).map(({ labels }) => labels)).toEqual(
      [
        {
          ...WEB_MAIN,
          mode: 'unknown',
          merge_method: 'squash',
          direct_merge_mode: 'always',
          optimization_mode: 'unknown',
        },
      ],
    );
    expect(value(samples, 'trunk_merge_queue_pending_failure_depth', WEB_MAIN)).toBe(2);
    expect(value(samples, 'trunk_merge_queue_batching_max_wait_seconds', WEB_MAIN)).toBe(600);
    for (const absent of [
      'trunk_merge_queue_concurrency',
      'trunk_merge_queue_bisection_concurrency',
      'trunk_merge_queue_batching_min_size',
      'trunk_merge_queue_testing_timeout_seconds',
      'trunk_merge_queue_required_statuses',
    ]) {
      expect(select(samples, absent, WEB_MAIN), absent).toEqual([]);
    }
    expect(
      select(samples, 'trunk_merge_queue_setting_enabled', WEB_MAIN).map(
        ({ labels, value: on }) => [labels['setting'], on],
      ),
    ).toEqual([
      ['create_prs_for_testing_branches', 0],
      ['commands', 1],
      ['status_check', 1],
    ]);
    expect(sum(samples, 'trunk_merge_queue_pull_requests', WEB_MAIN)).toBe(3);
    expect(value(samples, 'trunk_merge_queue_concurrency', API_MAIN)).toBe(5000);
    expect(select(samples, 'trunk_merge_queue_setting_enabled', API_MAIN)).toHaveLength(6);
  });

  it('follows empty pages that still have a next cursor, and calls /v2 under an apiUrl that ends in /v2', async () => {
    const fake = await startFakeV2({
      queues: pageAt('merge-queues-of-an-organization.json'),
      pullRequestPages: fixtureAt('pull-requests-behind-two-empty-pages.json') as FixturePage[],
    });
    const exporter = await keyOnlyExporter(
      fake,
      '  - repo: github.com/acme/web\n    branches: [main]',
      {
        apiUrl: `${fake.origin}/v2`,
      },
    );
    const samples = await exporter.waitFor(
      (current) => up(current, { kind: 'merge_queue' }),
      'the queue up',
    );
    expect(sum(samples, 'trunk_merge_queue_pull_requests', { repo: 'github.com/acme/web' })).toBe(
      2,
    );
    // A priority left out (PR 32) counts as unknown, never drops the PR.
    expect(
      value(samples, 'trunk_merge_queue_pull_requests', {
        repo: 'github.com/acme/web',
        state: 'testing',
        priority: 'unknown',
      }),
    ).toBe(1);
    expect(fake.requests.filter((request) => !request.url.startsWith('/v2/merge-queues'))).toEqual(
      [],
    );
  });

  it('counts no exit for a PR that leaves the live entries for a state Trunk added, counts it as an anomaly, and goes on with its stay when it comes back', async () => {
    const fake = await startFakeV2({
      queues: pageAt('merge-queues-of-an-organization.json'),
      entries: {
        [WEB_QUEUE]: rowsAt('pull-request-in-a-queue-entry-state-trunk-added.json', Date.now()),
      },
    });
    const [entry] = fake.entries(WEB_QUEUE);
    if (entry === undefined) throw new Error('no entry');
    const exporter = await keyOnlyExporter(
      fake,
      '  - repo: github.com/acme/web\n    branches: [main]',
    );
    const queue = { repo: 'github.com/acme/web', branch: 'main' };
    const testing = { ...queue, state: 'testing', priority: 'medium' };
    await exporter.waitFor(
      (current) => value(current, 'trunk_merge_queue_pull_requests', testing) === 1,
      'the PR testing',
    );
    entry.queueEntry.state = 'awaitingMergeWindow';
    const unknownState = {
      endpoint: 'v2/merge-queues/{id}/pull-requests',
      kind: 'unknown_entry_state',
    };
    const away = await exporter.waitFor(
      (current) => value(current, 'trunk_exporter_api_anomalies_total', unknownState) === 1,
      `the PR counted as an anomaly after ${MAX_EXIT_LOOKUP_ATTEMPTS} reads`,
    );
    expect(sum(away, 'trunk_merge_queue_pull_requests_exited_total', queue)).toBe(0);
    entry.queueEntry.state = 'testsPassed';
    await exporter.waitFor(
      (current) =>
        sum(current, 'trunk_merge_queue_pull_requests', { ...queue, state: 'tests_passed' }) === 1,
      'the PR back',
    );
    entry.queueEntry.state = 'merged';
    entry.queueEntry.stateChangedAt = new Date().toISOString();
    const merged = await exporter.waitFor(
      (current) =>
        value(current, 'trunk_merge_queue_pull_requests_exited_total', {
          ...queue,
          outcome: 'merged',
        }) === 1,
      'the merge counted',
    );
    expect(sum(merged, 'trunk_merge_queue_pull_requests_exited_total', queue)).toBe(1);
    expect(value(merged, 'trunk_exporter_api_anomalies_total', unknownState)).toBe(1);
    // One stay from its first poll: in the queue all along, the state it was away in included.
    expect(
      value(merged, 'trunk_merge_queue_time_in_queue_seconds_count', {
        ...queue,
        outcome: 'merged',
      }),
    ).toBe(1);
  });

  it('takes no time in queue from the createdAt of an entry submitted again: that is its first submission', async () => {
    const fake = await startFakeV2({
      queues: pageAt('merge-queues-of-an-organization.json'),
    });
    const startedAt = Date.now();
    const exporter = await keyOnlyExporter(
      fake,
      '  - repo: github.com/acme/web\n    branches: [main]',
      {
        polling: '  mergeQueueIntervalSeconds: 0.1\n  flakyTestsIntervalSeconds: 600',
      },
    );
    const queue = { repo: 'github.com/acme/web', branch: 'main' };
    await exporter.waitFor((current) => up(current, { kind: 'merge_queue' }), 'the queue up');
    // Resubmitted and failed between two polls: no poll listed it; its createdAt is 3 days old.
    const concludedAt = Date.now();
    fake
      .entries(WEB_QUEUE)
      .push(...rowsAt('pull-request-concluded-after-a-resubmission.json', concludedAt));
    const samples = await exporter.waitFor(
      (current) =>
        value(current, 'trunk_merge_queue_pull_requests_exited_total', {
          ...queue,
          outcome: 'failed',
        }) === 1,
      'the exit counted by a periodic read',
    );
    const seconds = value(samples, 'trunk_merge_queue_time_in_queue_seconds_sum', {
      ...queue,
      outcome: 'failed',
    });
    // From this exporter's polls, not from the createdAt 3 days back: at most about one interval
    // before it concluded (0.1 s and the schedule's 10 % jitter), or since the exporter started.
    expect(seconds).toBeGreaterThanOrEqual(0);
    expect(seconds).toBeLessThanOrEqual(Math.max((concludedAt - startedAt) / 1000, 0.11));
  });

  it('counts the flaky and broken tests of a repository through v2 from the organization’s walk, by status, owner, age and window', async () => {
    const anchor = Date.now();
    const fake = await startFakeV2({
      tests: pageAt('tests-flaky-and-broken-besides-quarantined.json', anchor).data,
      repositories: REPOSITORIES,
    });
    const exporter = await keyOnlyExporter(fake, flakyTestsOf('github.com/acme/web'));
    const repo = 'github.com/acme/web';
    const samples = await exporter.waitFor(
      (current) => up(current, { kind: 'flaky_tests' }),
      'the repository up',
    );
    const series = (name: string) =>
      select(samples, name, { repo }).map((sample) => [
        Object.entries(sample.labels)
          .filter(([label]) => label !== 'repo')
          .map(([, labelValue]) => labelValue)
          .join(' '),
        sample.value,
      ]);
    expect(series('trunk_flaky_tests_unhealthy')).toEqual([
      ['flaky', 4],
      ['broken', 1],
    ]);
    expect(series('trunk_flaky_tests_unhealthy_by_codeowner')).toEqual([
      ['flaky @acme/api', 2],
      ['flaky @acme/web', 2],
      ['flaky none', 1],
      ['broken @acme/api', 1],
    ]);
    // The longest-flaky test's statusSince: two months before the anchor.
    expect(series('trunk_flaky_tests_oldest_unhealthy_timestamp_seconds')).toEqual([
      [
        'flaky',
        (anchor - Date.parse('2026-01-01T00:00:00Z') + Date.parse('2025-11-01T00:00:00Z')) / 1000,
      ],
      [
        'broken',
        (anchor - Date.parse('2026-01-01T00:00:00Z') + Date.parse('2025-12-30T00:00:00Z')) / 1000,
      ],
    ]);
    expect(series('trunk_flaky_tests_unhealthy_recently')).toEqual([
      ['flaky 1d', 1],
      ['flaky 7d', 2],
      ['broken 1d', 0],
      ['broken 7d', 1],
    ]);
    // The walk asks Trunk for the unhealthy statuses only.
    expect(
      fake
        .requestsTo(/^\/v2\/tests$/)
        .some((request) => request.url.includes('status=flaky%2Cbroken')),
    ).toBe(true);
  });
});
