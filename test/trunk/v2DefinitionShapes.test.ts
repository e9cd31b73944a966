// Every answer shape Trunk's published v2 definition allows, read through the real TrunkV2Client
// from a real loopback server: only the required fields, every nullable field null, every enum
// value. The fixtures are built from the definition and validated against it by
//   node scripts/v2-shape-fixtures.ts ../shared/trunk-openapi-v2/trunk-openapi-v2.json
// A read of them fails nothing and drops no row whose used fields are present; the one row the
// definition lets lack a field the exporter needs is left out and counted.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { Secret } from '../../src/secrets/secret.js';
import { TrunkV2Client } from '../../src/trunk/v2Client.js';
import { repositoryNameOf } from '../../src/trunk/v2RepositoryName.js';
import { cleanUp, makeClient, sendJson, startApiServer } from './harness.js';

afterEach(cleanUp);

const QUEUE = { id: 'xK9mP2nQ', repo: 'github.com/acme/widgets', branch: 'main' };
/** Before every date the definition's examples give. */
const LONG_AGO = '2026-01-01T00:00:00.000Z';

type Row = Readonly<Record<string, unknown>>;

function fixture(name: string): unknown {
  return JSON.parse(readFileSync(new URL(`fixtures/v2/${name}`, import.meta.url), 'utf8'));
}

function rowsOf(name: string): Row[] {
  return (fixture(name) as { data: Row[] }).data;
}

/** The fixtures of each shape of the answer of a read of one object (`repository`). */
function objectFixtures(read: string): string[] {
  return [
    `${read}-with-only-required-fields.json`,
    `${read}-with-every-nullable-field-null.json`,
    `${read}-answers-with-every-enum-value.json`,
  ];
}

/** The answers a fixture of one object holds: itself, or each of its array of answers. */
function answersIn(name: string): Row[] {
  const body = fixture(name);
  return (Array.isArray(body) ? body : [body]) as Row[];
}

/** A v2 client of a server that answers the n-th GET with `answers[n]` (the last one after). */
async function clientAnswering(...answers: unknown[]) {
  const server = await startApiServer((_req, res, index) => {
    sendJson(res, 200, answers[Math.min(index, answers.length - 1)]);
  }, '');
  const { client, observer } = makeClient(server.origin, {
    token: undefined,
    apiKey: new Secret('trunk_v2_definition-shapes-key'),
  });
  return { v2: new TrunkV2Client(client), observer };
}

const SHAPES = [
  'with-only-required-fields',
  'with-every-nullable-field-null',
  'with-every-enum-value',
] as const;

describe('every answer shape the v2 definition allows is read', () => {
  it.each(SHAPES)('merge-queues-page-%s.json: every queue is discovered', async (shape) => {
    const name = `merge-queues-page-${shape}.json`;
    const { v2, observer } = await clientAnswering(fixture(name));
    const queues = await v2.listMergeQueues();

    expect(queues.map(({ id, targetBranch }) => [id, targetBranch])).toEqual(
      rowsOf(name).map(({ id, targetBranch }) => [id, targetBranch]),
    );
    expect(queues.every(({ config }) => config.concurrency !== undefined)).toBe(true);
    expect(observer.anomalies).toEqual([]);
    expect(observer.mismatches).toEqual([]);
  });

  it.each(['with-only-required-fields', 'with-every-nullable-field-null'])(
    'merge-queue-%s.json: the queue read by id is read',
    async (shape) => {
      const answer = fixture(`merge-queue-${shape}.json`) as Row;
      const { v2, observer } = await clientAnswering(answer);
      const queue = await v2.getMergeQueue(QUEUE);

      expect(queue).toMatchObject({ id: answer.id, state: answer.state, mode: answer.mode });
      expect(observer.anomalies).toEqual([]);
      expect(observer.mismatches).toEqual([]);
    },
  );

  it('merge-queue-answers-with-every-enum-value.json: each queue read by id is read', async () => {
    const answers = fixture('merge-queue-answers-with-every-enum-value.json') as Row[];
    const { v2, observer } = await clientAnswering(...answers);
    for (const answer of answers) {
      const queue = await v2.getMergeQueue(QUEUE);
      expect(queue).toMatchObject({ state: answer.state, mode: answer.mode });
    }
    expect(observer.anomalies).toEqual([]);
    expect(observer.mismatches).toEqual([]);
  });

  it.each(['with-every-nullable-field-null', 'with-every-enum-value'])(
    'pull-requests-page-%s.json: every pull request is read, with its id and without',
    async (shape) => {
      const name = `pull-requests-page-${shape}.json`;
      const { v2, observer } = await clientAnswering(fixture(name));
      const expected = rowsOf(name).map(({ id, number, queueEntry }) => [
        id,
        number,
        (queueEntry as Row).state,
      ]);
      const withIds = await v2.listQueuePullRequests(QUEUE, { pullRequestIds: true });
      const withoutIds = await v2.listQueuePullRequests(QUEUE, { concludedAfter: LONG_AGO });

      expect(withIds.map(({ id, number, queueEntry }) => [id, number, queueEntry.state])).toEqual(
        expected,
      );
      expect(withoutIds.map(({ number }) => number)).toEqual(expected.map(([, number]) => number));
      expect(observer.anomalies).toEqual([]);
      expect(observer.mismatches).toEqual([]);
    },
  );

  it('pull-requests-page-with-only-required-fields.json: a pull request without its queueEntry (optional in `PullRequest`) is left out and counted, as its entry state is what it is counted by', async () => {
    const { v2, observer } = await clientAnswering(
      fixture('pull-requests-page-with-only-required-fields.json'),
    );
    const rows = await v2.listQueuePullRequests(QUEUE, { states: ['pending'] });

    expect(rows).toEqual([]);
    expect(observer.anomalies).toEqual([
      { endpoint: 'v2/merge-queues/{id}/pull-requests', kind: 'invalid_item', count: 1 },
    ]);
    expect(observer.mismatches).toEqual([]);
  });

  it('a pull request with a queueEntry of only its required fields is read', async () => {
    const [row] = rowsOf('pull-requests-page-with-only-required-fields.json');
    const [entry] = rowsOf('pull-requests-page-with-every-nullable-field-null.json').map(
      ({ queueEntry }) => queueEntry as Row,
    );
    const required = [
      'id',
      'mergeQueueId',
      'state',
      'stateChangedAt',
      'skipsTheLine',
      'allowBatching',
      'direct',
      'readiness',
      'createdAt',
      'updatedAt',
    ];
    const readiness = entry?.readiness as Row;
    const queueEntry = {
      ...Object.fromEntries(required.map((key) => [key, entry?.[key]])),
      readiness: {
        requiresImpactedTargets: readiness.requiresImpactedTargets,
        doesBaseBranchMatch: readiness.doesBaseBranchMatch,
        mergeability: readiness.mergeability,
      },
    };
    const { v2, observer } = await clientAnswering({
      data: [{ ...row, queueEntry }],
      nextCursor: null,
      hasMore: false,
    });
    const rows = await v2.listQueuePullRequests(QUEUE, { pullRequestIds: true });

    expect(rows.map(({ number, queueEntry: { state } }) => [number, state])).toEqual([
      [row?.number, entry?.state],
    ]);
    expect(rows[0]?.queueEntry.priorityName).toBeUndefined();
    expect(observer.anomalies).toEqual([]);
  });

  it.each(SHAPES)('testing-results-page-%s.json: every result is read', async (shape) => {
    const name = `testing-results-page-${shape}.json`;
    const { v2, observer } = await clientAnswering(fixture(name));
    const rows = await v2.listTestingResults(QUEUE, LONG_AGO);

    expect(rows.map((row) => [row.pullRequestNumber, row.testingDurationMs, row.outcome])).toEqual(
      rowsOf(name).map((row) => [row.pullRequestNumber, row.testingDurationMs, row.outcome]),
    );
    expect(observer.anomalies).toEqual([]);
    expect(observer.mismatches).toEqual([]);
  });

  it.each(SHAPES)('verification-runs-page-%s.json: every run is read', async (shape) => {
    const name = `verification-runs-page-${shape}.json`;
    const { v2, observer } = await clientAnswering(fixture(name));
    const runs = await v2.listVerificationRuns(QUEUE, LONG_AGO);

    expect(runs.map(({ id, status, checks }) => [id, status, checks])).toEqual(
      rowsOf(name).map(({ id, status, checks }) => [
        id,
        status,
        (checks as Row[]).map(({ name: check, conclusion }) => ({ name: check, conclusion })),
      ]),
    );
    expect(runs.every((run) => run.unnumberedPullRequests === 0)).toBe(true);
    expect(observer.anomalies).toEqual([]);
    expect(observer.mismatches).toEqual([]);
  });

  it.each(objectFixtures('verification-run'))('%s: each run read by id is read', async (name) => {
    const answers = answersIn(name);
    const { v2, observer } = await clientAnswering(...answers);
    for (const answer of answers) {
      const run = await v2.getVerificationRun(QUEUE, String(answer.id));
      expect(run).toMatchObject({ id: answer.id, status: answer.status });
    }
    expect(observer.anomalies).toEqual([]);
    expect(observer.mismatches).toEqual([]);
  });

  it.each(SHAPES)(
    'queue-entry-history-page-%s.json: every timeline and transition is read',
    async (shape) => {
      const name = `queue-entry-history-page-${shape}.json`;
      const groups = rowsOf(name);
      const { v2, observer } = await clientAnswering(fixture(name));
      const histories = await v2.listQueueEntryHistory(
        groups.map(({ pullRequestId }) => String(pullRequestId)),
      );

      expect(
        histories.map(({ pullRequestId, transitions }) => [
          pullRequestId,
          transitions.map(({ state, reason }) => [state, reason]),
        ]),
      ).toEqual(
        groups.map(({ pullRequestId, transitions }) => [
          String(pullRequestId).toLowerCase(),
          (transitions as Row[]).map(({ state, reason }) => [state, reason ?? undefined]),
        ]),
      );
      expect(observer.anomalies).toEqual([]);
      expect(observer.mismatches).toEqual([]);
    },
  );

  it.each([...SHAPES, 'with-nullable-objects-holding-null-fields'])(
    'tests-page-%s.json: every test is read, with its metrics asked for and without',
    async (shape) => {
      const name = `tests-page-${shape}.json`;
      const { v2, observer } = await clientAnswering(fixture(name));
      const walk = async (metricsPeriod?: '7d') => {
        const tests: unknown[][] = [];
        await v2.listTests(
          metricsPeriod === undefined ? { statuses: ['flaky', 'broken'] } : { metricsPeriod },
          'tests',
          (rows) => tests.push(...rows.map(({ id, repoId, status }) => [id, repoId, status])),
        );
        return tests;
      };
      const expected = rowsOf(name).map(({ id, repoId, status }) => [id, repoId, status]);

      expect(await walk()).toEqual(expected);
      expect(await walk('7d')).toEqual(expected);
      // Only-required rows lack `metrics`, "Returned only when `include=metrics` is set": asked
      // for and absent, the row is kept and its missing metrics counted.
      const missingMetrics = rowsOf(name).filter((row) => !('metrics' in row)).length;
      expect(observer.anomalies).toEqual(
        missingMetrics === 0
          ? []
          : [{ endpoint: 'v2/tests', kind: 'invalid_field', count: missingMetrics }],
      );
      expect(observer.mismatches).toEqual([]);
    },
  );

  it.each(SHAPES)('test-collections-page-%s.json: every collection is read', async (shape) => {
    const name = `test-collections-page-${shape}.json`;
    const { v2, observer } = await clientAnswering(fixture(name));
    const { collections, more } = await v2.listTestCollections();

    expect(
      collections.map(({ id, name: collection, testCaseCount }) => [id, collection, testCaseCount]),
    ).toEqual(
      rowsOf(name).map(({ id, name: collection, testCaseCount }) => [
        id,
        collection,
        testCaseCount,
      ]),
    );
    expect(more).toBe(false);
    expect(observer.anomalies).toEqual([]);
    expect(observer.mismatches).toEqual([]);
  });

  it.each(SHAPES)('repositories-page-%s.json: the repository is found', async (shape) => {
    const { v2, observer } = await clientAnswering(fixture(`repositories-page-${shape}.json`));

    expect(await v2.hasRepository('https://github.com/acme/widgets')).toBe(true);
    expect(observer.anomalies).toEqual([]);
    expect(observer.mismatches).toEqual([]);
  });

  it.each(objectFixtures('repository'))('%s: each repository is read and named', async (name) => {
    const answers = answersIn(name);
    const { v2, observer } = await clientAnswering(...answers);
    for (const answer of answers) {
      const repository = await v2.getRepository(String(answer.id));
      expect(repository).toMatchObject({ path: answer.path });
      expect(repository && repositoryNameOf(repository)).toMatch(/^[a-z0-9.-]+\/acme\/widgets/);
    }
    expect(observer.anomalies).toEqual([]);
    expect(observer.mismatches).toEqual([]);
  });
});
