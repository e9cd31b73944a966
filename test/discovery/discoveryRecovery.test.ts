// Discovery that fails, and recovers, through a real exporter on loopback: readiness waits for
// discovery's first read, whatever its outcome, and says so while it waits; discovery.repos globs
// match a repository however Trunk cases its name; a reload that repairs the API key reads the
// organization's queues again at once.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { select, type Sample } from '../support/exposition.js';
import { configYaml, startTestExporter } from '../support/exporterHarness.js';
import { pageAt, startFakeV2 } from '../support/fakeTrunkV2.js';
import { startTestSimulator } from '../support/simulator.js';
import { cleanUp } from '../trunk/harness.js';

afterEach(cleanUp);

const API_KEY = 'trunk_v2_discovery-recovery';

/** A key-only configuration with discovery on (read every 300 s, so only its first read counts). */
function discoveryYaml(
  apiUrl: string,
  options: { targets?: string; discovery?: string; apiKey?: string; polling?: string } = {},
): string {
  return configYaml({
    apiUrl,
    token: null,
    apiKey: options.apiKey ?? API_KEY,
    targets: options.targets ?? '  []',
    polling:
      options.polling ?? '  mergeQueueIntervalSeconds: 0.2\n  flakyTestsIntervalSeconds: 600',
  }).replace(
    'targets:\n',
    `discovery:\n  enabled: true\n  intervalSeconds: 300\n${options.discovery ?? ''}targets:\n`,
  );
}

const queuesOnThePage = (samples: readonly Sample[]) =>
  select(samples, 'trunk_merge_queue_state', { state: 'running' })
    .map((sample) => `${sample.labels.repo} ${sample.labels.branch}`)
    .sort();

const quarantinedRepos = (samples: readonly Sample[]) =>
  select(samples, 'trunk_flaky_tests_quarantined', {})
    .map((sample) => sample.labels.repo ?? '')
    .sort();

/**
 * An exporter started with a revoked key (`shown` of its page empty), whose file a reload then
 * gives the right key. Every read is due only after 300 s: a failed one would stay the answer
 * until then, so what shows after the reload was read because of it.
 */
async function repairedKeyExporter(
  discovery: string,
  shown: (samples: readonly Sample[]) => readonly string[],
) {
  const { world, simulator } = await startTestSimulator({
    seed: 3,
    token: 'v1-unused',
    apiKey: API_KEY,
  });
  const directory = await mkdtemp(join(tmpdir(), 'trunk-exporter-discovery-recovery-'));
  const configFile = join(directory, 'config.yaml');
  const revoked = discoveryYaml(simulator.origin, {
    apiKey: 'trunk_v2_revoked',
    polling: '  mergeQueueIntervalSeconds: 300\n  flakyTestsIntervalSeconds: 300',
    discovery,
  });
  await writeFile(configFile, revoked);
  const exporter = await startTestExporter(revoked, 'info', configFile);
  await exporter.waitUntilReady();
  expect(shown(await exporter.samples())).toEqual([]);
  await writeFile(configFile, revoked.replace('trunk_v2_revoked', API_KEY));
  expect((await exporter.exporter.reload('HTTP')).applied).toBe(true);
  return { world, exporter };
}

async function readyz(url: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`${url}/readyz`);
  return { status: response.status, body: await response.text() };
}

describe('discovery that fails and recovers', () => {
  it('turns ready once discovery has been tried, though it failed, and says what it waits for until then', async () => {
    const fake = await startFakeV2({ queues: pageAt('merge-queues-of-an-organization.json') });
    // A key Trunk refuses: every read fails, discovery's and the configured queue's.
    fake.fail(/^\/v2\//, 401);
    fake.hold(/^\/v2\/merge-queues$/);
    const exporter = await startTestExporter(
      discoveryYaml(fake.origin, {
        targets: '  - repo: github.com/acme/web\n    branches: [main]',
      }),
    );
    const deadline = Date.now() + 10_000;
    while (fake.held() === 0) {
      if (Date.now() > deadline) throw new Error('the list of queues was never asked for');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(await readyz(exporter.exporter.url)).toEqual({
      status: 503,
      body: "not ready: waiting for discovery's first read of the organization's lists; 1 of 1 targets still waiting for their first poll\n",
    });
    // Discovery and the configured queue's poll both fail: that is an outcome.
    fake.release();
    fake.hold(undefined);
    await exporter.waitUntilReady();
    expect(await readyz(exporter.exporter.url)).toEqual({ status: 200, body: 'ready\n' });
  });

  it('matches discovery.repos globs without regard to letter case, as repositories are compared', async () => {
    // The organization's queues: github.com/Acme/Web main, github.com/acme/api main and release.
    const fake = await startFakeV2({ queues: pageAt('merge-queues-of-an-organization.json') });
    const exporter = await startTestExporter(
      discoveryYaml(fake.origin, {
        discovery: "  repos: ['github.com/acme/*']\n  branches: [main]\n  flakyTests: false\n",
      }),
    );
    const samples = await exporter.waitFor(
      (current) => queuesOnThePage(current).length === 2,
      'the two main branches',
    );
    expect(queuesOnThePage(samples)).toEqual([
      'github.com/Acme/Web main',
      'github.com/acme/api main',
    ]);
  });

  it('reads the organization again at once after a reload that repairs the API key, not at the next discovery interval', async () => {
    const { world, exporter } = await repairedKeyExporter('  flakyTests: false\n', queuesOnThePage);
    const queues = world.repositories.flatMap((repository) =>
      repository.branches.map(
        (branch) => `${repository.host}/${repository.owner}/${repository.name} ${branch}`,
      ),
    );
    const samples = await exporter.waitFor(
      (current) => queuesOnThePage(current).length === queues.length,
      'every queue of the organization',
    );
    expect(queuesOnThePage(samples)).toEqual(queues.sort());
  });

  it('walks the test lists again at once after a reload that repairs the API key, not at the next flaky-tests interval', async () => {
    const { world, exporter } = await repairedKeyExporter('  flakyTests: true\n', quarantinedRepos);
    const repositories = world.repositories
      .map((repository) => `${repository.host}/${repository.owner}/${repository.name}`)
      .sort();
    const samples = await exporter.waitFor(
      (current) => quarantinedRepos(current).length === repositories.length,
      'the quarantined tests of every repository',
    );
    expect(quarantinedRepos(samples)).toEqual(repositories);
  });
});
