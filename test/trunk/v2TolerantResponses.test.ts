// API v2 pages as the real Trunk may send them, each a fixture file named for what it pins,
// answered by a real local HTTP server: a row that cannot be used costs itself (dropped, counted
// as invalid_item), a timestamp that cannot be exported is counted, and the rest of the page is
// read, as v1's lists are (tolerantResponses.test.ts).
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { Secret } from '../../src/secrets/secret.js';
import { TrunkV2Client } from '../../src/trunk/v2Client.js';
import { cleanUp, makeClient, sendJson, startApiServer } from './harness.js';

afterEach(cleanUp);

const QUEUE = { id: 'mq_7f3a', repo: 'github.com/acme/web', branch: 'main' };
const LIVE = { states: ['pending', 'testing'] };
const SINCE = '2026-11-24T09:00:00.000Z';
const TESTING_RESULTS = 'v2/merge-queues/{id}/testing-results';

function fixtureText(name: string): string {
  return readFileSync(new URL(`fixtures/v2/${name}`, import.meta.url), 'utf8');
}

function fixture(name: string): unknown {
  return JSON.parse(fixtureText(name));
}

/**
 * A v2 client of a server that answers every GET with `body`; a string is sent as it is
 * (JSON.stringify would write a number too large for a double as null).
 */
async function clientAnswering(body: unknown) {
  const server = await startApiServer((_req, res) => {
    if (typeof body !== 'string') sendJson(res, 200, body);
    else {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    }
  }, '');
  const { client, observer } = makeClient(server.origin, {
    token: undefined,
    apiKey: new Secret('trunk_v2_tolerant-test-key'),
  });
  return { v2: new TrunkV2Client(client), observer };
}

describe('API v2 pages read tolerantly', () => {
  it('pull-requests-page-with-unusable-rows.json: each row without a whole-number number or a queue entry state is left out and counted', async () => {
    const { v2, observer } = await clientAnswering(
      fixture('pull-requests-page-with-unusable-rows.json'),
    );
    const rows = await v2.listQueuePullRequests(QUEUE, LIVE);

    expect(rows.map((row) => row.number)).toEqual([1, 5]);
    expect(observer.anomalies).toEqual([
      { endpoint: 'v2/merge-queues/{id}/pull-requests', kind: 'invalid_item', count: 4 },
    ]);
    expect(observer.mismatches).toEqual([]);
  });

  it('pull-requests-page-with-unusable-timestamps.json: every row is kept; each timestamp that is no date-time or lies outside 2000-2100 is counted, a null one is not', async () => {
    const { v2, observer } = await clientAnswering(
      fixture('pull-requests-page-with-unusable-timestamps.json'),
    );
    const rows = await v2.listQueuePullRequests(QUEUE, LIVE);

    expect(rows.map((row) => row.number)).toEqual([1, 2, 3, 4, 5]);
    // A number where a string belongs reads as no date-time.
    expect(rows[1]?.queueEntry.stateChangedAt).toBe('');
    expect(observer.anomalies).toEqual([
      { endpoint: 'v2/merge-queues/{id}/pull-requests', kind: 'invalid_field', count: 2 },
      { endpoint: 'v2/merge-queues/{id}/pull-requests', kind: 'timestamp_out_of_range', count: 2 },
    ]);
    expect(observer.mismatches).toEqual([]);
  });

  it('pull-requests-page-with-odd-optional-fields.json: an optional field of another type reads as absent and costs neither its row nor a count', async () => {
    const { v2, observer } = await clientAnswering(
      fixture('pull-requests-page-with-odd-optional-fields.json'),
    );
    const rows = await v2.listQueuePullRequests(QUEUE, LIVE);

    expect(rows.map((row) => row.number)).toEqual([1, 2]);
    const [first, second] = rows;
    expect(first?.queueEntry).toMatchObject({ state: 'notReady', id: undefined });
    expect(first?.queueEntry.priorityName).toBeUndefined();
    expect(first?.queueEntry.readiness).toEqual({
      doesBaseBranchMatch: false,
      mergeability: undefined,
      mergeabilityDetails: { reasons: undefined },
    });
    expect(second?.queueEntry.readiness).toBeUndefined();
    expect(second?.queueEntry.priorityName).toBe('high');
    expect(observer.anomalies).toEqual([]);
    expect(observer.mismatches).toEqual([]);
  });

  it('tests-page-with-unusable-rows-and-timestamps.json: a test without a repoId is left out and counted; the timestamp read (quarantinedSince, else statusSince) is checked', async () => {
    const { v2, observer } = await clientAnswering(
      fixture('tests-page-with-unusable-rows-and-timestamps.json'),
    );
    const tests: unknown[] = [];
    await v2.listTests({ quarantineState: 'quarantined' }, 'quarantined tests', (rows) =>
      tests.push(...rows),
    );

    expect(tests).toHaveLength(3);
    expect(observer.anomalies).toEqual([
      { endpoint: 'v2/tests', kind: 'invalid_item', count: 2 },
      { endpoint: 'v2/tests', kind: 'invalid_field', count: 1 },
      { endpoint: 'v2/tests', kind: 'timestamp_out_of_range', count: 1 },
    ]);
    expect(observer.mismatches).toEqual([]);
  });

  it('merge-queues-page-with-unusable-queue.json: a queue without its config is left out and counted; the others are discovered', async () => {
    const { v2, observer } = await clientAnswering(
      fixture('merge-queues-page-with-unusable-queue.json'),
    );
    const queues = await v2.listMergeQueues();

    expect(queues.map((queue) => queue.id)).toEqual(['mq_7f3a', 'mq_9c1d']);
    expect(observer.anomalies).toEqual([
      { endpoint: 'v2/merge-queues', kind: 'invalid_item', count: 1 },
    ]);
    expect(observer.mismatches).toEqual([]);
  });

  it('merge-queues-page-with-ids-that-are-dot-segments.json: a queue whose id is `.` or `..` is left out and counted, since a URL resolves such a path segment (`/v2/merge-queues/../pull-requests` is `/v2/pull-requests`); the others are discovered', async () => {
    const { v2, observer } = await clientAnswering(
      fixture('merge-queues-page-with-ids-that-are-dot-segments.json'),
    );
    const queues = await v2.listMergeQueues();

    expect(queues.map((queue) => queue.id)).toEqual(['mq_7f3a', 'mq_9c1d']);
    expect(observer.anomalies).toEqual([
      { endpoint: 'v2/merge-queues', kind: 'invalid_item', count: 2 },
    ]);
  });

  it('verification-runs-page-with-ids-that-are-dot-segments.json: a run whose id is `.` or `..` is left out and counted, as it could never be read again by id (`/v2/merge-queue-verification-runs/..`)', async () => {
    const { v2, observer } = await clientAnswering(
      fixture('verification-runs-page-with-ids-that-are-dot-segments.json'),
    );
    const rows = await v2.listVerificationRuns(QUEUE, '2025-12-31T00:00:00.000Z');

    expect(rows.map((row) => row.testedPullRequests[0]?.number)).toEqual([71, 74]);
    expect(observer.anomalies).toEqual([
      { endpoint: 'v2/merge-queues/{id}/verification-runs', kind: 'invalid_item', count: 2 },
    ]);
  });

  it('testing-results-page-with-pull-request-numbers-zero-and-below.json: a result for pull request 0 or -3 is left out and counted as invalid_item; the others are read', async () => {
    // `pullRequestNumber`: "type": "integer", "exclusiveMinimum": 0.
    const { v2, observer } = await clientAnswering(
      fixture('testing-results-page-with-pull-request-numbers-zero-and-below.json'),
    );
    const rows = await v2.listTestingResults(QUEUE, SINCE);

    expect(rows.map((row) => row.pullRequestNumber)).toEqual([51, 52]);
    expect(observer.anomalies).toEqual([
      { endpoint: TESTING_RESULTS, kind: 'invalid_item', count: 2 },
    ]);
    expect(observer.mismatches).toEqual([]);
  });

  it('verification-runs-page-with-unusable-tested-pull-requests.json: a tested pull request numbered 0, -2 or 62.5, "65", null or none, or no object, is left out of its run and counted as invalid_field; every run is kept, read by id too', async () => {
    // `TestedPullRequest`: "A pull request included in a verification run", its `number` an
    // "integer"; a pull request is submitted with a number of "exclusiveMinimum": 0.
    const body = fixture('verification-runs-page-with-unusable-tested-pull-requests.json') as {
      data: unknown[];
    };
    const { v2, observer } = await clientAnswering(body);
    const rows = await v2.listVerificationRuns(QUEUE, '2025-12-31T00:00:00.000Z');

    expect(
      rows.map((row) => [
        row.id.slice(-2),
        row.testedPullRequests.map(({ number }) => number),
        row.unnumberedPullRequests,
      ]),
    ).toEqual([
      ['61', [61], 0],
      ['62', [], 1],
      ['63', [62], 2],
      ['64', [63, 64], 0],
      ['65', [], 4],
    ]);
    // The rest of a run is read as ever: run 62 failed on its required check.
    expect(rows[1]).toMatchObject({ status: 'failed', requiredStatuses: ['build'] });
    expect(rows[1]?.checks).toEqual([{ name: 'build', conclusion: 'failure' }]);
    expect(observer.anomalies).toEqual([
      { endpoint: 'v2/merge-queues/{id}/verification-runs', kind: 'invalid_field', count: 7 },
    ]);
    expect(observer.mismatches).toEqual([]);

    // The last run read by id (`GET /v2/merge-queue-verification-runs/{id}`, a bare VerificationRun).
    const single = await clientAnswering(body.data[4]);
    const run = await single.v2.getVerificationRun(QUEUE, '7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e65');
    expect(run?.testedPullRequests).toEqual([]);
    expect(run?.unnumberedPullRequests).toBe(4);
    expect(single.observer.anomalies).toEqual([
      { endpoint: 'v2/merge-queue-verification-runs/{id}', kind: 'invalid_field', count: 4 },
    ]);
    expect(single.observer.mismatches).toEqual([]);
  });

  it('merge-queues-page-with-a-setting-past-the-largest-double.json: a concurrency of 1e400 (JSON.parse reads Infinity) costs only the setting, counted as invalid_field; both queues are read', async () => {
    // The definition: concurrency is an "integer"; 1e400 is past the largest double.
    const body = fixtureText('merge-queues-page-with-a-setting-past-the-largest-double.json');
    const { v2, observer } = await clientAnswering(body);
    const queues = await v2.listMergeQueues();

    expect(queues.map((queue) => [queue.id, queue.config.concurrency])).toEqual([
      ['xK9mP2nQ', undefined],
      ['aB3xY9kQ', 3],
    ]);
    expect(observer.anomalies).toEqual([
      { endpoint: 'v2/merge-queues', kind: 'invalid_field', count: 1 },
    ]);
    expect(observer.mismatches).toEqual([]);

    // The same queue read by id (`GET /v2/merge-queues/{id}`, a bare MergeQueue).
    const one = (JSON.parse(body) as { data: unknown[] }).data[0];
    const single = await clientAnswering(
      JSON.stringify(one).replace('"concurrency":null', '"concurrency":1e400'),
    );
    const queue = await single.v2.getMergeQueue(QUEUE);
    expect(queue?.config.concurrency).toBeUndefined();
    expect(queue?.config.testingTimeoutMinutes).toBe(60);
    expect(single.observer.anomalies).toEqual([
      { endpoint: 'v2/merge-queues/{id}', kind: 'invalid_field', count: 1 },
    ]);
    expect(single.observer.mismatches).toEqual([]);
  });

  it('testing-results-page-with-unknown-outcome.json: an outcome Trunk added later keeps its row and is counted as unknown_value', async () => {
    const { v2, observer } = await clientAnswering(
      fixture('testing-results-page-with-unknown-outcome.json'),
    );
    const rows = await v2.listTestingResults(QUEUE, SINCE);

    expect(rows.map((row) => [row.pullRequestNumber, row.outcome])).toEqual([
      [11, 'passed'],
      [12, 'timedOut'],
      [13, 'failed'],
    ]);
    expect(observer.anomalies).toEqual([
      { endpoint: TESTING_RESULTS, kind: 'unknown_value', count: 1 },
    ]);
    expect(observer.mismatches).toEqual([]);
  });

  it('testing-results-page-without-outcome-or-conclusion.json: an absent (or null) outcome or entryConclusion costs neither the row nor a count', async () => {
    const { v2, observer } = await clientAnswering(
      fixture('testing-results-page-without-outcome-or-conclusion.json'),
    );
    const rows = await v2.listTestingResults(QUEUE, SINCE);

    expect(rows.map((row) => [row.pullRequestNumber, row.outcome])).toEqual([
      [21, undefined],
      [22, 'interrupted'],
      [23, undefined],
    ]);
    expect(observer.anomalies).toEqual([]);
    expect(observer.mismatches).toEqual([]);
  });

  it('testing-results-page-with-unusable-rows.json: a row without what a count or its identity needs is left out and counted; an endedAt that is no date-time or out of range is counted', async () => {
    const { v2, observer } = await clientAnswering(
      fixture('testing-results-page-with-unusable-rows.json'),
    );
    const rows = await v2.listTestingResults(QUEUE, SINCE);

    // Out: no duration (32), a string number (33), no isBisection (34), a negative duration (35),
    // no endedAt (36), a string for a row. Kept, and counted by their endedAt: 37 and 38.
    expect(rows.map((row) => row.pullRequestNumber)).toEqual([31, 37, 38, 39]);
    expect(observer.anomalies).toEqual([
      { endpoint: TESTING_RESULTS, kind: 'invalid_item', count: 6 },
      { endpoint: TESTING_RESULTS, kind: 'invalid_field', count: 1 },
      { endpoint: TESTING_RESULTS, kind: 'timestamp_out_of_range', count: 1 },
    ]);
    expect(observer.mismatches).toEqual([]);
  });

  it('testing-results-page-with-a-duration-that-is-no-whole-number.json: a testingDurationMs of 754000.5 leaves its row out, counted as invalid_item; 0 and 1e308, whole numbers from 0, are read', async () => {
    // `testingDurationMs`: "type": "integer", "minimum": 0.
    const { v2, observer } = await clientAnswering(
      fixture('testing-results-page-with-a-duration-that-is-no-whole-number.json'),
    );
    const rows = await v2.listTestingResults(QUEUE, SINCE);

    expect(rows.map((row) => [row.pullRequestNumber, row.testingDurationMs])).toEqual([
      [71, 754_000],
      [73, 1e308],
      [74, 0],
    ]);
    expect(observer.anomalies).toEqual([
      { endpoint: TESTING_RESULTS, kind: 'invalid_item', count: 1 },
    ]);
    expect(observer.mismatches).toEqual([]);
  });

  it('verification-runs-page-of-101-rows.json: a page of more rows than the definition lets a page hold (maxItems 100) is refused, naming why; 100 of them are read', async () => {
    const page = fixture('verification-runs-page-of-101-rows.json') as { data: unknown[] };
    const oversized = await clientAnswering(page);
    await expect(
      oversized.v2.listVerificationRuns(QUEUE, '2025-12-31T00:00:00.000Z'),
    ).rejects.toThrow(/v2\/merge-queues\/\{id\}\/verification-runs.*data: more than 100 rows/);
    expect(oversized.observer.mismatches).toEqual(['v2/merge-queues/{id}/verification-runs']);

    const full = await clientAnswering({ ...page, data: page.data.slice(0, 100) });
    const rows = await full.v2.listVerificationRuns(QUEUE, '2025-12-31T00:00:00.000Z');
    expect(rows).toHaveLength(100);
    expect(full.observer.mismatches).toEqual([]);
  });

  it('verification-runs-page-with-a-run-updated-before-it-was-created.json: "when the run last changed" before "when the run was created" keeps its row and is counted as invalid_field; a run updated when created is not', async () => {
    const { v2, observer } = await clientAnswering(
      fixture('verification-runs-page-with-a-run-updated-before-it-was-created.json'),
    );
    const rows = await v2.listVerificationRuns(QUEUE, '2025-12-31T00:00:00.000Z');

    expect(rows.map((row) => row.testedPullRequests[0]?.number)).toEqual([7, 8]);
    expect(observer.anomalies).toEqual([
      { endpoint: 'v2/merge-queues/{id}/verification-runs', kind: 'invalid_field', count: 1 },
    ]);
  });

  it('a page that is not a list is still a schema mismatch, not a page of unusable rows', async () => {
    const { v2, observer } = await clientAnswering({ data: { number: 1 }, hasMore: false });
    await expect(v2.listQueuePullRequests(QUEUE, LIVE)).rejects.toThrow(/schema/);
    expect(observer.mismatches).toEqual(['v2/merge-queues/{id}/pull-requests']);
    expect(observer.anomalies).toEqual([]);
  });
});
