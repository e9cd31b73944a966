// The answer shapes Trunk's published v2 definition allows at its edges (only the required fields,
// every nullable field null, every enum value), served by a fake organization on loopback to a real
// exporter holding only an API key: the families each read feeds still come out. The fixtures are
// built from the definition and validated against it by
//   node scripts/v2-shape-fixtures.ts ../shared/trunk-openapi-v2/trunk-openapi-v2.json
import { afterEach, describe, expect, it } from 'vitest';
import { select, sum, type Sample } from './support/exposition.js';
import { configYaml, startTestExporter } from './support/exporterHarness.js';
import {
  FIXTURE_ANCHOR,
  fixtureAt,
  pageAt,
  startFakeV2,
  type EntryRow,
} from './support/fakeTrunkV2.js';
import { entryRow, moveEntry, startFakeWebQueue } from './support/queueEntryRows.js';
import { RUNS, webRunsExporter } from './support/verificationRunExporter.js';
import { WEB_MAIN } from './support/webQueueSamples.js';
import { cleanUp } from './trunk/harness.js';

afterEach(cleanUp);

const API_KEY = 'trunk_v2_definition-shapes-key';
const QUEUE_ID = 'xK9mP2nQ';
/** The repository and branch of every fixture's first row (the definition's examples). */
const WIDGETS_MAIN = { repo: 'github.com/acme/widgets', branch: 'main' };
const LIVE_STATES = new Set(['notReady', 'pending', 'testing', 'testsPassed', 'pendingFailure']);
/** The definition's examples are of 2026-07-28: moved to an hour ago. */
const anchor = () =>
  Date.now() - 3_600_000 - (Date.parse('2026-07-28T11:00:00.000Z') - Date.parse(FIXTURE_ANCHOR));

type Row = Readonly<Record<string, unknown>>;

function rowsOf(name: string): Row[] {
  return pageAt(name).data as Row[];
}

const value = (samples: readonly Sample[], name: string, labels: Record<string, string>) =>
  sum(samples, name, labels);

function exporterOf(origin: string, targets: string, reads = '') {
  const yaml = configYaml({
    apiUrl: origin,
    token: null,
    apiKey: API_KEY,
    targets,
    polling: '  mergeQueueIntervalSeconds: 0.2\n  flakyTestsIntervalSeconds: 0.2',
  });
  return startTestExporter(reads === '' ? yaml : `${yaml}\nreads:\n${reads}`);
}

describe('every answer shape the v2 definition allows, through a real exporter', () => {
  it.each([
    ['with-only-required-fields', 'with-every-nullable-field-null'],
    ['with-every-nullable-field-null', 'with-every-nullable-field-null'],
    ['with-every-enum-value', 'with-every-enum-value'],
  ])(
    'merge-queues-page-%s.json with pull-requests-page-%s.json: the queue is up, its settings and entries shown',
    async (queues, entries) => {
      const rows = pageAt(`pull-requests-page-${entries}.json`, anchor()).data as EntryRow[];
      const fake = await startFakeV2({
        queues: pageAt(`merge-queues-page-${queues}.json`, anchor()),
        entries: { [QUEUE_ID]: rows },
      });
      const exporter = await exporterOf(
        fake.origin,
        '  - repo: github.com/acme/widgets\n    branches: [main]',
      );
      const samples = await exporter.waitFor(
        (current) => value(current, 'trunk_exporter_target_up', WIDGETS_MAIN) === 1,
        'the queue up',
      );

      const live = rows.filter(({ queueEntry }) => LIVE_STATES.has(queueEntry.state)).length;
      expect(value(samples, 'trunk_merge_queue_pull_requests', WIDGETS_MAIN)).toBe(live);
      expect(select(samples, 'trunk_merge_queue_info', WIDGETS_MAIN)).toHaveLength(1);
      expect(value(samples, 'trunk_merge_queue_concurrency', WIDGETS_MAIN)).toBe(5);
      expect(sum(samples, 'trunk_exporter_api_schema_mismatches_total')).toBe(0);
      expect(sum(samples, 'trunk_exporter_api_anomalies_total')).toBe(0);
    },
  );

  it.each([
    'with-only-required-fields',
    'with-every-nullable-field-null',
    'with-nullable-objects-holding-null-fields',
    'with-every-enum-value',
  ])(
    'tests-page-%s.json, its repository and test collections alike: the quarantine list is up and its families shown',
    async (shape) => {
      const tests = pageAt(`tests-page-${shape}.json`, anchor()).data as Row[];
      const repositoryShape =
        shape === 'with-only-required-fields' ? shape : 'with-every-nullable-field-null';
      const repository = fixtureAt(`repository-${repositoryShape}.json`) as Row;
      const collectionShape = shape.startsWith('with-nullable')
        ? 'with-every-nullable-field-null'
        : shape;
      const collections = pageAt(`test-collections-page-${collectionShape}.json`).data;
      // Each test's repository is github.com/acme/widgets (the enum rows name one id each).
      const repositories = Object.fromEntries(
        tests.map(({ repoId }) => [String(repoId), repository]),
      );
      const fake = await startFakeV2({ tests, repositories, testCollections: collections });
      const exporter = await exporterOf(
        fake.origin,
        '  - repo: github.com/acme/widgets\n    flakyTests: true',
      );
      const widgets = { repo: WIDGETS_MAIN.repo };
      const samples = await exporter.waitFor(
        (current) =>
          value(current, 'trunk_exporter_target_up', { kind: 'flaky_tests', ...widgets }) === 1 &&
          select(current, 'trunk_test_collection_test_cases', {}).length > 0,
        'the quarantine list up and the collections read',
      );

      const count = (keep: (row: Row) => boolean) => tests.filter(keep).length;
      expect(value(samples, 'trunk_flaky_tests_quarantined', widgets)).toBe(
        count((row) => row.quarantineState === 'quarantined'),
      );
      for (const status of ['flaky', 'broken']) {
        expect(value(samples, 'trunk_flaky_tests_unhealthy', { ...widgets, status })).toBe(
          count((row) => row.status === status),
        );
      }
      expect(select(samples, 'trunk_test_collection_test_cases', {})).toHaveLength(
        collections.length,
      );
      expect(sum(samples, 'trunk_exporter_api_schema_mismatches_total')).toBe(0);
      // Only-required rows lack `metrics`, "Returned only when `include=metrics` is set": asked
      // for (the default window) and absent, each is counted (invalid_field); its row still counts.
      const counted = select(samples, 'trunk_exporter_api_anomalies_total', {}).filter(
        (sample) => sample.value > 0,
      );
      expect(counted.map(({ labels }) => [labels.endpoint, labels.kind])).toEqual(
        count((row) => !('metrics' in row)) === 0 ? [] : [['v2/tests', 'invalid_field']],
      );
    },
  );
  it.each(['with-only-required-fields', 'with-every-nullable-field-null', 'with-every-enum-value'])(
    'testing-results-page-%s.json and verification-runs-page alike, recorded after the first poll: every result and concluded run is counted',
    async (shape) => {
      const now = Date.now() / 1000;
      const pr7 = entryRow(7, 'testing', now - 60);
      const fake = await startFakeWebQueue([pr7]);
      const exporter = await webRunsExporter(fake);
      await exporter.waitFor(
        (current) => value(current, 'trunk_exporter_target_up', WEB_MAIN) === 1,
        'the first poll',
      );
      // Ended, created and concluded a second from now: after every read the exporter made (a
      // result ends at 2026-09-21T17:04:11 in the definition's example).
      const at = Date.now() + 1000;
      const results = pageAt(
        `testing-results-page-${shape}.json`,
        at - (Date.parse('2026-09-21T17:04:11.000Z') - Date.parse(FIXTURE_ANCHOR)),
      ).data as { endedAt: string }[];
      const stamp = new Date(at).toISOString();
      const runRows = rowsOf(`verification-runs-page-${shape}.json`);
      const concluded = runRows.filter(({ status }) => status !== 'inProgress').length;
      const runs = runRows.map((run) => ({
        ...run,
        createdAt: stamp,
        updatedAt: stamp,
      }));
      fake.testingResults(QUEUE_ID).push(...results);
      fake.verificationRuns(QUEUE_ID).push(...runs);
      moveEntry(pr7, 'testsPassed', Date.now() / 1000);
      const samples = await exporter.waitFor(
        (current) =>
          sum(current, 'trunk_merge_queue_testing_duration_seconds_count', WEB_MAIN) ===
            results.length && sum(current, RUNS, WEB_MAIN) === concluded,
        `${String(results.length)} results and ${String(concluded)} concluded runs counted`,
      );

      expect(sum(samples, 'trunk_exporter_api_schema_mismatches_total')).toBe(0);
      expect(sum(samples, 'trunk_exporter_api_anomalies_total')).toBe(0);
    },
  );
});
