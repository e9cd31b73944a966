// An empty string where Trunk sends a value the exporter shows as a label (a pull request's state
// and priority name, a queue's state, mode and methods), served from fixture files by a fake API on
// loopback to a real exporter: an empty label value is, to Prometheus, no label at all, so each
// reads as absent, as null does (`unknown`), and is counted where another type would be.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { select, type Sample } from './support/exposition.js';
import { configYaml, startTestExporter } from './support/exporterHarness.js';
import { pageAt, rowsAt, startFakeV2 } from './support/fakeTrunkV2.js';
import { cleanUp, sendJson, startApiServer } from './trunk/harness.js';

afterEach(cleanUp);

const WEB_MAIN = { repo: 'github.com/acme/web', branch: 'main' };
const POLLING = '  mergeQueueIntervalSeconds: 0.2\n  flakyTestsIntervalSeconds: 600';
const TARGETS = '  - repo: github.com/acme/web\n    branches: [main]';
const V1_FIXTURES = join(import.meta.dirname, 'trunk', 'fixtures', 'polling');

const v1Fixture = (name: string): unknown =>
  JSON.parse(readFileSync(join(V1_FIXTURES, name), 'utf8')) as unknown;

/**
 * A real exporter holding a token, polling a fake API v1 that answers getQueue with the fixture
 * `queueFile` and every lookup with submitted-pull-request-with-empty-state.json.
 */
async function v1Exporter(queueFile: string) {
  const server = await startApiServer((_req, res, _index, recorded) => {
    if (recorded.url.endsWith('/getQueue')) sendJson(res, 200, v1Fixture(queueFile));
    else sendJson(res, 200, v1Fixture('submitted-pull-request-with-empty-state.json'));
  });
  return startTestExporter(
    configYaml({
      apiUrl: server.apiUrl,
      token: 'not-a-real-token',
      targets: TARGETS,
      polling: POLLING,
    }),
  );
}

/**
 * A real exporter holding an API key, polling a fake API v2 whose queue list is the fixture
 * `queuesFile` and whose queue's entries are pull-requests-page-with-an-empty-priority-name.json.
 */
async function v2Exporter(queuesFile: string) {
  const fake = await startFakeV2({
    queues: pageAt(queuesFile),
    entries: { xK9mP2nQ: rowsAt('pull-requests-page-with-an-empty-priority-name.json') },
  });
  return startTestExporter(
    configYaml({
      apiUrl: fake.origin,
      token: null,
      apiKey: 'trunk_v2_empty-label-values-key',
      targets: TARGETS,
      polling: POLLING,
    }),
  );
}

/** The queue's series whose labels include an empty value: none may. */
function emptyLabelValues(samples: readonly Sample[]): Sample[] {
  return samples.filter(
    (sample) =>
      sample.labels.repo === WEB_MAIN.repo &&
      sample.labels.branch === WEB_MAIN.branch &&
      Object.values(sample.labels).includes(''),
  );
}

/** trunk_merge_queue_info's mode and methods for the queue. */
function queueInfo(samples: readonly Sample[]) {
  const [info] = select(samples, 'trunk_merge_queue_info', WEB_MAIN);
  const { mode, merge_method, direct_merge_mode, optimization_mode } = info?.labels ?? {};
  return { mode, merge_method, direct_merge_mode, optimization_mode };
}

/** The queue's pull requests by `state/priority`, of the series above 0. */
function pullRequests(samples: readonly Sample[]): Record<string, number> {
  return Object.fromEntries(
    select(samples, 'trunk_merge_queue_pull_requests', WEB_MAIN)
      .filter((sample) => sample.value > 0)
      .map((sample): [string, number] => [
        `${sample.labels.state ?? ''}/${sample.labels.priority ?? ''}`,
        sample.value,
      ]),
  );
}

/**
 * The endpoints with invalid_field anomalies, each with whether its count is a whole number of
 * reads of `perRead` each (polls go on while the page is read, so the number of reads is not fixed).
 */
function invalidFieldReads(samples: readonly Sample[], perRead: number): Record<string, boolean> {
  return Object.fromEntries(
    select(samples, 'trunk_exporter_api_anomalies_total', { kind: 'invalid_field' })
      .filter((sample) => sample.value > 0)
      .map((sample): [string, boolean] => [
        sample.labels.endpoint ?? '',
        sample.value % perRead === 0,
      ]),
  );
}

/** trunk_merge_queue_state for the queue, by state. */
function queueStates(samples: readonly Sample[]): Record<string, number> {
  return Object.fromEntries(
    select(samples, 'trunk_merge_queue_state', WEB_MAIN).map((sample): [string, number] => [
      sample.labels.state ?? '(none)',
      sample.value,
    ]),
  );
}

/** A queue in none of its known states: `unknown` alone at 1. */
const STATE_UNKNOWN = { running: 0, paused: 0, draining: 0, switching_modes: 0, unknown: 1 };

describe('empty strings where a label value comes from', () => {
  it('API v1: an item state and priority name, and a queue mode and methods, read as unknown; the settings counted as invalid_field', async () => {
    const exporter = await v1Exporter('queue-with-empty-string-label-values.json');
    const samples = await exporter.waitFor(
      (current) => select(current, 'trunk_merge_queue_info', WEB_MAIN).length === 1,
      'the queue read',
    );
    expect(queueInfo(samples)).toEqual({
      mode: 'unknown',
      merge_method: 'unknown',
      direct_merge_mode: 'off',
      optimization_mode: 'unknown',
    });
    // 501: state '' in the queue and in its lookup; 502: testing. Both with priority name ''.
    expect(pullRequests(samples)).toEqual({ 'unknown/unknown': 1, 'testing/unknown': 1 });
    expect(emptyLabelValues(samples)).toEqual([]);
    // mode, mergeMethod and optimizationMode of each answer, as a setting of another type is.
    expect(invalidFieldReads(samples, 3)).toEqual({ getQueue: true });
  });

  it('API v2: a queue mode and methods, and an entry priority name, read as unknown; the settings counted as invalid_field', async () => {
    const exporter = await v2Exporter('merge-queues-page-with-empty-string-mode-and-methods.json');
    const samples = await exporter.waitFor(
      (current) =>
        select(current, 'trunk_merge_queue_info', WEB_MAIN).length === 1 &&
        select(current, 'trunk_merge_queue_pull_requests', WEB_MAIN).some((s) => s.value > 0),
      'the queue and its pull request read',
    );
    expect(queueInfo(samples)).toEqual({
      mode: 'unknown',
      merge_method: 'unknown',
      direct_merge_mode: 'unknown',
      optimization_mode: 'off',
    });
    expect(pullRequests(samples)).toEqual({ 'testing/unknown': 1 });
    expect(emptyLabelValues(samples)).toEqual([]);
    // mode, config.mergeMethod and config.directMergeMode of each list read.
    expect(invalidFieldReads(samples, 3)).toEqual({ 'v2/merge-queues': true });
  });

  it.each([
    {
      api: 'API v1',
      start: () => v1Exporter('queue-with-an-empty-state.json'),
      endpoint: 'getQueue',
    },
    {
      api: 'API v2',
      start: () => v2Exporter('merge-queues-page-with-an-empty-queue-state.json'),
      endpoint: 'v2/merge-queues',
    },
  ])(
    '$api: a queue state read as unknown, counted as invalid_field',
    async ({ start, endpoint }) => {
      const exporter = await start();
      const samples = await exporter.waitFor(
        (current) => select(current, 'trunk_merge_queue_state', WEB_MAIN).length > 0,
        'the queue read',
      );
      expect(queueStates(samples)).toEqual(STATE_UNKNOWN);
      expect(emptyLabelValues(samples)).toEqual([]);
      expect(invalidFieldReads(samples, 1)).toEqual({ [endpoint]: true });
    },
  );
});
