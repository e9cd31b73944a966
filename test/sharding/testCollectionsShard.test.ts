// The organization's test collections through sharded API v2 exporters: they belong to no
// repository, so exactly one shard reads and exports them (docs/deployment.md, "Sharding": the
// shards' pages together hold the same series as one unsharded instance), and the other shards
// make no call for them. Each shard reads one frozen simulator world through its own server, so
// every call is attributed to the shard that made it.
import { describe, expect, it } from 'vitest';
import type { SimulatedRepository } from '../../src/simulator/repositories.js';
import { createSimulatorWorld, type SimulatorWorld } from '../../src/simulator/world.js';
import { parseExposition, select } from '../support/exposition.js';
import { configYaml, startTestExporter } from '../support/exporterHarness.js';
import { startTestSimulator } from '../support/simulator.js';

const API_KEY = 'trunk_v2_Sh4rdC0llect10ns';

const REPOSITORIES: SimulatedRepository[] = ['web', 'api', 'mobile', 'infra', 'docs', 'data'].map(
  (name) => ({ host: 'github.com', owner: 'acme', name, branches: ['main'] }),
);

const TARGETS_YAML = REPOSITORIES.flatMap((repository) => [
  `  - repo: github.com/acme/${repository.name}`,
  '    branches: [main]',
  '    flakyTests: true',
]).join('\n');

const COLLECTION_FAMILIES = [
  'trunk_test_collection_test_cases',
  'trunk_test_collection_quarantine_enabled',
] as const;

/** Configured: every repository listed; discovered: none listed, discovery finds them all. */
type TargetSource = 'configured' | 'discovered';

async function startShard(
  world: SimulatorWorld,
  shard: number,
  totalShards: number,
  source: TargetSource = 'configured',
) {
  const { simulator } = await startTestSimulator({ world, token: 'v1-unused', apiKey: API_KEY });
  const yaml = [
    configYaml({
      apiUrl: simulator.origin,
      token: null,
      apiKey: API_KEY,
      targets: source === 'configured' ? TARGETS_YAML : '  []',
      timeoutSeconds: 30,
    }),
    `sharding:\n  shard: ${shard}\n  totalShards: ${totalShards}`,
    ...(source === 'discovered' ? ['discovery:\n  enabled: true'] : []),
  ].join('\n');
  const exporter = await startTestExporter(yaml);
  await exporter.waitUntilReady();
  const samples = parseExposition(await exporter.scrape());
  return {
    collectionLines: COLLECTION_FAMILIES.flatMap((name) =>
      select(samples, name).map((sample) => `${name} ${sample.labels.collection} ${sample.value}`),
    ),
    collectionCalls: simulator.requestCounts()['/v2/test-collections'] ?? 0,
    budget: select(samples, 'trunk_exporter_api_budget_requests_per_second', {
      endpoint: 'v2/test-collections',
    })[0]?.value,
  };
}

describe('test collections through sharded exporters', () => {
  it.each([
    [2, 'configured'],
    [3, 'configured'],
    [2, 'discovered'],
  ] as const)(
    'with %i shards and %s repositories are read and exported by exactly one shard, as the unsharded instance exports them',
    async (totalShards, source) => {
      const world = createSimulatorWorld({ seed: 11, repositories: REPOSITORIES });
      const unsharded = await startShard(world, 0, 1, source);
      const shards = await Promise.all(
        Array.from({ length: totalShards }, (_, shard) =>
          startShard(world, shard, totalShards, source),
        ),
      );
      expect(unsharded.collectionLines.length).toBeGreaterThan(0);
      expect(unsharded.collectionCalls).toBe(1);
      // configuration.md, reads.testCollections: one call per flakyTestsIntervalSeconds (600 s).
      expect(unsharded.budget).toBeCloseTo(1 / 600, 9);

      const exporting = shards.filter(({ collectionLines }) => collectionLines.length > 0);
      expect(exporting).toHaveLength(1);
      // Summed across the shards, each series counts once: the unsharded page's.
      expect(shards.flatMap(({ collectionLines }) => collectionLines).sort()).toEqual(
        [...unsharded.collectionLines].sort(),
      );
      // The other shards neither call GET /v2/test-collections nor budget for it.
      expect(shards.map(({ collectionCalls }) => collectionCalls).sort()).toEqual(
        [1, ...Array.from({ length: totalShards - 1 }, () => 0)].sort(),
      );
      for (const shard of shards) {
        expect(shard.budget).toBe(shard.collectionCalls === 0 ? 0 : unsharded.budget);
      }
    },
  );
});
