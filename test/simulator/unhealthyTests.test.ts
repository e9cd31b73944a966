// Tests that are flaky or broken but not quarantined, as the world holds them and v2 lists them:
// the status filter and its counts against the model's truth, statusSince moving as monitors
// flag and clear tests, their webhooks, and the repository that uses Flaky Tests only.
import { describe, expect, it } from 'vitest';
import type { QuarantineStatus } from '../../src/simulator/quarantineModel.js';
import { webhookPayloads } from '../../src/simulator/webhookPayloads.js';
import { createSimulatorWorld, type SimulatorWorld } from '../../src/simulator/world.js';
import { parseWebhookEvent } from '../../src/trunk/webhookEvents.js';
import { post } from './harness.js';
import { getPage, startV2Simulator, walk } from './v2Harness.js';

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
const unhealthy = (status: QuarantineStatus) => status !== 'HEALTHY';

/** The ids of the world's unhealthy tests, quarantined or not. */
function unhealthyTruth(world: SimulatorWorld) {
  const quarantined: string[] = [];
  const notQuarantined: string[] = [];
  for (const { quarantine, unquarantined } of world.testCollections) {
    for (const test of quarantine.tests) {
      if (unhealthy(test.status)) quarantined.push(test.testCaseId);
    }
    for (const test of unquarantined.tests) {
      if (unhealthy(test.status)) notQuarantined.push(test.testCaseId);
    }
  }
  return { quarantined, notQuarantined };
}

describe('unhealthy tests that are not quarantined', () => {
  it('are listed by the status filter, with the counts the model holds', async () => {
    const simulator = await startV2Simulator({ seed: 31 });
    const { world } = simulator;
    for (const hours of [0, 3]) {
      world.advance(world.now() + hours * 3600);
      const truth = unhealthyTruth(world);
      const total = async (query: string) =>
        (await getPage(simulator, `/v2/tests?${query}&includeTotal=true&limit=1`)).total;
      expect(await total('status=flaky,broken')).toBe(
        truth.quarantined.length + truth.notQuarantined.length,
      );
      expect(await total('status=flaky,broken&quarantineState=notQuarantined')).toBe(
        truth.notQuarantined.length,
      );
      expect(await total('status=flaky,broken&quarantineState=quarantined')).toBe(
        truth.quarantined.length,
      );
      const { rows } = await walk(
        simulator,
        '/v2/tests?status=flaky,broken&quarantineState=notQuarantined&limit=100',
      );
      expect(rows.map((row) => String(row.id)).sort()).toEqual([...truth.notQuarantined].sort());
      expect(rows.every((row) => row.quarantinedSince === null)).toBe(true);
      expect(new Set(rows.map((row) => row.status))).toEqual(new Set(['flaky', 'broken']));
      // In every repository, the one without a merge queue included.
      expect(new Set(rows.map((row) => row.repoId)).size).toBe(world.repositories.length);
    }
  });

  it('change status over hours, statusSince moving with each change', async () => {
    const simulator = await startV2Simulator({ seed: 32 });
    const { world } = simulator;
    const changes: { id: string; to: string; from: string; at: number }[] = [];
    world.subscribe((event) => {
      if (event.kind !== 'test') return;
      const { test, previous, at } = event.change;
      changes.push({ id: test.testCaseId, to: test.status, from: previous, at });
    });
    const start = world.now();
    world.advance(start + 6 * 3600);
    const { rows } = await walk(simulator, '/v2/tests?quarantineState=notQuarantined&limit=100');
    const byId = new Map(rows.map((row) => [String(row.id), row]));
    const last = new Map(changes.map((change) => [change.id, change]));
    expect(last.size).toBeGreaterThan(10);
    for (const [id, change] of last) {
      expect(byId.get(id)).toMatchObject({
        status: change.to.toLowerCase(),
        statusSince: iso(change.at),
      });
    }
    // Tests turn flaky and broken, and healthy again.
    const moves = new Set(changes.map((change) => `${change.from}->${change.to}`));
    for (const move of ['HEALTHY->FLAKY', 'FLAKY->HEALTHY', 'FLAKY->BROKEN', 'BROKEN->HEALTHY']) {
      expect(moves).toContain(move);
    }
    // Those no monitor ever classified have no statusSince; none of them changed.
    const unclassified = rows.filter((row) => row.statusSince === null);
    expect(unclassified.length).toBeGreaterThan(0);
    expect(unclassified.every((row) => row.status === 'healthy' && !last.has(String(row.id)))).toBe(
      true,
    );
  });

  it('announce each status change by webhook, as quarantined tests do, with investigations', () => {
    const world = createSimulatorWorld({ seed: 33 });
    const types: Record<string, number> = {};
    let turnedUnhealthy = 0;
    world.subscribe((event) => {
      if (event.kind !== 'test') return;
      if (unhealthy(event.change.test.status)) turnedUnhealthy += 1;
      for (const payload of webhookPayloads(event)) {
        const parsed = parseWebhookEvent(JSON.parse(JSON.stringify(payload.body)));
        if (!parsed.ok) throw new Error(`${payload.type} does not parse: ${parsed.problem}`);
        expect(parsed.event.kind).toBe('flaky_tests');
        types[payload.type] = (types[payload.type] ?? 0) + 1;
        const testCase = payload.body.test_case as { quarantined: boolean };
        expect(testCase.quarantined).toBe(false);
      }
    });
    const before = world.statistics().testStatusChanges;
    world.advance(world.now() + 24 * 3600);
    expect(types['v2.test_case.status_changed']).toBe(types['test_case.monitor_status_changed']);
    expect(types['v2.test_case.status_changed']).toBe(
      world.statistics().testStatusChanges - before,
    );
    // About three in ten tests that turn flaky or broken get an investigation at once.
    const investigations = types['test_case.investigation_completed'] ?? 0;
    expect(investigations).toBeGreaterThan(turnedUnhealthy * 0.15);
    expect(investigations).toBeLessThan(turnedUnhealthy * 0.45);
  });
});

describe('a repository that uses Flaky Tests without a merge queue', () => {
  it('has a quarantine list on v1 and tests on v2, and no merge queue', async () => {
    const simulator = await startV2Simulator({ seed: 34 });
    const repository = simulator.world.repositories.find((each) => each.branches.length === 0);
    if (repository === undefined) throw new Error('no repository without a merge queue');
    expect(repository).toMatchObject({ host: 'gitlab.acme.dev', name: 'storefront' });
    const repo = { host: repository.host, owner: repository.owner, name: repository.name };
    const v1 = await post(simulator, '/flaky-tests/list-quarantined-tests', {
      repo,
      org_url_slug: 'acme',
      page_query: { page_size: 100 },
    });
    expect(v1.status).toBe(200);
    const total = (v1.json as { page: { total_rows: number } }).page.total_rows;
    expect(total).toBeGreaterThan(0);
    expect((await post(simulator, '/getQueue', { repo, targetBranch: 'main' })).status).toBe(404);

    const { rows: queues } = await walk(simulator, '/v2/merge-queues');
    expect(queues.map((queue) => queue.repositoryUrl)).not.toContain(
      'https://gitlab.acme.dev/acme/storefront',
    );
    const collection = (await getPage(simulator, '/v2/test-collections?q=storefront')).data[0];
    const quarantined = await getPage(
      simulator,
      `/v2/tests?testCollectionId=${String(collection?.id)}&quarantineState=quarantined&includeTotal=true&limit=1`,
    );
    expect(quarantined.total).toBe(total);
  });
});
