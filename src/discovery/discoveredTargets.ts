// Which of the organization's merge queues become targets, and how they merge with the configured
// ones: one target per (repo, branch), a configured one kept as configured.
import type { DiscoverySettings, ExporterConfig, RepositoryTarget } from '../config/types.js';
import type { V2QueueKey } from '../poller/v2QueueDirectory.js';

/** A glob as a regular expression: `*` stands for any run of characters, the rest is literal. */
function globRegExp(glob: string): RegExp {
  const pattern = glob
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${pattern}$`);
}

/** Whether `value` matches any of `globs`. */
export function matchesAny(value: string, globs: readonly string[]): boolean {
  return globs.some((glob) => globRegExp(glob).test(value));
}

/** The repositories (with their branches) of the listed queues that `settings` selects. */
export function discoveredRepositories(
  queues: readonly V2QueueKey[],
  settings: Pick<DiscoverySettings, 'repos' | 'branches' | 'flakyTests'>,
): RepositoryTarget[] {
  const branches = new Map<string, string[]>();
  for (const { repo, branch } of queues) {
    if (!matchesAny(repo, settings.repos) || !matchesAny(branch, settings.branches)) continue;
    const list = branches.get(repo);
    if (list === undefined) branches.set(repo, [branch]);
    else if (!list.includes(branch)) list.push(branch);
  }
  return [...branches].map(([name, repoBranches]) => {
    const [host = '', owner = '', repoName = ''] = name.split('/');
    return {
      repo: { host, owner, name: repoName },
      name,
      branches: repoBranches,
      flakyTests: settings.flakyTests,
      discovered: { branches: new Set(repoBranches), flakyTests: settings.flakyTests },
    };
  });
}

/**
 * The configuration with the discovered repositories merged into its targets: a configured
 * repository gains the discovered branches it lacks (and the quarantine list, when discovery
 * reads those); only what was not configured is marked as discovered.
 */
export function withDiscovered(
  config: ExporterConfig,
  discovered: readonly RepositoryTarget[],
): ExporterConfig {
  if (discovered.length === 0) return config;
  const byName = new Map(discovered.map((repository) => [repository.name, repository]));
  const merged = config.targets.map((configured): RepositoryTarget => {
    const found = byName.get(configured.name);
    if (found === undefined) return configured;
    byName.delete(configured.name);
    const newBranches = found.branches.filter((branch) => !configured.branches.includes(branch));
    const newFlakyTests = found.flakyTests && !configured.flakyTests;
    if (newBranches.length === 0 && !newFlakyTests) return configured;
    return {
      ...configured,
      branches: [...configured.branches, ...newBranches],
      flakyTests: configured.flakyTests || found.flakyTests,
      discovered: { branches: new Set(newBranches), flakyTests: newFlakyTests },
    };
  });
  return { ...config, targets: [...merged, ...byName.values()] };
}
