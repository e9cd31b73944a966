// Sharding end to end: for several shard counts, real exporters (one per shard) poll one frozen
// simulator world, each through its own simulator server so every request is attributed to the
// shard that made it. Every target must be polled by exactly one shard, and the shards' pages
// together must equal one unsharded instance's page, exporter-process metrics aside.
import { describe, expect, it } from 'vitest';
import type { SimulatedRepository } from '../../src/simulator/repositories.js';
import { createSimulatorWorld, type SimulatorWorld } from '../../src/simulator/world.js';
import {
  SIMULATOR_TOKEN,
  configYaml,
  startTestExporter,
  type ExporterUnderTest,
} from '../support/exporterHarness.js';
import { startTestSimulator } from '../support/simulator.js';

const REPOSITORIES: SimulatedRepository[] = ['web', 'api', 'mobile', 'infra', 'docs', 'data'].map(
  (name) => ({ host: 'github.com', owner: 'acme', name, branches: ['main', 'release'] }),
);

const TARGETS_YAML = REPOSITORIES.flatMap((repository) => [
  `  - repo: github.com/acme/${repository.name}`,
  '    branches: [main, release]',
  '    flakyTests: true',
]).join('\n');

/** Every target, as the key the counting world records: `getQueue repo:branch` or `list repo`. */
const ALL_TARGETS = REPOSITORIES.flatMap((repository) => {
  const repo = `github.com/acme/${repository.name}`;
  return [...repository.branches.map((branch) => `getQueue ${repo}:${branch}`), `list ${repo}`];
});

/** The same world, counting the calls it answers per target into `counts`. */
function countingWorld(world: SimulatorWorld, counts: Map<string, number>): SimulatorWorld {
  const count = (key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);
  const name = (repo: { host: string; owner: string; name: string }) =>
    `${repo.host}/${repo.owner}/${repo.name}`;
  return {
    ...world,
    getQueue(repo, branch) {
      count(`getQueue ${name(repo)}:${branch}`);
      return world.getQueue(repo, branch);
    },
    getSubmittedPullRequest(repo, branch, prNumber) {
      count(`lookup ${name(repo)}:${branch}`);
      return world.getSubmittedPullRequest(repo, branch, prNumber);
    },
    listQuarantinedTests(repo, pageSize, pageToken) {
      count(`list ${name(repo)}`);
      return world.listQuarantinedTests(repo, pageSize, pageToken);
    },
  };
}

/** Metrics that describe the exporter process or this instance, not the polled data. */
const PROCESS_METRICS =
  /^(process_|nodejs_|trunk_exporter_(api_request|poll_duration|last_success_timestamp|shard_ordinal|total_shards|api_budget|config_last_reload_success_timestamp))/;

async function dataLines(exporter: ExporterUnderTest): Promise<string[]> {
  const page = await exporter.scrape();
  return page
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#') && !PROCESS_METRICS.test(line));
}

async function startShard(world: SimulatorWorld, shard: number, totalShards: number) {
  const counts = new Map<string, number>();
  const { simulator } = await startTestSimulator({
    world: countingWorld(world, counts),
    token: SIMULATOR_TOKEN,
  });
  const yaml = [
    // A busy machine may answer after the default 2 s; a retry would count a target twice.
    configYaml({ apiUrl: simulator.baseUrl, targets: TARGETS_YAML, timeoutSeconds: 30 }),
    `sharding:\n  shard: ${shard}\n  totalShards: ${totalShards}`,
  ].join('\n');
  const exporter = await startTestExporter(yaml);
  return { counts, exporter };
}

describe('sharded exporters', () => {
  it.each([1, 2, 3, 5])(
    'with %i shards poll every target exactly once between them, and their pages add up to the unsharded page',
    async (totalShards) => {
      const world = createSimulatorWorld({ seed: 11, repositories: REPOSITORIES });
      const unsharded = await startShard(world, 0, 1);
      const shards = await Promise.all(
        Array.from({ length: totalShards }, (_, shard) => startShard(world, shard, totalShards)),
      );
      await Promise.all([unsharded, ...shards].map(({ exporter }) => exporter.waitUntilReady()));

      for (const target of ALL_TARGETS) {
        const pollers = shards.filter(({ counts }) => (counts.get(target) ?? 0) > 0);
        expect(pollers, target).toHaveLength(1);
        // One poll each (the interval is 600 s); a list of up to 100 tests is one page.
        if (target.startsWith('getQueue')) expect(pollers[0]?.counts.get(target)).toBe(1);
      }
      // Lookups of a queue's PRs come only from the shard that polls the queue.
      for (const { counts } of shards) {
        for (const key of counts.keys()) {
          if (key.startsWith('lookup ')) {
            expect(counts.has(key.replace('lookup ', 'getQueue '))).toBe(true);
          }
        }
      }
      if (totalShards > 1) {
        // Every shard has work with these 18 targets (a check on the spread, not on correctness).
        expect(shards.every(({ counts }) => counts.size > 0)).toBe(true);
      }

      const union = new Set(
        (await Promise.all(shards.map(({ exporter }) => dataLines(exporter)))).flat(),
      );
      const whole = new Set(await dataLines(unsharded.exporter));
      expect(whole.size).toBeGreaterThan(100);
      expect([...union].sort()).toEqual([...whole].sort());

      for (const [shard, { exporter }] of shards.entries()) {
        const page = await exporter.scrape();
        expect(page).toContain(`trunk_exporter_shard_ordinal ${shard}\n`);
        expect(page).toContain(`trunk_exporter_total_shards ${totalShards}\n`);
      }
    },
  );
});
