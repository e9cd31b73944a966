import { isAssignedToShard } from '../sharding/shardAssignment.js';
import type { Target } from '../snapshot/types.js';
import type { ExporterConfig } from './types.js';

/**
 * The targets this instance polls, in configuration order: each (repo, branch) queue, then each
 * quarantine list; with sharding, only those assigned to this shard.
 */
export function configuredTargets(config: ExporterConfig): Target[] {
  const queues = config.targets.flatMap((repository) =>
    repository.branches.map((branch): Target => ({
      kind: 'merge_queue',
      repo: repository.name,
      branch,
      ...(repository.discovered?.branches.has(branch) === true ? { discovered: true } : {}),
    })),
  );
  const flakyRepos = new Map<string, boolean>();
  for (const repository of config.targets) {
    if (!repository.flakyTests || flakyRepos.has(repository.name)) continue;
    flakyRepos.set(repository.name, repository.discovered?.flakyTests === true);
  }
  const flaky = [...flakyRepos].map(([repo, discovered]): Target => ({
    kind: 'flaky_tests',
    repo,
    branch: '',
    ...(discovered ? { discovered: true } : {}),
  }));
  return [...queues, ...flaky].filter((target) => isAssignedToShard(target, config.sharding));
}

/**
 * Whether this instance reads and exports the organization's test collections: they belong to no
 * repository, so only the shard of the first flaky-tests repository by name (of every shard's,
 * configured and discovered) does, and the shards' pages together hold them once.
 */
export function readsTestCollections(config: ExporterConfig): boolean {
  // Asked by each quarantine list's poll as its jobs are built: walked once per configuration, as
  // once per list the walk grows with the square of the lists.
  let reads = testCollectionReaders.get(config);
  if (reads === undefined) {
    reads = firstFlakyRepositoryIsOurs(config);
    testCollectionReaders.set(config, reads);
  }
  return reads;
}

/** readsTestCollections' answer for each configuration asked about; a configuration never changes. */
const testCollectionReaders = new WeakMap<ExporterConfig, boolean>();

function firstFlakyRepositoryIsOurs(config: ExporterConfig): boolean {
  let first: string | undefined;
  for (const repository of config.targets) {
    if (repository.flakyTests && (first === undefined || repository.name < first)) {
      first = repository.name;
    }
  }
  if (first === undefined) return false;
  return isAssignedToShard({ kind: 'flaky_tests', repo: first, branch: '' }, config.sharding);
}
