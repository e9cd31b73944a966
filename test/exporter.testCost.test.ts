// What flaky tests cost, and the organization's test collections, through a real exporter holding
// an API key and reading a fake organization whose rows are written here by hand from Trunk's
// definition. `GET /v2/tests` `include`: "Set to `metrics` to embed each test's metrics for
// `period` in the same response, instead of fetching them per test." A row's `metrics`: "Returned
// only when `include=metrics` is set. Null when the test had no runs in `period`." Its
// `prsImpacted`: "Distinct pull requests that saw this test fail while it was unhealthy and not
// quarantined" — distinct per test, so a pull request two tests hit counts once for each.
// `GET /v2/test-collections`: "Lists the test collections in your organization, newest first";
// `testCaseCount`: "Distinct test cases seen in this collection"; `quarantineEnabled`: "Whether
// quarantining is turned on for this collection."
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { select, type Sample } from './support/exposition.js';
import { anomalyLines, configYaml, startTestExporter } from './support/exporterHarness.js';
import {
  fixtureAt,
  pageAt,
  startFakeV2,
  type FakeV2,
  type FixturePage,
} from './support/fakeTrunkV2.js';
import { byCollection, collectionRow } from './support/testCollectionRows.js';
import { cleanUp } from './trunk/harness.js';

afterEach(cleanUp);

const WEB = 'github.com/acme/web';
const WEB_ID = '7c9e6679-7425-40de-944b-e07fc1f90ae7';

interface Metrics {
  failureCount: number;
  runCount: number;
  prsImpacted: number;
}

/** A `TestCaseSummary` row of acme/web, shaped as the definition requires it. */
function testRow(name: string, status: string, metrics: Metrics | null): Record<string, unknown> {
  return {
    id: `test-${name}`,
    testCollectionId: 'aB3xY9kQ',
    repoId: WEB_ID,
    name,
    parentName: '',
    className: '',
    file: 'src/checkout.test.ts',
    target: '',
    variant: '',
    crossVariantId: null,
    codeowners: ['@acme/web'],
    status,
    statusSince: '2025-12-20T10:00:00.000Z',
    quarantineState: 'notQuarantined',
    labels: [],
    metrics:
      metrics === null
        ? null
        : {
            failureRate: metrics.failureCount / metrics.runCount,
            durationP95Ms: 1200,
            lastRunAt: '2025-12-31T10:00:00.000Z',
            lastFailureAt: '2025-12-31T09:00:00.000Z',
            ...metrics,
          },
  };
}

/**
 * acme/web's flaky and broken tests over the window: checkout and cart both failed on PR #7
 * (checkout on #8 too), so 2 + 1 = 3 pull requests impacted for the flaky ones; coupon had no runs
 * (null); payment is broken.
 */
const TESTS = [
  testRow('suite::checkout', 'flaky', { failureCount: 3, runCount: 40, prsImpacted: 2 }),
  testRow('suite::cart', 'flaky', { failureCount: 1, runCount: 10, prsImpacted: 1 }),
  testRow('suite::coupon', 'flaky', null),
  testRow('suite::payment', 'broken', { failureCount: 12, runCount: 12, prsImpacted: 5 }),
];

/** Newest first: a second "Backend integration tests", older, is left out (its name is taken). */
const COLLECTIONS = [
  collectionRow('aB3xY9kQ', 'Backend integration tests', 1284, true),
  collectionRow('Zq81LmNo', 'Frontend unit tests', 0, false),
  collectionRow('Old00001', 'Backend integration tests', 7, false),
];

/** A fake organization serving its own copy of TESTS (which a case may change) and COLLECTIONS. */
async function webOrganization(
  tests = structuredClone(TESTS),
  testCollections = COLLECTIONS,
): Promise<FakeV2> {
  return startFakeV2({
    tests,
    testCollections,
    repositories: { [WEB_ID]: fixtureAt('repository-on-the-providers-default-host.json') },
  });
}

function webExporter(fake: FakeV2, options: { polling?: string; reads?: string } = {}) {
  return startTestExporter(
    configYaml({
      apiUrl: fake.origin,
      token: null,
      apiKey: 'trunk_v2_test-cost-key',
      targets: `  - repo: ${WEB}\n    flakyTests: true`,
      ...options,
    }),
  );
}

const up = (samples: readonly Sample[]) =>
  select(samples, 'trunk_exporter_target_up', { kind: 'flaky_tests', repo: WEB })[0]?.value;

/** A cost family of acme/web as `status/window: value`. */
const cost = (samples: readonly Sample[], name: string): Record<string, number> =>
  Object.fromEntries(
    select(samples, name, { repo: WEB }).map((sample): [string, number] => [
      `${sample.labels.status ?? ''}/${sample.labels.window ?? ''}`,
      sample.value,
    ]),
  );

/** The query strings of the flaky-and-broken walks the fake saw. */
const unhealthyWalks = (fake: FakeV2) =>
  fake
    .requestsTo(/^\/v2\/tests$/)
    .map((request) => new URL(request.url, 'http://fake').searchParams)
    .filter((query) => query.get('status') === 'flaky,broken');

describe('flaky-test cost and test collections through a real exporter', () => {
  it('sums failed runs, runs and pull requests impacted per status over the window, a pull request two tests hit counting twice, and shows each collection once', async () => {
    const fake = await webOrganization();
    const exporter = await webExporter(fake);
    const samples = await exporter.waitFor((current) => up(current) === 1, 'acme/web read');
    expect(cost(samples, 'trunk_flaky_tests_failed_runs')).toEqual({
      'flaky/7d': 4,
      'broken/7d': 12,
    });
    expect(cost(samples, 'trunk_flaky_tests_runs')).toEqual({ 'flaky/7d': 50, 'broken/7d': 12 });
    expect(cost(samples, 'trunk_flaky_tests_pull_requests_impacted')).toEqual({
      'flaky/7d': 3,
      'broken/7d': 5,
    });
    // At no extra call: the one walk of the flaky and broken tests asks for the metrics.
    const walks = unhealthyWalks(fake);
    expect(walks).toHaveLength(1);
    expect(walks[0]?.get('include')).toBe('metrics');
    expect(walks[0]?.get('period')).toBe('7d');
    expect(byCollection(samples, 'trunk_test_collection_test_cases')).toEqual({
      'Backend integration tests': 1284,
      'Frontend unit tests': 0,
    });
    expect(byCollection(samples, 'trunk_test_collection_quarantine_enabled')).toEqual({
      'Backend integration tests': 1,
      'Frontend unit tests': 0,
    });
    // One page of collections, at the largest limit.
    const reads = fake.requestsTo(/^\/v2\/test-collections$/);
    expect(reads).toHaveLength(1);
    expect(reads[0]?.url).toContain('limit=100');
    expect(exporter.logs()).toContain('test collections share a name');
  });

  it('cuts a collection name too long for a label value, and reports it', async () => {
    // A collection's name is its owner's words (`name`, at least one character, no upper bound in
    // the definition); 300 characters would be carried by every page: the label keeps 199 and an
    // ellipsis.
    const long = `Backend ${'z'.repeat(292)}`;
    const fake = await webOrganization(structuredClone(TESTS), [
      collectionRow('Long0001', long, 3, true),
    ]);
    const exporter = await webExporter(fake);
    const samples = await exporter.waitFor(
      (current) => select(current, 'trunk_test_collection_test_cases').length === 1,
      'the collections read',
    );
    expect(byCollection(samples, 'trunk_test_collection_test_cases')).toEqual({
      [`Backend ${'z'.repeat(191)}…`]: 3,
    });
    expect(
      select(samples, 'trunk_exporter_api_anomalies_total', {
        endpoint: 'v2/test-collections',
        kind: 'invalid_field',
      })[0]?.value,
    ).toBe(1);
  });

  it('cuts a code owner too long for a label value, and reports it', async () => {
    // `codeowners` are the owners' own words; one of 300 characters would be carried by every
    // page: the label keeps 199 and an ellipsis.
    const long = `@acme/${'w'.repeat(294)}`;
    const tests = structuredClone(TESTS);
    for (const test of tests) test.codeowners = [long];
    const fake = await webOrganization(tests);
    const exporter = await webExporter(fake);
    const samples = await exporter.waitFor((current) => up(current) === 1, 'acme/web read');
    const owners = select(samples, 'trunk_flaky_tests_unhealthy_by_codeowner', { repo: WEB });
    expect(new Set(owners.map((sample) => sample.labels.codeowner))).toEqual(
      new Set([`@acme/${'w'.repeat(193)}…`]),
    );
    expect(
      select(samples, 'trunk_exporter_api_anomalies_total', {
        endpoint: 'v2/tests',
        kind: 'invalid_field',
      })[0]?.value,
    ).toBe(4);
  });

  it("reports each count of a test's metrics that is missing or no count, which adds nothing", async () => {
    // `TestCaseMetrics` requires failureCount, runCount and prsImpacted, each an integer: a string,
    // an absent count and a negative one are each reported, and each adds nothing to its sum.
    const tests = structuredClone(TESTS) as { metrics: Record<string, unknown> | null }[];
    const [checkout, cart, , payment] = tests;
    if (checkout?.metrics == null || cart?.metrics == null || payment?.metrics == null)
      throw new Error('TESTS lists checkout, cart, coupon and payment, with metrics but coupon');
    checkout.metrics.failureCount = '3';
    delete cart.metrics.runCount;
    payment.metrics.prsImpacted = -5;
    const fake = await webOrganization(tests);
    const exporter = await webExporter(fake);
    const samples = await exporter.waitFor((current) => up(current) === 1, 'acme/web read');
    expect(cost(samples, 'trunk_flaky_tests_failed_runs')).toEqual({
      'flaky/7d': 1,
      'broken/7d': 12,
    });
    expect(cost(samples, 'trunk_flaky_tests_runs')).toEqual({ 'flaky/7d': 40, 'broken/7d': 12 });
    expect(cost(samples, 'trunk_flaky_tests_pull_requests_impacted')).toEqual({
      'flaky/7d': 3,
      'broken/7d': 0,
    });
    expect(
      select(samples, 'trunk_exporter_api_anomalies_total', {
        endpoint: 'v2/tests',
        kind: 'invalid_field',
      })[0]?.value,
    ).toBe(3);
  });

  it('shows counts past 2^53, which the definition gives as integers of no bound, as they are', async () => {
    // `runCount`, `failureCount`, `prsImpacted` and a collection's `testCaseCount` are each
    // `"type": "integer"` with no maximum: 9007199254740994 (2^53 + 2, a whole double) is one.
    // acme/web's flaky checkout failed 3 of 40 runs on 2 pull requests; its broken payment failed
    // every one of 9007199254740994 runs, on 5.
    const rowsOf = (fixture: string) => pageAt(fixture).data as Record<string, unknown>[];
    const fake = await webOrganization(
      rowsOf('tests-with-metrics-counting-past-2-to-the-53.json'),
      rowsOf('test-collections-with-a-count-past-2-to-the-53.json'),
    );
    const exporter = await webExporter(fake);
    const samples = await exporter.waitFor(
      (current) =>
        up(current) === 1 && select(current, 'trunk_test_collection_test_cases').length > 0,
      'acme/web and the collections read',
    );
    expect(cost(samples, 'trunk_flaky_tests_failed_runs')).toEqual({
      'flaky/7d': 3,
      'broken/7d': 9007199254740994,
    });
    expect(cost(samples, 'trunk_flaky_tests_runs')).toEqual({
      'flaky/7d': 40,
      'broken/7d': 9007199254740994,
    });
    expect(cost(samples, 'trunk_flaky_tests_pull_requests_impacted')).toEqual({
      'flaky/7d': 2,
      'broken/7d': 5,
    });
    expect(byCollection(samples, 'trunk_test_collection_test_cases')).toEqual({
      'Monorepo tests': 9007199254740994,
      'Frontend unit tests': 0,
    });
    // Nothing odd in either answer.
    expect(
      select(samples, 'trunk_exporter_api_anomalies_total').filter(({ value }) => value > 0),
    ).toEqual([]);
  });

  it('reports a row without the metrics it was asked for, and leaves its status out of the sums rather than show them smaller', async () => {
    // "Returned only when `include=metrics` is set": asked, a row without it (or with something
    // that is not `TestCaseMetrics`) is not what the definition says; its status's sums are unknown.
    const tests = structuredClone(TESTS) as { metrics?: unknown }[];
    const [checkout, , , payment] = tests;
    if (checkout === undefined || payment === undefined)
      throw new Error('TESTS lists checkout, cart, coupon and payment');
    delete checkout.metrics;
    payment.metrics = 'none';
    const fake = await webOrganization(tests);
    const exporter = await webExporter(fake);
    const samples = await exporter.waitFor((current) => up(current) === 1, 'acme/web read');
    expect(cost(samples, 'trunk_flaky_tests_runs')).toEqual({});
    expect(
      select(samples, 'trunk_exporter_api_anomalies_total', {
        endpoint: 'v2/tests',
        kind: 'invalid_field',
      })[0]?.value,
    ).toBe(2);
  });

  it('counts a status Trunk adds as other, and logs it as every odd answer is logged', async () => {
    // `status` is `healthy`, `flaky` or `broken` in the definition, and Trunk may add values: the
    // walk of `status=flaky,broken` answering a test `unstable` (fixture) shows it as `other`, beside
    // one flaky and one broken test, counts it as `unknown_value`, and says so in a warn line.
    const fake = await startFakeV2({
      scriptedPages: [
        {
          path: '/v2/tests',
          query: 'status=flaky',
          pages: fixtureAt('tests-with-a-status-trunk-adds.json') as FixturePage[],
        },
      ],
      repositories: { [WEB_ID]: fixtureAt('repository-on-the-providers-default-host.json') },
    });
    const exporter = await webExporter(fake, {
      polling: '  mergeQueueIntervalSeconds: 0.3\n  flakyTestsIntervalSeconds: 0.3',
    });
    const samples = await exporter.waitFor((current) => up(current) === 1, 'acme/web read');
    const unhealthy = Object.fromEntries(
      select(samples, 'trunk_flaky_tests_unhealthy', { repo: WEB }).map(
        (sample): [string, number] => [sample.labels.status ?? '', sample.value],
      ),
    );
    expect(unhealthy).toEqual({ flaky: 1, broken: 1, other: 1 });
    expect(
      select(samples, 'trunk_exporter_api_anomalies_total', {
        endpoint: 'v2/tests',
        kind: 'unknown_value',
      })[0]?.value,
    ).toBeGreaterThanOrEqual(1);
    expect(await anomalyLines(exporter, 'unknown_value')).toEqual([
      expect.objectContaining({ level: 40, endpoint: 'v2/tests', repo: '(organization)' }),
    ]);
  });

  it("counts a test the walk lists twice once: a list that moves while it is paged may list a row again, and a row's `id` names its test", async () => {
    // checkout listed a second time, as a cursor over a moving list may: one test all the same.
    const [checkout] = structuredClone(TESTS);
    if (checkout === undefined) throw new Error('TESTS lists checkout first');
    const fake = await webOrganization([...structuredClone(TESTS), checkout]);
    const exporter = await webExporter(fake);
    const samples = await exporter.waitFor((current) => up(current) === 1, 'acme/web read');
    expect(
      Object.fromEntries(
        select(samples, 'trunk_flaky_tests_unhealthy', { repo: WEB }).map(
          (sample): [string, number] => [sample.labels.status ?? '', sample.value],
        ),
      ),
    ).toEqual({ flaky: 3, broken: 1 });
    expect(cost(samples, 'trunk_flaky_tests_failed_runs')).toEqual({
      'flaky/7d': 4,
      'broken/7d': 12,
    });
    expect(cost(samples, 'trunk_flaky_tests_runs')).toEqual({ 'flaky/7d': 50, 'broken/7d': 12 });
  });

  it('reads the window reads.testMetricsPeriod names, and with it off neither asks for metrics nor shows the cost; with reads.testCollections off, no collection is read', async () => {
    const fake = await webOrganization();
    const month = await webExporter(fake, { reads: '  testMetricsPeriod: 30d' });
    const samples = await month.waitFor((current) => up(current) === 1, 'acme/web read');
    expect(cost(samples, 'trunk_flaky_tests_failed_runs')).toEqual({
      'flaky/30d': 4,
      'broken/30d': 12,
    });
    expect(unhealthyWalks(fake).map((query) => query.get('period'))).toEqual(['30d']);
    await month.stop();

    const quiet = await webOrganization();
    const off = await webExporter(quiet, {
      reads: '  testMetricsPeriod: off\n  testCollections: false',
    });
    const plain = await off.waitFor((current) => up(current) === 1, 'acme/web read');
    expect(select(plain, 'trunk_flaky_tests_unhealthy', { repo: WEB })).toHaveLength(2);
    expect(select(plain, 'trunk_flaky_tests_failed_runs')).toEqual([]);
    expect(select(plain, 'trunk_flaky_tests_runs')).toEqual([]);
    expect(select(plain, 'trunk_flaky_tests_pull_requests_impacted')).toEqual([]);
    expect(select(plain, 'trunk_test_collection_test_cases')).toEqual([]);
    expect(unhealthyWalks(quiet).map((query) => query.has('include'))).toEqual([false]);
    expect(quiet.requestsTo(/^\/v2\/test-collections$/)).toEqual([]);
  });

  it('reads the flaky and broken tests again at once when a reload changes reads.testMetricsPeriod, and with it off shows no cost', async () => {
    // The families' HELP: "off: no series". The flaky-tests interval is 600 s: the reload must not
    // wait for the next scheduled poll, nor show a window no longer asked for until then.
    const fake = await webOrganization();
    const file = join(await mkdtemp(join(tmpdir(), 'trunk-exporter-cost-')), 'config.yaml');
    const yaml = (period: string) =>
      configYaml({
        apiUrl: fake.origin,
        token: null,
        apiKey: 'trunk_v2_test-cost-key',
        targets: `  - repo: ${WEB}\n    flakyTests: true`,
        polling: '  mergeQueueIntervalSeconds: 30\n  flakyTestsIntervalSeconds: 600',
        reads: `  testMetricsPeriod: ${period}`,
      });
    await writeFile(file, yaml('7d'));
    const exporter = await startTestExporter(yaml('7d'), 'info', file);
    await exporter.waitFor((current) => up(current) === 1, 'acme/web read');
    await writeFile(file, yaml('"off"'));
    expect((await exporter.exporter.reload('HTTP')).applied).toBe(true);
    const samples = await exporter.waitFor(
      (current) => cost(current, 'trunk_flaky_tests_runs')['flaky/7d'] === undefined,
      'the cost gone',
    );
    expect(cost(samples, 'trunk_flaky_tests_failed_runs')).toEqual({});
    expect(up(samples)).toBe(1);
    expect(unhealthyWalks(fake).map((query) => query.get('include'))).toEqual(['metrics', null]);
  });

  it('keeps the target up and its other families fresh while the collections fail, and drops the collections once their last read is older than staleAfterSeconds', async () => {
    const staleSeconds = 3;
    const tests = structuredClone(TESTS);
    const fake = await webOrganization(tests);
    const exporter = await webExporter(fake, {
      polling: `  flakyTestsIntervalSeconds: 0.2\n  staleAfterSeconds: ${staleSeconds}`,
    });
    await exporter.waitFor(
      (current) =>
        byCollection(current, 'trunk_test_collection_test_cases')['Frontend unit tests'] === 0,
      'the collections read',
    );
    fake.fail(/^\/v2\/test-collections$/, 500);
    // The last read that succeeded ended after its request reached the fake.
    const lastGood = Math.max(
      ...fake.requestsTo(/^\/v2\/test-collections$/).map((request) => request.receivedAt),
    );
    // Trunk reclassifies suite::cart as broken: the flaky and broken walk goes on being read.
    (tests[1] as { status: string }).status = 'broken';
    const fresh = await exporter.waitFor(
      // Up waited for, not asserted: a poll at 0.2 s may run late on a busy machine.
      (current) => cost(current, 'trunk_flaky_tests_runs')['broken/7d'] === 22 && up(current) === 1,
      'the cost read while the collections fail',
    );
    expect(cost(fresh, 'trunk_flaky_tests_runs')).toEqual({ 'flaky/7d': 40, 'broken/7d': 22 });
    const gone = await exporter.waitFor(
      (current) =>
        select(current, 'trunk_test_collection_test_cases').length === 0 && up(current) === 1,
      'the collections gone',
    );
    expect(Date.now() - lastGood).toBeGreaterThanOrEqual(staleSeconds * 1000);
    expect(cost(gone, 'trunk_flaky_tests_runs')).toEqual({ 'flaky/7d': 40, 'broken/7d': 22 });
    expect(exporter.logs()).toContain("the organization's test collections could not be read");
    // Never the target's failure: no part of its poll was unread.
    expect(exporter.logs()).not.toContain(`poll read part of ${WEB}`);
  });
});
