// Discovery end to end: an exporter with an API key and no target listed finds the simulator's
// merge queues through API v2, polls them labelled as configured ones would be, drops a queue that
// disappears, keeps its list when a read fails, and merges what it finds with configured targets.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FaultPlan } from '../../src/simulator/faults.js';
import type { RunningSimulator } from '../../src/simulator/server.js';
import type { Sample } from '../support/exposition.js';
import { configYaml, startTestExporter } from '../support/exporterHarness.js';
import { startTestSimulator } from '../support/simulator.js';
import { repositoryKey } from '../../src/simulator/repositories.js';

const API_KEY = 'trunk_v2_discovery-key';
const TOKEN = 'sim-token-4b1d';

function discoveryYaml(simulator: RunningSimulator, targets: string, discovery: string): string {
  return configYaml({
    apiUrl: simulator.origin,
    token: null,
    apiKey: API_KEY,
    targets,
    polling: '  mergeQueueIntervalSeconds: 0.2\n  flakyTestsIntervalSeconds: 600',
  })
    .replace(
      'targets:\n',
      `discovery:\n  enabled: true\n  intervalSeconds: 0.2\n${discovery}targets:\n`,
    )
    .replace('\n  orgUrlSlug: acme', '');
}

function queuesUp(samples: readonly Sample[]): string[] {
  return samples
    .filter(
      (sample) =>
        sample.name === 'trunk_merge_queue_state' &&
        sample.labels.state === 'running' &&
        sample.value >= 0,
    )
    .map((sample) => `${sample.labels.repo} ${sample.labels.branch}`)
    .sort();
}

/** The discovered merge queues the page reports; its registry part may lag the snapshots by a second. */
function discoveredQueues(samples: readonly Sample[]): number | undefined {
  return gauge(samples, 'trunk_exporter_discovered_targets', { kind: 'merge_queue' });
}

function gauge(samples: readonly Sample[], name: string, labels: Record<string, string> = {}) {
  return samples.find(
    (sample) =>
      sample.name === name &&
      Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  )?.value;
}

async function listOfQueues(simulator: RunningSimulator): Promise<{ data: unknown[] }> {
  const response = await fetch(`${simulator.origin}/v2/merge-queues?limit=100`, {
    headers: { authorization: `Bearer ${API_KEY}` },
  });
  return (await response.json()) as { data: unknown[] };
}

describe('discovery', () => {
  it('polls every queue of the organization with no target listed, and marks them discovered', async () => {
    const { world, simulator } = await startTestSimulator({
      seed: 3,
      token: TOKEN,
      apiKey: API_KEY,
    });
    const expected = world.repositories
      .flatMap((repository) =>
        repository.branches.map(
          (branch) => `${repository.host}/${repository.owner}/${repository.name} ${branch}`,
        ),
      )
      .sort();
    // A test list whose read failed (a timeout on a busy machine) is read again an interval later.
    const exporter = await startTestExporter(
      discoveryYaml(simulator, '  []\n', '').replace(
        'flakyTestsIntervalSeconds: 600',
        'flakyTestsIntervalSeconds: 1',
      ),
    );
    // Until a discovery read every list (its last success, 0 before, is stamped only then): the
    // queues alone leave out the repository that has tests and no merge queue.
    const samples = await exporter.waitFor(
      (current) =>
        queuesUp(current).length === expected.length &&
        discoveredQueues(current) === expected.length &&
        (gauge(current, 'trunk_exporter_discovery_last_success_timestamp_seconds') ?? 0) > 0,
      'every queue of the world on the page, from a discovery that read both lists',
    );
    expect(queuesUp(samples)).toEqual(expected);
    expect(gauge(samples, 'trunk_exporter_discovered_targets', { kind: 'merge_queue' })).toBe(
      expected.length,
    );
    // Every repository with tests is found, the one with Flaky Tests and no merge queue too.
    expect(world.repositories.some((repository) => repository.branches.length === 0)).toBe(true);
    expect(gauge(samples, 'trunk_exporter_discovered_targets', { kind: 'flaky_tests' })).toBe(
      world.repositories.length,
    );
    expect(
      gauge(samples, 'trunk_exporter_discovery_last_success_timestamp_seconds'),
    ).toBeGreaterThan(0);
    const landing = await exporter.scrape('/');
    expect(landing).toContain('(discovered)');
    const calls = Object.keys(simulator.requestCountsByMethod());
    expect(calls.filter((call) => !call.startsWith('GET '))).toEqual([]);
  });

  it('shows every flaky-tests repository of the organization with its counts, with only a key and discovery', async () => {
    const { world, simulator } = await startTestSimulator({
      seed: 3,
      token: TOKEN,
      apiKey: API_KEY,
    });
    world.advance(world.now() + 600);
    const exporter = await startTestExporter(discoveryYaml(simulator, '  []\n', ''));
    const repos = world.testCollections.map(({ repository }) => repositoryKey(repository));
    const samples = await exporter.waitFor(
      (current) =>
        repos.every(
          (repo) => gauge(current, 'trunk_flaky_tests_quarantined', { repo }) !== undefined,
        ),
      'every repository’s quarantine list on the page',
    );
    for (const { repository, quarantine, unquarantined } of world.testCollections) {
      const repo = repositoryKey(repository);
      expect(gauge(samples, 'trunk_flaky_tests_quarantined', { repo }), repo).toBe(
        quarantine.tests.length,
      );
      // Flaky and broken: quarantined or not, by the status Trunk lists.
      const all = [...quarantine.tests, ...unquarantined.tests];
      for (const status of ['flaky', 'broken']) {
        expect(
          gauge(samples, 'trunk_flaky_tests_unhealthy', { repo, status }),
          `${repo} ${status}`,
        ).toBe(all.filter((test) => test.status.toLowerCase() === status).length);
      }
    }
  });

  it('estimates the API budget from the discovered targets, and logs it once there are some', async () => {
    const { world, simulator } = await startTestSimulator({
      seed: 3,
      token: TOKEN,
      apiKey: API_KEY,
    });
    const queues = world.repositories.flatMap((repository) => repository.branches).length;
    const exporter = await startTestExporter(discoveryYaml(simulator, '  []\n', ''));
    const samples = await exporter.waitFor(
      (current) => discoveredQueues(current) === queues,
      'every queue discovered',
    );
    // At the least, one pull-requests read per discovered queue and merge-queue interval (0.2 s).
    const pullRequests = { endpoint: 'v2/merge-queues/{id}/pull-requests' };
    expect(
      gauge(samples, 'trunk_exporter_api_budget_requests_per_second', pullRequests),
    ).toBeGreaterThan(queues / 0.2);
    const loads = exporter
      .logs()
      .split('\n')
      .filter((line) => line.includes('expected API load'))
      .map(
        (line) =>
          (JSON.parse(line) as { expectedRequestsPerSecond: number }).expectedRequestsPerSecond,
      );
    expect(loads.length).toBeGreaterThan(0);
    expect(loads.every((load) => load > queues / 0.2)).toBe(true);
  });

  it('drops a queue that disappears, and keeps the last list while reads fail', async () => {
    const faults = new FaultPlan();
    const { world, simulator } = await startTestSimulator({
      seed: 3,
      token: TOKEN,
      apiKey: API_KEY,
      faults,
    });
    const exporter = await startTestExporter(
      discoveryYaml(simulator, '  []\n', '  flakyTests: false\n'),
      'info',
    );
    const all = world.repositories.reduce((sum, repository) => sum + repository.branches.length, 0);
    await exporter.waitFor((current) => queuesUp(current).length === all, 'every queue');

    // Reads that fail keep every queue on the page.
    faults.inject(
      'v2/merge-queues',
      { kind: 'status', status: 503, body: 'unavailable' },
      { times: 20 },
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(queuesUp(await exporter.samples())).toHaveLength(all);

    // A list without the first queue: its series leave the page.
    faults.clear();
    const list = await listOfQueues(simulator);
    const [gone, ...rest] = list.data as { repositoryUrl: string; targetBranch: string }[];
    if (gone === undefined) throw new Error('no queue');
    faults.inject(
      'v2/merge-queues',
      {
        kind: 'status',
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify({ data: rest, nextCursor: null, hasMore: false }),
      },
      { times: 1000 },
    );
    const goneLabel = `${gone.repositoryUrl.replace('https://', '')} ${gone.targetBranch}`;
    const samples = await exporter.waitFor(
      (current) => queuesUp(current).length === all - 1 && discoveredQueues(current) === all - 1,
      'the vanished queue gone',
    );
    expect(queuesUp(samples)).not.toContain(goneLabel);
    expect(gauge(samples, 'trunk_exporter_discovered_targets', { kind: 'merge_queue' })).toBe(
      all - 1,
    );

    // Listed again: polled again, and the log line names it, one target in the singular. (The
    // line begins "discovery: ", which the scrubber takes for a piece of this test's key.)
    faults.clear();
    await exporter.waitFor((current) => queuesUp(current).length === all, 'the queue back');
    const changes = exporter
      .logs()
      .split('\n')
      .filter((line) => line.includes('"added":'))
      .map((line) => (JSON.parse(line) as { msg: string }).msg.replace(/^.*?: /, ''));
    const named = goneLabel.replace(' ', '@');
    expect(changes).toContain(`0 targets added, 1 removed (${named})`);
    expect(changes).toContain(`1 target added (${named}), 0 removed`);
  });

  it('merges discovered queues with configured ones: one target per key, configured stay configured', async () => {
    const { world, simulator } = await startTestSimulator({
      seed: 3,
      token: TOKEN,
      apiKey: API_KEY,
    });
    const exporter = await startTestExporter(
      discoveryYaml(
        simulator,
        '  - repo: github.com/acme/web\n    branches: [main]\n',
        "  repos: ['github.com/acme/*']\n  branches: [main]\n  flakyTests: false\n",
      ),
    );
    const expected = world.repositories
      .filter((repository) => repository.owner === 'acme' && repository.branches.includes('main'))
      .map((repository) => `${repository.host}/${repository.owner}/${repository.name} main`)
      .sort();
    const samples = await exporter.waitFor(
      (current) =>
        queuesUp(current).length === expected.length &&
        discoveredQueues(current) === expected.length - 1,
      'the matching queues',
    );
    expect(queuesUp(samples)).toEqual(expected);
    expect(gauge(samples, 'trunk_exporter_discovered_targets', { kind: 'merge_queue' })).toBe(
      expected.length - 1,
    );
  });

  it('divides discovered queues between shards like configured ones', async () => {
    const { world, simulator } = await startTestSimulator({
      seed: 3,
      token: TOKEN,
      apiKey: API_KEY,
    });
    const all = world.repositories.reduce((sum, repository) => sum + repository.branches.length, 0);
    const shard = (index: number) =>
      `${discoveryYaml(simulator, '  []\n', '  flakyTests: false\n')}\nsharding:\n  shard: ${index}\n  totalShards: 2\n`;
    const [first, second] = await Promise.all([
      startTestExporter(shard(0)),
      startTestExporter(shard(1)),
    ]);
    const polled = async (exporter: typeof first) => {
      await exporter.waitUntilReady();
      const samples = await exporter.waitFor((current) => {
        const found = gauge(current, 'trunk_exporter_discovered_targets', { kind: 'merge_queue' });
        const read = gauge(current, 'trunk_exporter_discovery_last_success_timestamp_seconds');
        return read !== undefined && read > 0 && queuesUp(current).length === found;
      }, 'every discovered target polled');
      return queuesUp(samples);
    };
    const [a, b] = [await polled(first), await polled(second)];
    expect(a.filter((queue) => b.includes(queue))).toEqual([]);
    expect([...a, ...b].sort()).toHaveLength(all);
  });

  it('follows a reload: discovery turned off drops what it found, configured targets stay', async () => {
    const { simulator } = await startTestSimulator({ seed: 3, token: TOKEN, apiKey: API_KEY });
    const directory = await mkdtemp(join(tmpdir(), 'trunk-exporter-discovery-'));
    const configFile = join(directory, 'config.yaml');
    const configured = '  - repo: github.com/acme/web\n    branches: [main]\n';
    const on = discoveryYaml(simulator, configured, '  flakyTests: false\n');
    await writeFile(configFile, on);
    const exporter = await startTestExporter(on, 'info', configFile);
    // The world's four queues: web main (also configured), web release, api main, mobile develop.
    const before = await exporter.waitFor(
      (current) => queuesUp(current).length === 4,
      'the four queues',
    );
    await writeFile(configFile, on.replace('  enabled: true', '  enabled: false'));
    const reloaded = await exporter.exporter.reload('HTTP');
    expect(reloaded.applied).toBe(true);
    const samples = await exporter.waitFor(
      (current) => queuesUp(current).length === 1,
      'only the configured queue',
    );
    expect(queuesUp(samples)).toEqual(['github.com/acme/web main']);
    expect(gauge(samples, 'trunk_exporter_discovered_targets', { kind: 'merge_queue' })).toBe(0);
    // operations.md: "One log line per reload says what changed: targets added and removed by
    // name": the discovered queues that left, none added (web was polled before and after).
    const gone = queuesUp(before)
      .filter((queue) => queue !== 'github.com/acme/web main')
      .map((queue) => queue.replace(' ', '@'));
    expect(reloaded.message).toContain(`0 targets added, ${String(gone.length)} removed (`);
    for (const queue of gone) expect(reloaded.message).toContain(queue);
  });
});
