// The organization-wide API v2 lists through a real exporter on loopback, against a fake
// organization answering from fixtures written from Trunk's definition (or the simulator): each
// list failing hides only what comes from it, and only once its last good read is older than
// polling.staleAfterSeconds; a configured repository Trunk does not know is down, never a 0; with a
// v1 token beside the key, the flaky and broken tests still come from the v2 list.
import { afterEach, describe, expect, it } from 'vitest';
import { FaultPlan } from '../src/simulator/faults.js';
import { repositoryKey } from '../src/simulator/repositories.js';
import { select, sum, type Sample } from './support/exposition.js';
import { configYaml, startTestExporter } from './support/exporterHarness.js';
import { fixtureAt, pageAt, rowsAt, startFakeV2, type FakeV2 } from './support/fakeTrunkV2.js';
import { startTestSimulator } from './support/simulator.js';
import { cleanUp } from './trunk/harness.js';

afterEach(cleanUp);

const API_KEY = 'trunk_v2_lists-test-key';
const WEB_ID = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const WEB_QUEUE = 'xK9mP2nQ';
const WEB = 'github.com/acme/web';
/** Long enough for a few polls at 0.2 s on a busy machine, short enough to wait for. */
const STALE_SECONDS = 5;
const POLLING = [
  '  mergeQueueIntervalSeconds: 0.2',
  '  flakyTestsIntervalSeconds: 0.2',
  `  staleAfterSeconds: ${STALE_SECONDS}`,
].join('\n');

function keyOnlyExporter(fake: FakeV2, targets: string) {
  return startTestExporter(
    configYaml({ apiUrl: fake.origin, token: null, apiKey: API_KEY, targets, polling: POLLING }),
  );
}

const value = (samples: readonly Sample[], name: string, labels: Record<string, string>) =>
  select(samples, name, labels)[0]?.value;

const up = (samples: readonly Sample[], kind: string, repo: string) =>
  value(samples, 'trunk_exporter_target_up', { kind, repo });

/** acme/web's flaky and broken tests on the page, by status. */
const unhealthy = (samples: readonly Sample[]): Record<string, number> =>
  Object.fromEntries(
    select(samples, 'trunk_flaky_tests_unhealthy', { repo: WEB }).map(
      (sample): [string, number] => [sample.labels.status ?? '', sample.value],
    ),
  );

/** When the last request matching `query` reached the fake: its read ended no earlier. */
function lastRequestAt(fake: FakeV2, path: RegExp, query: string): number {
  return Math.max(
    ...fake
      .requestsTo(path)
      .filter((request) => request.url.includes(query))
      .map((request) => request.receivedAt),
  );
}

/**
 * The fixture tests-flaky-and-broken-besides-quarantined.json, all of acme/web: suite::test_23 and
 * suite::test_26 quarantined; test_21, 22, 23 and 24 flaky, test_25 broken. The definition's
 * filters: `quarantineState` "Filter on effective quarantine state", `status` "Comma-separated
 * statuses to include: `healthy`, `flaky`, `broken`".
 */
async function webWithTests() {
  const tests = structuredClone(pageAt('tests-flaky-and-broken-besides-quarantined.json').data) as {
    name: string;
    status: string;
    quarantineState: string;
  }[];
  const fake = await startFakeV2({
    tests,
    repositories: { [WEB_ID]: fixtureAt('repository-on-the-providers-default-host.json') },
  });
  const exporter = await keyOnlyExporter(fake, `  - repo: ${WEB}\n    flakyTests: true`);
  const first = await exporter.waitFor(
    (current) => up(current, 'flaky_tests', WEB) === 1,
    'acme/web read',
  );
  expect(value(first, 'trunk_flaky_tests_quarantined', { repo: WEB })).toBe(2);
  expect(unhealthy(first)).toEqual({ flaky: 4, broken: 1 });
  const test = (name: string) => {
    const found = tests.find((row) => row.name === name);
    if (found === undefined) throw new Error(`no ${name} in the fixture`);
    return found;
  };
  return { fake, exporter, test };
}

describe('organization-wide lists through a real exporter', () => {
  it('polls queues on with the last good list of queues while its reads fail, until it is older than staleAfterSeconds', async () => {
    const fake = await startFakeV2({ queues: pageAt('merge-queues-of-an-organization.json') });
    const exporter = await keyOnlyExporter(fake, `  - repo: ${WEB}\n    branches: [main]`);
    await exporter.waitFor((current) => up(current, 'merge_queue', WEB) === 1, 'acme/web up');
    fake.fail(/^\/v2\/merge-queues$/, 400);
    const lastGood = lastRequestAt(fake, /^\/v2\/merge-queues$/, '');
    // Three PRs enter the queue: two notReady, one testing (the fixture's queueEntry states).
    fake
      .entries(WEB_QUEUE)
      .push(...rowsAt('pull-requests-not-ready-without-the-impacted-targets-signal.json'));
    const polled = await exporter.waitFor(
      (current) =>
        sum(current, 'trunk_merge_queue_pull_requests', { repo: WEB, state: 'not_ready' }) === 2,
      'the PRs read with the last list of queues',
    );
    expect(sum(polled, 'trunk_merge_queue_pull_requests', { repo: WEB, state: 'testing' })).toBe(1);
    if (Date.now() - lastGood < STALE_SECONDS * 1000)
      expect(up(polled, 'merge_queue', WEB)).toBe(1);
    await exporter.waitFor((current) => up(current, 'merge_queue', WEB) === 0, 'acme/web down');
    // Down only through failed reads of the list, each logged (the PRs above may come before one).
    expect(exporter.logs()).toContain("the organization's list of merge queues could not be read");
    // Down no sooner than staleAfterSeconds after the last list that was read.
    expect(Date.now() - lastGood).toBeGreaterThanOrEqual(STALE_SECONDS * 1000);
  });

  it('keeps the quarantined tests fresh while the flaky and broken list fails, and those its last values until staleAfterSeconds', async () => {
    const { fake, exporter, test } = await webWithTests();
    fake.fail(/^\/v2\/tests$/, 500, 'status=flaky');
    const lastGood = lastRequestAt(fake, /^\/v2\/tests$/, 'status=flaky');
    // Trunk un-quarantines suite::test_26: one quarantined test is left.
    test('suite::test_26').quarantineState = 'notQuarantined';
    // Both at once: a poll that finds the flaky and broken list's read still retrying goes on with
    // its last answer (poller/sharedRead.ts), so the target turns down at the poll after that read
    // fails.
    const fresh = await exporter.waitFor(
      (current) =>
        value(current, 'trunk_flaky_tests_quarantined', { repo: WEB }) === 1 &&
        up(current, 'flaky_tests', WEB) === 0,
      'the quarantined list read while the other fails, the target down',
    );
    expect(up(fresh, 'flaky_tests', WEB)).toBe(0);
    // Its last values stay while they are younger than staleAfterSeconds (scraped before now).
    if (Date.now() - lastGood < STALE_SECONDS * 1000) {
      expect(unhealthy(fresh)).toEqual({ flaky: 4, broken: 1 });
    }
    expect(exporter.logs()).toContain(
      'poll read part of github.com/acme/web: flaky and broken tests',
    );
    const stale = await exporter.waitFor(
      (current) => unhealthy(current).flaky === undefined,
      'the flaky and broken tests gone',
    );
    expect(Date.now() - lastGood).toBeGreaterThanOrEqual(STALE_SECONDS * 1000);
    expect(value(stale, 'trunk_flaky_tests_quarantined', { repo: WEB })).toBe(1);
    fake.recover();
    const back = await exporter.waitFor(
      (current) => up(current, 'flaky_tests', WEB) === 1,
      'acme/web up again',
    );
    expect(unhealthy(back)).toEqual({ flaky: 4, broken: 1 });
  });

  it('keeps the flaky and broken tests fresh while the quarantined list fails, and those its last values until staleAfterSeconds', async () => {
    const { fake, exporter, test } = await webWithTests();
    fake.fail(/^\/v2\/tests$/, 500, 'quarantineState=quarantined');
    const lastGood = lastRequestAt(fake, /^\/v2\/tests$/, 'quarantineState=quarantined');
    // suite::test_21 is flaky no more: three flaky tests are left.
    test('suite::test_21').status = 'healthy';
    // Both at once: a poll that finds the quarantined list's read still retrying goes on with its
    // last answer (poller/sharedRead.ts), so the target turns down at the poll after that read fails.
    const fresh = await exporter.waitFor(
      (current) => unhealthy(current).flaky === 3 && up(current, 'flaky_tests', WEB) === 0,
      'the flaky and broken list read while the other fails, the target down',
    );
    expect(unhealthy(fresh)).toEqual({ flaky: 3, broken: 1 });
    expect(up(fresh, 'flaky_tests', WEB)).toBe(0);
    if (Date.now() - lastGood < STALE_SECONDS * 1000) {
      expect(value(fresh, 'trunk_flaky_tests_quarantined', { repo: WEB })).toBe(2);
    }
    await exporter.waitFor(
      (current) => value(current, 'trunk_flaky_tests_quarantined', { repo: WEB }) === undefined,
      'the quarantined tests gone',
    );
    expect(Date.now() - lastGood).toBeGreaterThanOrEqual(STALE_SECONDS * 1000);
  });

  it('shows a configured repository Trunk does not know as down, naming the nearest it has, and one it knows without tests as 0', async () => {
    const fake = await startFakeV2({
      queues: pageAt('merge-queues-of-an-organization.json'),
      tests: pageAt('tests-of-repositories-named-three-ways.json').data,
      repositories: { [WEB_ID]: fixtureAt('repository-on-the-providers-default-host.json') },
    });
    // acme/wbe: a typo of acme/web. acme/api: a merge queue and no test in either list.
    const exporter = await keyOnlyExporter(
      fake,
      ['github.com/acme/wbe', 'github.com/acme/api']
        .map((repo) => `  - repo: ${repo}\n    flakyTests: true`)
        .join('\n'),
    );
    const samples = await exporter.waitFor(
      (current) =>
        up(current, 'flaky_tests', 'github.com/acme/wbe') === 0 &&
        up(current, 'flaky_tests', 'github.com/acme/api') === 1,
      'the unknown repository down, the known one up',
    );
    // "An unparseable providerUrl and a genuine empty result both answer PROVIDER_URL_NOT_FOUND".
    expect(
      select(samples, 'trunk_flaky_tests_quarantined', { repo: 'github.com/acme/wbe' }),
    ).toEqual([]);
    expect(select(samples, 'trunk_flaky_tests_unhealthy', { repo: 'github.com/acme/wbe' })).toEqual(
      [],
    );
    expect(exporter.logs()).toContain(
      'Trunk API v2 knows no repository github.com/acme/wbe (GET /v2/repositories?providerUrl=https://github.com/acme/wbe answered 404)',
    );
    expect(exporter.logs()).toContain('nearest names its test lists have: github.com/acme/web');
    // acme/api resolves: it has no quarantined, flaky or broken test, which is what 0 says.
    expect(value(samples, 'trunk_flaky_tests_quarantined', { repo: 'github.com/acme/api' })).toBe(
      0,
    );
    expect(
      select(samples, 'trunk_flaky_tests_unhealthy', { repo: 'github.com/acme/api' }).map(
        (sample) => sample.value,
      ),
    ).toEqual([0, 0]);
  });

  it('reads the flaky and broken tests through v2 for a repository whose quarantine list v1 reads, with a token beside the key', async () => {
    const TOKEN = 'sim-token-lists';
    const faults = new FaultPlan();
    const filters: string[] = [];
    // A pass-through that notes which list each /v2/tests call asks for.
    faults.inject(
      'v2/tests',
      {
        kind: 'answer',
        answer: (request, real) => {
          const query = request as { quarantineState?: string; status?: string };
          filters.push(query.quarantineState ?? query.status ?? '');
          return real;
        },
      },
      { times: Infinity },
    );
    const { world, simulator } = await startTestSimulator({
      seed: 3,
      token: TOKEN,
      apiKey: API_KEY,
      faults,
    });
    const exporter = await startTestExporter(
      configYaml({
        apiUrl: simulator.origin,
        token: TOKEN,
        apiKey: API_KEY,
        targets: `  - repo: ${WEB}\n    flakyTests: true`,
        polling: POLLING,
      }),
    );
    const samples = await exporter.waitFor(
      (current) => up(current, 'flaky_tests', WEB) === 1,
      'acme/web read',
    );
    const collection = world.testCollections.find(
      ({ repository }) => repositoryKey(repository) === WEB,
    );
    if (collection === undefined) throw new Error('the world has no acme/web tests');
    const all = [...collection.quarantine.tests, ...collection.unquarantined.tests];
    for (const status of ['flaky', 'broken']) {
      expect(value(samples, 'trunk_flaky_tests_unhealthy', { repo: WEB, status }), status).toBe(
        all.filter((test) => test.status.toLowerCase() === status).length,
      );
    }
    expect(value(samples, 'trunk_flaky_tests_quarantined', { repo: WEB })).toBe(
      collection.quarantine.tests.length,
    );
    // The quarantine list through v1; of the v2 test lists, only the flaky and broken one.
    expect(simulator.requestCounts()['/v1/flaky-tests/list-quarantined-tests']).toBeGreaterThan(0);
    expect(new Set(filters)).toEqual(new Set(['flaky,broken']));
  });
});
