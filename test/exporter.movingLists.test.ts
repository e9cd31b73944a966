// API v2 lists that move while they are walked, through a real exporter on loopback holding only an
// API key: a fake organization answers each walk with pages written here and in fixture files from
// Trunk's definition, the same row on two pages of one walk, or changed on the second. Paging:
// "Opaque cursor for the next page" over the organization as it is when each page is asked, so a
// row created, changed or moved between two pages shifts the rows after it: the later page is the
// newer read of a row listed twice. Every expected number is counted by hand from the pages.
import { afterEach, describe, expect, it } from 'vitest';
import { select, type Sample } from './support/exposition.js';
import { configYaml, startTestExporter } from './support/exporterHarness.js';
import { fixtureAt, startFakeV2, type FixturePage } from './support/fakeTrunkV2.js';
import {
  WEB_QUEUE as WEB_MAIN_QUEUE,
  entryRow,
  moveEntry,
  resubmitEntry,
  testingResult,
} from './support/queueEntryRows.js';
import { byCollection } from './support/testCollectionRows.js';
import {
  BATCH,
  CHECKS,
  DURATION,
  IN_PROGRESS,
  RUNS,
  series,
  webRunsExporter,
} from './support/verificationRunExporter.js';
import { run } from './support/verificationRunRows.js';
import { cleanUp } from './trunk/harness.js';

afterEach(cleanUp);

const API_KEY = 'trunk_v2_moving-lists-key';
const WEB = 'github.com/acme/web';
const WEB_ID = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const POLLING = '  mergeQueueIntervalSeconds: 0.2\n  flakyTestsIntervalSeconds: 0.2';
const WEB_QUEUE = 'xK9mP2nQ';

/** An exporter holding only the API key, polling `targets` of the fake at `origin`. */
function keyOnlyExporter(origin: string, targets: string) {
  return startTestExporter(
    configYaml({ apiUrl: origin, token: null, apiKey: API_KEY, targets, polling: POLLING }),
  );
}

/**
 * The series of `name` with `labels` on the page, each keyed by its values of `keys` joined by `/`;
 * those at 0 left out when `nonZero`.
 */
function seriesBy(
  samples: readonly Sample[],
  name: string,
  labels: Record<string, string>,
  keys: readonly string[],
  nonZero = false,
): Record<string, number> {
  return Object.fromEntries(
    select(samples, name, labels)
      .filter((sample) => !nonZero || sample.value > 0)
      .map((sample): [string, number] => [
        keys.map((key) => sample.labels[key] ?? '').join('/'),
        sample.value,
      ]),
  );
}

const WEB_MAIN = { repo: WEB, branch: 'main' };

/** acme/web main's live pull requests on the page, as `state/priority: count`. */
const webPullRequests = (samples: readonly Sample[]) =>
  seriesBy(samples, 'trunk_merge_queue_pull_requests', WEB_MAIN, ['state', 'priority'], true);

describe('lists that move while they are walked, through a real exporter', () => {
  it('test-collections-one-listed-again-after-its-first-upload.json: a collection listed on two pages is shown once, as the later page read it', async () => {
    // `GET /v2/test-collections`: "newest first". Page 1 lists Backend integration tests (1284
    // test cases, quarantining on) and Frontend unit tests (0: "a brand-new collection reports 0
    // until its first upload is processed", quarantining off). Before page 2 is asked, Frontend's
    // first upload is processed (310 test cases) and quarantining is turned on for it, and a
    // collection is created, which moves Frontend past the cursor: page 2 lists it again, then
    // Mobile UI tests (42, on). Three collections, Frontend's values those of the later read.
    const fake = await startFakeV2({
      scriptedPages: [
        {
          path: '/v2/test-collections',
          pages: fixtureAt(
            'test-collections-one-listed-again-after-its-first-upload.json',
          ) as FixturePage[],
        },
      ],
      repositories: { [WEB_ID]: fixtureAt('repository-on-the-providers-default-host.json') },
    });
    const exporter = await keyOnlyExporter(fake.origin, `  - repo: ${WEB}\n    flakyTests: true`);
    const samples = await exporter.waitFor(
      (current) => select(current, 'trunk_test_collection_test_cases').length > 0,
      'the collections read',
    );
    expect(byCollection(samples, 'trunk_test_collection_test_cases')).toEqual({
      'Backend integration tests': 1284,
      'Frontend unit tests': 310,
      'Mobile UI tests': 42,
    });
    expect(byCollection(samples, 'trunk_test_collection_quarantine_enabled')).toEqual({
      'Backend integration tests': 1,
      'Frontend unit tests': 1,
      'Mobile UI tests': 1,
    });
    // One collection listed twice is no two collections sharing a name.
    expect(exporter.logs()).not.toContain('test collections share a name');
  });

  it('pull-request-reprioritized-between-two-pages.json: a pull request listed on two pages with one stateChangedAt counts once, with what the later page says', async () => {
    // The live read (`state=notReady,pending,testing,testsPassed,pendingFailure`), "most recently
    // enqueued first". Page 1: PR 8 testing and PR 7 notReady, both `medium`. Before page 2 is
    // asked, PR 7 is made urgent (priorityValue 0, skipsTheLine), "an attribute-only write
    // (priority, batching) that records no transition": its stateChangedAt stays, its updatedAt
    // moves; and a PR enqueued meanwhile moves PR 7 past the cursor. Page 2: PR 7 again, urgent,
    // then PR 9 pending (medium). Three pull requests; PR 7 as the later read gives it.
    const fake = await startFakeV2({
      queues: fixtureAt('merge-queues-of-an-organization.json') as FixturePage,
      scriptedPages: [
        {
          path: `/v2/merge-queues/${WEB_QUEUE}/pull-requests`,
          query: 'state=notReady',
          pages: fixtureAt('pull-request-reprioritized-between-two-pages.json') as FixturePage[],
        },
      ],
    });
    const exporter = await keyOnlyExporter(fake.origin, `  - repo: ${WEB}\n    branches: [main]`);
    const samples = await exporter.waitFor(
      (current) => Object.keys(webPullRequests(current)).length > 0,
      'the live pull requests read',
    );
    expect(webPullRequests(samples)).toEqual({
      'testing/medium': 1,
      'not_ready/urgent': 1,
      'pending/medium': 1,
    });
  });

  it('tests-listed-again-after-a-row-their-filter-excludes.json: a test listed first in a state its walk excludes still counts from its later row, and a test listed twice counts once', async () => {
    // `GET /v2/tests`, walked twice: `quarantineState=quarantined` ("Filter on effective quarantine
    // state") and `status=flaky,broken` ("Comma-separated statuses to include"), all of acme/web.
    // Quarantine walk: page 1 lists moving_1 quarantined and moving_2 notQuarantined, a row the
    // walk's filter excludes; moving_2 is quarantined before page 2, which lists it again,
    // quarantined, then moving_3: three quarantined tests. Flaky and broken walk: page 1 lists
    // moving_4 flaky and moving_5 healthy (excluded); before page 2 moving_5 turns broken and
    // moving_4 too, and page 2 lists both: two unhealthy tests, moving_5 broken, and moving_4 once,
    // as its first row (flaky): the walk tallies page by page and cannot take a row back.
    const pages = fixtureAt('tests-listed-again-after-a-row-their-filter-excludes.json') as {
      quarantined: FixturePage[];
      flakyAndBroken: FixturePage[];
    };
    const fake = await startFakeV2({
      scriptedPages: [
        { path: '/v2/tests', query: 'quarantineState=quarantined', pages: pages.quarantined },
        { path: '/v2/tests', query: 'status=flaky', pages: pages.flakyAndBroken },
      ],
      repositories: { [WEB_ID]: fixtureAt('repository-on-the-providers-default-host.json') },
    });
    const exporter = await keyOnlyExporter(fake.origin, `  - repo: ${WEB}\n    flakyTests: true`);
    const samples = await exporter.waitFor(
      (current) =>
        select(current, 'trunk_exporter_target_up', { kind: 'flaky_tests', repo: WEB })[0]
          ?.value === 1,
      'acme/web read',
    );
    expect(select(samples, 'trunk_flaky_tests_quarantined', { repo: WEB })[0]?.value).toBe(3);
    expect(seriesBy(samples, 'trunk_flaky_tests_unhealthy', { repo: WEB }, ['status'])).toEqual({
      flaky: 1,
      broken: 1,
    });
  });

  it("counts a merge queue the organization's list gives on two pages once in the API budget", async () => {
    // `GET /v2/merge-queues`: 100 queues of acme/web, each on its own branch (release/0 to
    // release/99). Page 1 lists release/0 to release/59; a queue is created before page 2, which
    // moves release/59 past the cursor: page 2 lists it again, then release/60 to release/99. The
    // organization has 100 queues: one page of the list at 100 rows a page ("Ids never change").
    // The exporter discovers them and reads the list once per 600 s (the merge-queue interval and
    // discovery's alike): its budget for the list is 1 call per 600 s.
    const template = (fixtureAt('merge-queues-of-an-organization.json') as FixturePage).data[0] as
      Record<string, unknown> | undefined;
    const queue = (index: number) => ({
      ...template,
      id: `mq${String(index).padStart(6, '0')}`,
      targetBranch: `release/${String(index)}`,
    });
    const range = (from: number, to: number) =>
      Array.from({ length: to - from }, (_, offset) => queue(from + offset));
    const fake = await startFakeV2({
      scriptedPages: [
        {
          path: '/v2/merge-queues',
          pages: [
            { data: range(0, 60), nextCursor: 'AQEKcXVldWVz', hasMore: true },
            { data: range(59, 100), nextCursor: null, hasMore: false },
          ],
        },
      ],
    });
    const exporter = await startTestExporter(
      configYaml({ apiUrl: fake.origin, token: null, apiKey: API_KEY, targets: '  []' }).replace(
        'targets:\n',
        'discovery:\n  enabled: true\n  intervalSeconds: 600\ntargets:\n',
      ),
    );
    const budget = (samples: readonly Sample[]) =>
      select(samples, 'trunk_exporter_api_budget_requests_per_second', {
        endpoint: 'v2/merge-queues',
      })[0]?.value;
    const samples = await exporter.waitFor(
      (current) =>
        select(current, 'trunk_exporter_discovered_targets', { kind: 'merge_queue' })[0]?.value ===
        100,
      'the 100 queues discovered',
    );
    expect(budget(samples)).toBeCloseTo(1 / 600, 9);
  });

  it('counts a verification run listed on two pages of one read once, as concluded when the later page says so', async () => {
    // `GET /v2/merge-queues/{id}/verification-runs`, "newest first", while PR 7 tests. Page 1 lists
    // run X in progress (created 600 s before the exporter starts, testing #7) and run Y, failed
    // (created 300 s before, concluded 20 s after the start, testing #8 and #9, failing the
    // fixture's required e2e and unit). Before page 2, X succeeds (30 s after the start) and a run
    // created meanwhile moves Y past the cursor: page 2 lists Y again, then X, concluded. Every
    // read serves the same pages. Two runs, each counted once: X succeeded after 630 s with one
    // PR, Y failed after 320 s with two (`updatedAt`: "For a finished run this approximates when
    // it concluded"); none in progress.
    const start = Math.floor(Date.now() / 1000);
    const x = { id: 'run-x', createdAt: start - 600, tested: [7] };
    const y = { id: 'run-y', status: 'failed', createdAt: start - 300, updatedAt: start + 20 };
    const fake = await startFakeV2({
      queues: fixtureAt('merge-queues-of-an-organization.json') as FixturePage,
      entries: { [WEB_MAIN_QUEUE]: [entryRow(7, 'testing', start - 600)] },
      scriptedPages: [
        {
          path: `/v2/merge-queues/${WEB_MAIN_QUEUE}/verification-runs`,
          pages: [
            {
              data: [
                run({ ...x, status: 'inProgress', updatedAt: start - 600 }),
                run({ ...y, tested: [8, 9] }),
              ],
              nextCursor: 'AQEKcnVuczI',
              hasMore: true,
            },
            {
              data: [
                run({ ...y, tested: [8, 9] }),
                run({ ...x, status: 'succeeded', updatedAt: start + 30 }),
              ],
              nextCursor: null,
              hasMore: false,
            },
          ],
        },
      ],
    });
    const exporter = await webRunsExporter(fake);
    const samples = await exporter.waitFor(
      (current) => select(current, IN_PROGRESS, WEB_MAIN).length > 0,
      'the runs read',
    );
    expect(series(samples, RUNS, 'status,bisection')).toEqual({
      'succeeded/false': 1,
      'failed/false': 1,
      'cancelled/false': 0,
    });
    expect(series(samples, IN_PROGRESS, 'bisection')).toEqual({ false: 0, true: 0 });
    expect(series(samples, DURATION + '_sum', 'status')).toEqual({ succeeded: 630, failed: 320 });
    expect(series(samples, BATCH + '_count', 'bisection')).toEqual({ false: 2 });
    expect(series(samples, BATCH + '_sum', 'bisection')).toEqual({ false: 3 });
    expect(series(samples, CHECKS, 'check')).toEqual({ e2e: 1, unit: 1 });
  });

  it('testing-results-row-listed-twice-across-pages.json: a testing result on two pages of one read counts once', async () => {
    // `GET /v2/merge-queues/{id}/testing-results`: "A pull request appears once per attempt", "a
    // batched run appears once per pull request it tested". Page 1: #41 passed after 900 s and #42
    // failed after 900 s, which split its batch (`startedBisection`: "This failure caused the
    // pull request's batch to be split"); page 2 lists #42's attempt again (its endedAt written
    // without milliseconds: the same instant), then #43 cancelled after 300 s. The fixture's ends
    // are moved to 30, 20 and 10 s after the exporter's first poll, which only starts counting;
    // every read serves the same pages. Three attempts, one bisection started.
    const start = Math.floor(Date.now() / 1000);
    const iso = (seconds: number) => new Date((start + seconds) * 1000).toISOString();
    const [first, second] = fixtureAt('testing-results-row-listed-twice-across-pages.json') as [
      FixturePage,
      FixturePage,
    ];
    const [pr41, pr42] = first.data as object[];
    const [pr42Again, pr43] = second.data as object[];
    const pr7 = entryRow(7, 'testing', start - 600);
    const fake = await startFakeV2({
      queues: fixtureAt('merge-queues-of-an-organization.json') as FixturePage,
      entries: { [WEB_MAIN_QUEUE]: [pr7] },
      scriptedPages: [
        {
          path: `/v2/merge-queues/${WEB_MAIN_QUEUE}/testing-results`,
          pages: [
            {
              ...first,
              data: [
                { ...pr41, endedAt: iso(30) },
                { ...pr42, endedAt: iso(20) },
              ],
            },
            {
              ...second,
              data: [
                { ...pr42Again, endedAt: iso(20).replace('.000Z', 'Z') },
                { ...pr43, endedAt: iso(10) },
              ],
            },
          ],
        },
      ],
    });
    const exporter = await keyOnlyExporter(fake.origin, `  - repo: ${WEB}\n    branches: [main]`);
    await exporter.waitFor(
      (current) =>
        select(current, 'trunk_exporter_target_up', { kind: 'merge_queue', repo: WEB })[0]
          ?.value === 1,
      'the queue polled',
    );
    // #7 leaves testing: the next poll reads the testing results.
    moveEntry(pr7, 'pending', Date.now() / 1000);
    const attempts = (samples: readonly Sample[]) =>
      seriesBy(
        samples,
        'trunk_merge_queue_testing_duration_seconds_count',
        WEB_MAIN,
        ['outcome', 'bisection'],
        true,
      );
    const samples = await exporter.waitFor(
      (current) => Object.keys(attempts(current)).length > 0,
      'the testing results read',
    );
    expect(attempts(samples)).toEqual({
      'passed/false': 1,
      'failed/false': 1,
      'cancelled/false': 1,
    });
    expect(
      select(samples, 'trunk_merge_queue_testing_duration_seconds_sum', {
        repo: WEB,
        branch: 'main',
        outcome: 'failed',
      })[0]?.value,
    ).toBe(900);
    expect(
      select(samples, 'trunk_merge_queue_bisections_started_total', { repo: WEB })[0]?.value,
    ).toBe(1);
  });

  it('counts once the exit of a pull request that concluded and was submitted again between two polls, which the read of concluded entries lists twice', async () => {
    // `concludedAfter`: "an entry that failed in the window and was later resubmitted still
    // matches"; a testing result's `entryConclusion`: "How the queue entry this testing belonged
    // to ended". #7 tests and the exporter polls it. Before the next poll #7 merges, and #9, which
    // no poll saw, enters, fails (its testing result says the entry failed) and is submitted
    // again. The read of concluded entries the departure of #7 asks for lists #9 twice (the list
    // moved while it was paged): two exits, #7 merged and #9 failed, each once.
    const start = Date.now() / 1000;
    const pr7 = entryRow(7, 'testing', start - 600);
    const fake = await startFakeV2({
      queues: fixtureAt('merge-queues-of-an-organization.json') as FixturePage,
      entries: { [WEB_MAIN_QUEUE]: [pr7] },
    });
    const exporter = await keyOnlyExporter(fake.origin, `  - repo: ${WEB}\n    branches: [main]`);
    const exited = (samples: readonly Sample[]) =>
      seriesBy(samples, 'trunk_merge_queue_pull_requests_exited_total', WEB_MAIN, ['outcome']);
    await exporter.waitFor((current) => exited(current).merged === 0, 'the first poll');
    const failedAt = Date.now() / 1000;
    moveEntry(pr7, 'merged', failedAt);
    const pr9 = entryRow(9, 'testing', failedAt - 60);
    fake.testingResults(WEB_MAIN_QUEUE).push(testingResult(9, failedAt, 'failed', 'failed'));
    resubmitEntry(pr9, failedAt, failedAt + 0.5);
    fake.entries(WEB_MAIN_QUEUE).push(pr9, pr9);
    const samples = await exporter.waitFor(
      (current) => exited(current).merged === 1 && (exited(current).failed ?? 0) > 0,
      '#7 and #9 counted',
    );
    expect(exited(samples)).toEqual({ merged: 1, failed: 1, cancelled: 0, unknown: 0 });
  });
});
