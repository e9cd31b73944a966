// The test list's paths and parameters: /v2/tests and its old path /v2/test-cases (one, the other
// or both served), every parameter the published definition documents accepted and doing what it
// says, and each value the definition does not allow refused with 400 VALIDATION_FAILED.
import { describe, expect, it } from 'vitest';
import { isMarkedFlaky, type ViewTest } from '../../src/simulator/v2TestResponses.js';
import type { RunningSimulator } from '../../src/simulator/server.js';
import { errorOf, getPage, startV2Simulator, v2Request, walk } from './v2Harness.js';

type Row = Record<string, unknown>;
const ids = (rows: readonly Row[]) => rows.map((row) => String(row.id));
const names = (rows: readonly Row[]) => rows.map((row) => String(row.name));

/** Every test of the world as the model holds it, by id, for the filters rows do not show. */
function modelTests(simulator: RunningSimulator): Map<string, ViewTest> {
  const tests = new Map<string, ViewTest>();
  for (const { quarantine, unquarantined } of simulator.world.testCollections) {
    for (const test of quarantine.tests) {
      tests.set(test.testCaseId, {
        ...test,
        statusSince: test.statusLastUpdatedAt,
        quarantinedSince: test.quarantinedAt,
      });
    }
    for (const test of unquarantined.tests) {
      tests.set(test.testCaseId, { ...test, quarantinedSince: undefined });
    }
  }
  return tests;
}

describe('the test list paths', () => {
  it('serves the same list on /v2/tests and /v2/test-cases, or only the path it is told', async () => {
    const both = await startV2Simulator({ seed: 21 });
    const query = '?status=flaky,broken&limit=100';
    const { rows: tests } = await walk(both, `/v2/tests${query}`);
    const { rows: testCases } = await walk(both, `/v2/test-cases${query}`);
    expect(testCases).toEqual(tests);
    expect(both.requestCounts()['/v2/test-cases']).toBeGreaterThan(0);

    for (const [served, refused] of [
      ['tests', 'test-cases'],
      ['test-cases', 'tests'],
    ] as const) {
      const simulator = await startV2Simulator({ seed: 21, testListPath: served });
      expect((await walk(simulator, `/v2/${served}${query}`)).rows).toEqual(tests);
      const reply = await v2Request(simulator, `/v2/${refused}${query}`);
      expect(reply.status).toBe(404);
      expect(errorOf(reply)).toEqual({
        code: 'NOT_FOUND',
        message: `no such endpoint: /v2/${refused}`,
      });
    }
  });
});

describe('the test list parameters', () => {
  it('takes every documented filter and search, each doing what the definition says', async () => {
    const simulator = await startV2Simulator({ seed: 22 });
    const truth = modelTests(simulator);
    const { rows: all } = await walk(simulator, '/v2/tests?limit=100');
    expect(all.length).toBe(truth.size);
    const list = async (query: string) => (await walk(simulator, `/v2/tests?${query}`)).rows;
    const lower = (value: unknown) => String(value).toLowerCase();

    const byName = await list('q=name:retries');
    expect(byName.length).toBeGreaterThan(0);
    expect(ids(byName)).toEqual(ids(all.filter((row) => lower(row.name).includes('retries'))));
    const anywhere = await list(`q=${encodeURIComponent('cart Retries')}`);
    const fields = (row: Row) => [row.name, row.parentName, row.className, row.file].map(lower);
    expect(ids(anywhere)).toEqual(
      ids(
        all.filter(
          (row) =>
            fields(row).some((field) => field.includes('cart')) &&
            fields(row).some((field) => field.includes('retries')),
        ),
      ),
    );
    const inFile = await list('file=ViewModelTest');
    expect(inFile.length).toBeGreaterThan(0);
    expect(ids(inFile)).toEqual(
      ids(all.filter((row) => String(row.file).includes('ViewModelTest'))),
    );
    const variant = await list('variant=chromium');
    expect(variant.length).toBeGreaterThan(0);
    expect(ids(variant)).toEqual(ids(all.filter((row) => row.variant === 'chromium')));
    const labelled = await list('label=slow-on-prs');
    expect(labelled.length).toBeGreaterThan(0);
    const hasLabel = (row: Row) =>
      (row.labels as { name: string }[]).some((label) => label.name === 'slow-on-prs');
    expect(ids(labelled)).toEqual(ids(all.filter(hasLabel)));
    // An unknown label is an empty page, not an error.
    expect(await list('label=Slow-On-PRs')).toEqual([]);
    const marked = await list('markedFlaky=true');
    const isMarked = (row: Row) => isMarkedFlaky(truth.get(String(row.id)) as ViewTest);
    expect(marked.length).toBeGreaterThan(0);
    expect(ids(marked)).toEqual(ids(all.filter(isMarked)));
    expect(ids(await list('markedFlaky=false'))).toEqual(ids(all.filter((row) => !isMarked(row))));
    const now = simulator.world.now();
    const newly = await list('newlyFlaky=true&period=30d');
    expect(newly.length).toBeGreaterThan(0);
    for (const row of newly) {
      expect(row.status).toBe('flaky');
      expect(Date.parse(String(row.statusSince)) / 1000).toBeGreaterThanOrEqual(now - 30 * 86_400);
    }
    expect(ids(await list('quarantineState=notQuarantined&status=healthy'))).toEqual(
      ids(
        all.filter((row) => row.quarantineState === 'notQuarantined' && row.status === 'healthy'),
      ),
    );
  });

  it('embeds metrics for a period, and sorts by name or by a metric in either direction', async () => {
    const simulator = await startV2Simulator({ seed: 23 });
    const plain = await getPage(simulator, '/v2/tests?limit=5');
    expect(plain.data.every((row) => !('metrics' in row))).toBe(true);
    const { rows: withMetrics } = await walk(simulator, '/v2/tests?include=metrics&period=7d');
    expect(withMetrics.every((row) => 'metrics' in row)).toBe(true);
    // Null for a test with no runs in the period.
    expect(withMetrics.some((row) => row.metrics === null)).toBe(true);

    const ascending = (await walk(simulator, '/v2/tests?limit=100')).rows;
    const descending = (await walk(simulator, '/v2/tests?sort=name&direction=desc&limit=9')).rows;
    expect(ids(descending)).toEqual(ids([...ascending].reverse()));
    // By name within a collection, collections in order.
    const ofFirst = ascending.filter(
      (row) => row.testCollectionId === ascending[0]?.testCollectionId,
    );
    expect(names(ofFirst)).toEqual(
      [...names(ofFirst)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
    );

    interface Metrics {
      readonly failureRate: number;
      readonly durationP95Ms: number | null;
      readonly prsImpacted: number;
      readonly lastRunAt: string;
      readonly lastFailureAt: string | null;
    }
    const metric: Record<string, (metrics: Metrics) => number | null> = {
      failureRate: (metrics) => metrics.failureRate,
      durationP95: (metrics) => metrics.durationP95Ms,
      prsImpacted: (metrics) => metrics.prsImpacted,
      lastRunAt: (metrics) => Date.parse(metrics.lastRunAt),
      lastFailureAt: (metrics) =>
        metrics.lastFailureAt === null ? null : Date.parse(metrics.lastFailureAt),
    };
    for (const [sort, valueOf] of Object.entries(metric)) {
      for (const direction of ['', '&direction=asc']) {
        const query = `/v2/tests?sort=${sort}&period=14d&include=metrics${direction}&limit=50`;
        const { rows } = await walk(simulator, query);
        const values = rows.map((row) => valueOf(row.metrics as Metrics));
        // Tests with no value to compare are left out; the rest worst (largest, latest) first.
        expect(values.includes(null), query).toBe(false);
        const sorted = [...values].sort((a, b) => Number(b) - Number(a));
        expect(values, query).toEqual(direction === '' ? sorted : [...sorted].reverse());
        expect(rows.length).toBeGreaterThan(0);
      }
    }
  });

  it('keeps a metric-sorted walk whole while the world moves between pages', async () => {
    const simulator = await startV2Simulator({ seed: 24 });
    const { world } = simulator;
    const query = '/v2/tests?sort=lastRunAt&period=7d&limit=13';
    const before = ids((await walk(simulator, query)).rows);
    // Ten simulated minutes a page: tests are quarantined, released and change status meanwhile.
    const { rows } = await walk(simulator, query, () => {
      world.advance(world.now() + 600);
    });
    const after = new Set(ids((await walk(simulator, query)).rows));
    expect(new Set(ids(rows)).size).toBe(rows.length);
    const stayed = before.filter((id) => after.has(id));
    expect(stayed.length).toBeGreaterThan(before.length / 2);
    expect(ids(rows)).toEqual(expect.arrayContaining(stayed));
  });

  it('refuses every value the definition does not allow with 400 VALIDATION_FAILED', async () => {
    const simulator = await startV2Simulator({ seed: 25 });
    const queue = String((await getPage(simulator, '/v2/merge-queues')).data[0]?.id);
    const refusals: [string, string][] = [
      ['/v2/tests?status=FLAKY', 'status'],
      ['/v2/tests?status=', 'status'],
      ['/v2/tests?quarantineState=yes', 'quarantineState'],
      ['/v2/tests?include=everything', 'include'],
      ['/v2/tests?period=2d', 'period'],
      ['/v2/tests?sort=age', 'sort'],
      ['/v2/tests?direction=up', 'direction'],
      ['/v2/tests?markedFlaky=yes', 'markedFlaky'],
      ['/v2/tests?newlyFlaky=1&period=7d', 'newlyFlaky'],
      ['/v2/tests?newlyFlaky=true', 'newlyFlaky requires period'],
      ['/v2/tests?sort=failureRate', 'sort=failureRate requires period'],
      ['/v2/tests?include=metrics', 'include=metrics requires period'],
      ['/v2/tests?q=', 'q must not be empty'],
      ['/v2/tests?file=', 'file must not be empty'],
      ['/v2/tests?owner=', 'owner must not be empty'],
      ['/v2/tests?variant=', 'variant must not be empty'],
      ['/v2/tests?label=', 'label must not be empty'],
      ['/v2/tests?testCollectionId=', 'testCollectionId must not be empty'],
      ['/v2/tests?flaky=true', 'unknown query parameter flaky'],
      ['/v2/test-cases?period=1w', 'period'],
      ['/v2/test-collections?q=', 'q must not be empty'],
      [
        '/v2/merge-queues?targetBranch=&repositoryId=00000000-0000-4000-8000-000000000000',
        'targetBranch',
      ],
      ['/v2/merge-queues?repositoryId=acme', 'repositoryId must be a uuid'],
      [`/v2/merge-queues/${queue}/pull-requests?author=`, 'author must not be empty'],
      [`/v2/merge-queues/${queue}/pull-requests?state=`, 'state'],
      [`/v2/merge-queues/${queue}/pull-requests?concludedBefore=today`, 'concludedBefore'],
    ];
    for (const [path, message] of refusals) {
      const reply = await v2Request(simulator, path);
      expect(reply.status, path).toBe(400);
      expect(errorOf(reply)?.code, path).toBe('VALIDATION_FAILED');
      expect(errorOf(reply)?.message, path).toContain(message);
    }
    const accepted = [
      '/v2/tests?testCollectionId=tc_none&status=healthy,flaky,broken&quarantineState=quarantined',
      '/v2/tests?q=file:cart&file=cart&owner=%40acme%2Fweb-team&variant=webkit&label=known-issue',
      '/v2/tests?include=metrics&period=1d&sort=prsImpacted&direction=asc',
      '/v2/tests?markedFlaky=false&newlyFlaky=false&period=30d&sort=name&direction=desc',
      '/v2/test-cases?limit=3&includeTotal=true',
      '/v2/test-collections?q=ACME&limit=1&includeTotal=true',
    ];
    for (const path of accepted) expect((await v2Request(simulator, path)).status, path).toBe(200);
  });
});
