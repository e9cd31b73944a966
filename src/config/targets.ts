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
    })),
  );
  const flakyRepos = [
    ...new Set(config.targets.filter((repository) => repository.flakyTests).map((r) => r.name)),
  ];
  const flaky = flakyRepos.map((repo): Target => ({ kind: 'flaky_tests', repo, branch: '' }));
  return [...queues, ...flaky].filter((target) => isAssignedToShard(target, config.sharding));
}
