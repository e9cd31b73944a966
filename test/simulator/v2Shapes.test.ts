// The shapes Trunk's published v2 definition allows, each seen at a realistic rate over a few
// simulated hours: repositories on the providers' own hosts without `host`, uuid ids stable per
// repository, entries without one of their priority fields, not-mergeable entries without
// details, tests no monitor classified, tests without parent, class or file, testing results
// without a classification or a run, and a resubmitted entry keeping its first submission.
import { describe, expect, it } from 'vitest';
import type { SimulatedRepository } from '../../src/simulator/repositories.js';
import { createSimulatorWorld } from '../../src/simulator/world.js';
import { getOne, getPage, startV2Simulator, walk } from './v2Harness.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const LIVE = 'state=notReady,pending,testing,testsPassed,pendingFailure';

/** Share of `part` in `whole`, checked to lie in [low, high]. */
function expectShare(part: number, whole: number, low: number, high: number, what: string) {
  expect(whole, what).toBeGreaterThan(0);
  expect(part / whole, `${what}: ${part} of ${whole}`).toBeGreaterThanOrEqual(low);
  expect(part / whole, `${what}: ${part} of ${whole}`).toBeLessThanOrEqual(high);
}

describe('v2 repositories', () => {
  it('leave host null on the providers’ own hosts and set it for a self-hosted one', async () => {
    const hosts = [
      ['github.com', 'github', null],
      ['gitlab.com', 'gitlab', null],
      ['bitbucket.org', 'bitbucket', null],
      ['github.acme.corp', 'github', 'github.acme.corp'],
      ['gitlab.acme.dev', 'gitlab', 'gitlab.acme.dev'],
      ['git.acme.dev', 'unknown', 'git.acme.dev'],
    ] as const;
    const repositories: SimulatedRepository[] = hosts.map(([host], index) => ({
      host,
      owner: 'acme',
      name: `repo-${index}`,
      branches: index % 2 === 0 ? ['main'] : [],
    }));
    const world = createSimulatorWorld({ seed: 41, repositories, warmUpSeconds: 600 });
    const simulator = await startV2Simulator({ world });
    const collections = await walk(simulator, '/v2/test-collections');
    const { rows: tests } = await walk(simulator, '/v2/tests?limit=100');
    const { rows: queues } = await walk(simulator, '/v2/merge-queues');
    for (const [index, [host, provider, shownHost]] of hosts.entries()) {
      const ofRepository = tests.filter((test) =>
        collections.rows.some(
          (collection) =>
            collection.id === test.testCollectionId && collection.name === `acme/repo-${index}`,
        ),
      );
      const repoId = String(ofRepository[0]?.repoId);
      expect(repoId).toMatch(UUID);
      expect(new Set(ofRepository.map((test) => test.repoId))).toEqual(new Set([repoId]));
      expect(await getOne(simulator, `/v2/repositories/${repoId}`)).toMatchObject({
        provider,
        host: shownHost,
        path: `acme/repo-${index}`,
        url: `https://${host}/acme/repo-${index}`,
      });
      const queue = queues.find(
        (row) => row.repositoryUrl === `https://${host}/acme/repo-${index}`,
      );
      if (index % 2 === 0) expect(queue?.repositoryId).toBe(repoId);
      else expect(queue).toBeUndefined();
    }
  });

  it('keep one uuid per repository name, whatever the seed; some are not synced yet', async () => {
    const repositories: SimulatedRepository[] = Array.from({ length: 80 }, (_unused, index) => ({
      host: 'github.com',
      owner: 'acme',
      name: `service-${index}`,
      branches: ['main'],
      quarantinedTests: 0,
    }));
    const idsOf = async (seed: number) => {
      const world = createSimulatorWorld({ seed, repositories, warmUpSeconds: 60 });
      const simulator = await startV2Simulator({ world });
      const { rows } = await walk(simulator, '/v2/merge-queues?limit=100');
      return { simulator, ids: rows.map((row) => String(row.repositoryId)) };
    };
    const first = await idsOf(1);
    const second = await idsOf(2);
    expect(second.ids).toEqual(first.ids);
    expect(new Set(first.ids).size).toBe(80);
    let unsynced = 0;
    for (const id of first.ids) {
      expect(id).toMatch(UUID);
      const repository = await getOne(first.simulator, `/v2/repositories/${id}`);
      expect(repository.host).toBeNull();
      // Not synced yet: both fields null together.
      expect(repository.defaultBranch === null).toBe(repository.isPrivate === null);
      if (repository.defaultBranch === null) unsynced += 1;
    }
    expectShare(unsynced, 80, 0.02, 0.25, 'repositories not synced');
  });
});

describe('v2 rows over a few simulated hours', () => {
  it('show every optional shape of queue entries at a realistic rate, and never a forbidden one', async () => {
    const simulator = await startV2Simulator({ seed: 42 });
    const { world } = simulator;
    const ids = (await getPage(simulator, '/v2/merge-queues')).data.map((row) => String(row.id));
    const entries = new Map<string, Record<string, unknown>>();
    // The host refuses a PR now and then only: many more, so the share of verdicts without
    // details can be measured.
    for (const { model } of world.mergeQueues) {
      for (let count = 0; count < 40; count++) {
        model.submit(world.now()).readiness.mergeability = 'not_mergeable';
      }
    }
    for (let read = 0; read < 24; read++) {
      world.advance(world.now() + 900);
      for (const id of ids) {
        const { rows } = await walk(simulator, `/v2/merge-queues/${id}/pull-requests?${LIVE}`);
        for (const row of rows)
          entries.set(String(row.id), row.queueEntry as Record<string, unknown>);
      }
    }
    const all = [...entries.values()];
    const readiness = (entry: Record<string, unknown>) =>
      entry.readiness as Record<string, unknown>;
    const withoutValue = all.filter((entry) => !('priorityValue' in entry)).length;
    const withoutName = all.filter((entry) => !('priorityName' in entry)).length;
    expect(
      all.filter((entry) => !('priorityValue' in entry) && !('priorityName' in entry)),
    ).toEqual([]);
    expectShare(withoutValue, all.length, 0.005, 0.08, 'entries without priorityValue');
    expectShare(withoutName, all.length, 0.005, 0.08, 'entries without priorityName');
    const notMergeable = all.filter((entry) => readiness(entry).mergeability === 'notMergeable');
    const withoutDetails = notMergeable.filter(
      (entry) => !('mergeabilityDetails' in readiness(entry)),
    );
    expectShare(
      withoutDetails.length,
      notMergeable.length,
      0.03,
      0.4,
      'notMergeable without details',
    );
    // Absent, not false, on a list read.
    expect(all.filter((entry) => 'hasImpactedTargets' in readiness(entry))).toEqual([]);
  });

  it('show tests no monitor classified and tests without parent, class or file', async () => {
    const simulator = await startV2Simulator({ seed: 43 });
    simulator.world.advance(simulator.world.now() + 3 * 3600);
    const { rows } = await walk(simulator, '/v2/tests?limit=100');
    expectShare(
      rows.filter((row) => row.statusSince === null).length,
      rows.length,
      0.1,
      0.6,
      'statusSince null',
    );
    // Jest reports no class, Go no class and sometimes no file, JUnit sometimes no parent.
    for (const [field, most] of [
      ['parentName', 0.3],
      ['className', 0.9],
      ['file', 0.1],
    ] as const) {
      const empty = rows.filter((row) => row[field] === '').length;
      expectShare(empty, rows.length, 0.005, most, `${field} ""`);
      expect(rows.every((row) => typeof row[field] === 'string')).toBe(true);
    }
    const withVariant = rows.filter((row) => row.variant !== '');
    expect(withVariant.every((row) => String(row.crossVariantId).match(UUID) !== null)).toBe(true);
    expect(
      rows.filter((row) => row.variant === '').every((row) => row.crossVariantId === null),
    ).toBe(true);
  });

  it('show testing results without a classification or a run now and then', async () => {
    const simulator = await startV2Simulator({ seed: 44 });
    const { world } = simulator;
    world.advance(world.now() + 6 * 3600);
    const since = new Date((world.now() - 8 * 3600) * 1000).toISOString();
    const rows: Record<string, unknown>[] = [];
    for (const queue of (await getPage(simulator, '/v2/merge-queues')).data) {
      rows.push(
        ...(
          await walk(
            simulator,
            `/v2/merge-queues/${String(queue.id)}/testing-results?since=${since}`,
          )
        ).rows,
      );
    }
    const unclassified = rows.filter((row) => !('outcome' in row));
    expectShare(unclassified.length, rows.length, 0.002, 0.06, 'results without a classification');
    expect(unclassified.every((row) => !('entryConclusion' in row))).toBe(true);
    const withoutRun = rows.filter((row) => !('verificationRunId' in row)).length;
    expectShare(withoutRun, rows.length, 0.01, 0.12, 'results without a verification run');
    // Once the entry concluded: an entry still in the queue has no conclusion.
    expect(rows.some((row) => 'outcome' in row && !('entryConclusion' in row))).toBe(true);
  });

  it('keep a resubmitted entry, with its first submission as createdAt', async () => {
    const simulator = await startV2Simulator({ seed: 45 });
    const { world } = simulator;
    const [queue] = world.mergeQueues;
    const id = String((await getPage(simulator, '/v2/merge-queues')).data[0]?.id);
    if (queue === undefined) throw new Error('no queue');
    const pr = queue.model.submit(world.now());
    const path = `/v2/merge-queues/${id}/pull-requests?limit=100`;
    const entryOf = async () =>
      (await walk(simulator, path)).rows.find((row) => row.number === pr.number)?.queueEntry as
        Record<string, unknown> | undefined;
    const first = await entryOf();
    world.advance(world.now() + 60);
    queue.model.fail(pr, world.now());
    world.advance(world.now() + 600);
    queue.model.resubmit(pr, world.now());
    const again = await entryOf();
    expect(again).toMatchObject({ id: first?.id, createdAt: first?.createdAt, state: 'notReady' });
    expect(Date.parse(String(again?.stateChangedAt))).toBeGreaterThan(
      Date.parse(String(first?.createdAt)),
    );
    expect(world.statistics().resubmissions).toBeGreaterThan(1);
  });
});
