// What flaky tests cost across two walks of the organization's tests, through API v2 and a real
// exporter holding only an API key, every number counted by hand from the fixtures
// tests-with-metrics-of-two-repositories.json and its "-a-walk-later" (acme/web and acme/docs,
// which has no merge queue). Trunk's words: `status` "Comma-separated statuses to include:
// `healthy`, `flaky`, `broken`" (a healthy test is not in the walk of flaky and broken tests, quarantined
// or not); a row's `metrics` is "Null when the test had no runs in `period`" (it adds nothing);
// `prsImpacted`: "Distinct pull requests that saw this test fail while it was unhealthy and not
// quarantined", summed over the tests of a status. `GET /v2/test-collections`: "newest first";
// `testCaseCount` "Reflects ingested uploads".
import { afterEach, describe, expect, it } from 'vitest';
import { select, type Sample } from './support/exposition.js';
import { configYaml, startTestExporter } from './support/exporterHarness.js';
import { fixtureAt, pageAt, startFakeV2, type FakeV2 } from './support/fakeTrunkV2.js';
import { byCollection, collectionRow } from './support/testCollectionRows.js';
import { cleanUp } from './trunk/harness.js';

afterEach(cleanUp);

const WEB_ID = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const DOCS_ID = '9f8e7d6c-5b4a-4c3d-8e2f-1a0b9c8d7e6f';

/** A family's series of every repository, as `repo status[/window]`: value. */
function byRepoAndStatus(samples: readonly Sample[], name: string): Record<string, number> {
  return Object.fromEntries(
    select(samples, name).map((sample): [string, number] => [
      [sample.labels.repo, sample.labels.status, sample.labels.window]
        .filter((value) => value !== undefined)
        .join(' '),
      sample.value,
    ]),
  );
}

/** Until `count` more reads of the flaky and broken tests and of the collections have been made. */
async function walks(fake: FakeV2, count: number, read: () => Promise<Sample[]>) {
  const unhealthy = () =>
    fake.requestsTo(/^\/v2\/tests$/).filter((request) => request.url.includes('status=flaky'))
      .length;
  const collections = () => fake.requestsTo(/^\/v2\/test-collections$/).length;
  const [tests, lists] = [unhealthy(), collections()];
  while (unhealthy() < tests + count || collections() < lists + count) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return read();
}

describe('flaky-test cost across two walks through API v2, every number by hand', () => {
  it('sums each repository per status over the window, walk by walk, as tests change status, gain or lose runs, and collections grow', async () => {
    const tests = structuredClone(pageAt('tests-with-metrics-of-two-repositories.json').data);
    const testCollections = [
      collectionRow('aB3xY9kQ', 'Backend integration tests', 1284, true),
      collectionRow('Zq81LmNo', 'Frontend unit tests', 0, false),
    ];
    const fake = await startFakeV2({
      tests,
      testCollections,
      repositories: {
        [WEB_ID]: fixtureAt('repository-on-the-providers-default-host.json'),
        [DOCS_ID]: fixtureAt('repository-without-a-merge-queue.json'),
      },
    });
    const exporter = await startTestExporter(
      configYaml({
        apiUrl: fake.origin,
        token: null,
        apiKey: 'trunk_v2_test-cost-story-key',
        targets: [
          '  - repo: github.com/acme/web',
          '    flakyTests: true',
          '  - repo: github.com/acme/docs',
          '    flakyTests: true',
        ].join('\n'),
        polling: '  mergeQueueIntervalSeconds: 600\n  flakyTestsIntervalSeconds: 0.2',
      }),
    );
    const first = await walks(fake, 2, () => exporter.samples());

    // Walk 1. acme/web: flaky checkout (3 failed of 40 runs, 2 PRs), cart (quarantined: still
    // flaky, 1 of 10, 1 PR), coupon (no runs: null); broken payment (12 of 12, 5 PRs); login is
    // healthy and not in the walk. acme/docs: flaky links (2 of 20, 2 PRs).
    expect(byRepoAndStatus(first, 'trunk_flaky_tests_failed_runs')).toEqual({
      'github.com/acme/web flaky 7d': 4, // 3 + 1
      'github.com/acme/web broken 7d': 12,
      'github.com/acme/docs flaky 7d': 2,
      'github.com/acme/docs broken 7d': 0,
    });
    expect(byRepoAndStatus(first, 'trunk_flaky_tests_runs')).toEqual({
      'github.com/acme/web flaky 7d': 50, // 40 + 10
      'github.com/acme/web broken 7d': 12,
      'github.com/acme/docs flaky 7d': 20,
      'github.com/acme/docs broken 7d': 0,
    });
    expect(byRepoAndStatus(first, 'trunk_flaky_tests_pull_requests_impacted')).toEqual({
      'github.com/acme/web flaky 7d': 3, // 2 + 1
      'github.com/acme/web broken 7d': 5,
      'github.com/acme/docs flaky 7d': 2,
      'github.com/acme/docs broken 7d': 0,
    });
    expect(byRepoAndStatus(first, 'trunk_flaky_tests_unhealthy')).toEqual({
      'github.com/acme/web flaky': 3, // checkout, cart, coupon
      'github.com/acme/web broken': 1,
      'github.com/acme/docs flaky': 1,
      'github.com/acme/docs broken': 0,
    });
    expect(byCollection(first, 'trunk_test_collection_test_cases')).toEqual({
      'Backend integration tests': 1284,
      'Frontend unit tests': 0,
    });
    expect(byCollection(first, 'trunk_test_collection_quarantine_enabled')).toEqual({
      'Backend integration tests': 1,
      'Frontend unit tests': 0,
    });

    // A week later. acme/web: checkout is broken (5 of 20, 3 PRs); cart is healthy; signup is new
    // and flaky (4 of 8, 4 PRs). acme/docs: spelling is new and broken, with no runs (null). A
    // collection is created (newest first), and the others grow.
    tests.splice(
      0,
      tests.length,
      ...structuredClone(pageAt('tests-with-metrics-of-two-repositories-a-walk-later.json').data),
    );
    testCollections.splice(
      0,
      testCollections.length,
      collectionRow('Dc55RtYu', 'Docs checks', 3, false),
      collectionRow('aB3xY9kQ', 'Backend integration tests', 1290, true),
      collectionRow('Zq81LmNo', 'Frontend unit tests', 15, true),
    );
    const later = await walks(fake, 2, () => exporter.samples());
    expect(byRepoAndStatus(later, 'trunk_flaky_tests_failed_runs')).toEqual({
      'github.com/acme/web flaky 7d': 4, // signup; coupon null
      'github.com/acme/web broken 7d': 17, // payment 12 + checkout 5
      'github.com/acme/docs flaky 7d': 2,
      'github.com/acme/docs broken 7d': 0, // spelling null
    });
    expect(byRepoAndStatus(later, 'trunk_flaky_tests_runs')).toEqual({
      'github.com/acme/web flaky 7d': 8,
      'github.com/acme/web broken 7d': 32, // 12 + 20
      'github.com/acme/docs flaky 7d': 20,
      'github.com/acme/docs broken 7d': 0,
    });
    expect(byRepoAndStatus(later, 'trunk_flaky_tests_pull_requests_impacted')).toEqual({
      'github.com/acme/web flaky 7d': 4,
      'github.com/acme/web broken 7d': 8, // 5 + 3
      'github.com/acme/docs flaky 7d': 2,
      'github.com/acme/docs broken 7d': 0,
    });
    expect(byRepoAndStatus(later, 'trunk_flaky_tests_unhealthy')).toEqual({
      'github.com/acme/web flaky': 2, // coupon, signup
      'github.com/acme/web broken': 2, // payment, checkout
      'github.com/acme/docs flaky': 1,
      'github.com/acme/docs broken': 1,
    });
    expect(byCollection(later, 'trunk_test_collection_test_cases')).toEqual({
      'Docs checks': 3,
      'Backend integration tests': 1290,
      'Frontend unit tests': 15,
    });
    expect(byCollection(later, 'trunk_test_collection_quarantine_enabled')).toEqual({
      'Docs checks': 0,
      'Backend integration tests': 1,
      'Frontend unit tests': 1,
    });
  });
});
