// Which of the organization's merge queues and repositories with tests become targets, and how they
// merge with the configured ones: one target per (repo, branch), a configured one kept as configured.
import { globListMatcher } from '../config/glob.js';
import { repositoryKey } from '../config/repositoryKey.js';
import type { DiscoverySettings, ExporterConfig, RepositoryTarget } from '../config/types.js';
import type { V2QueueKey } from '../poller/v2/v2QueueDirectory.js';

/** What discovery selected, and how many targets past `discovery.maxTargets` it left out. */
export interface DiscoveredRepositories {
  readonly repositories: RepositoryTarget[];
  readonly leftOut: number;
}

/**
 * The repositories `settings` selects: those of the listed queues, with their branches, and (with
 * `flakyTests`) those with tests (`testRepositories`), for their quarantine lists. A repository is
 * one however its name is cased; the first spelling seen names it. Past `maxTargets` targets (a
 * queue, a quarantine list) the first in the order of repository and branch are kept, so that a
 * list in another order keeps the same ones.
 */
export function discoveredRepositories(
  queues: readonly V2QueueKey[],
  testRepositories: readonly string[],
  settings: Pick<DiscoverySettings, 'repos' | 'branches' | 'flakyTests' | 'maxTargets'>,
): DiscoveredRepositories {
  // Repositories without regard to letter case, as they are compared everywhere (repositoryKey);
  // branches with it, as git's differ by case.
  const repositoryMatchesAny = globListMatcher(settings.repos, repositoryKey);
  const branchMatchesAny = globListMatcher(settings.branches);
  // Branches as a set (in the order found): a repository may have thousands of queues.
  const found = new Map<string, { readonly name: string; readonly branches: Set<string> }>();
  const add = (repo: string): Set<string> | undefined => {
    if (!repositoryMatchesAny(repo)) return undefined;
    const key = repositoryKey(repo);
    let entry = found.get(key);
    if (entry === undefined) found.set(key, (entry = { name: repo, branches: new Set() }));
    return entry.branches;
  };
  for (const { repo, branch } of queues) {
    if (!branchMatchesAny(branch)) continue;
    add(repo)?.add(branch);
  }
  if (settings.flakyTests) for (const repo of testRepositories) add(repo);
  const perList = settings.flakyTests ? 1 : 0;
  let total = 0;
  for (const { branches } of found.values()) total += branches.size + perList;
  let selected = [...found.values()];
  if (total > settings.maxTargets) {
    selected = [];
    let room = settings.maxTargets;
    const byKey = [...found].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const [, { name, branches }] of byKey) {
      if (room < 1) break;
      const kept = [...branches].sort().slice(0, room - perList);
      room -= kept.length + perList;
      selected.push({ name, branches: new Set(kept) });
    }
  }
  const repositories = selected.map(({ name, branches }) => {
    const [host = '', owner = '', repoName = ''] = name.split('/');
    return {
      repo: { host, owner, name: repoName },
      name,
      branches: [...branches],
      flakyTests: settings.flakyTests,
      discovered: { branches, flakyTests: settings.flakyTests },
    };
  });
  return { repositories, leftOut: Math.max(0, total - settings.maxTargets) };
}

/**
 * The configuration with the discovered repositories merged into its targets: a configured
 * repository (compared without regard to letter case, and keeping its configured spelling) gains
 * the discovered branches it lacks (and the quarantine list, when discovery reads those); only
 * what was not configured is marked as discovered.
 */
export function withDiscovered(
  config: ExporterConfig,
  discovered: readonly RepositoryTarget[],
): ExporterConfig {
  if (discovered.length === 0) return config;
  const byKey = new Map(
    discovered.map((repository) => [repositoryKey(repository.name), repository]),
  );
  const merged = config.targets.map((configured): RepositoryTarget => {
    const key = repositoryKey(configured.name);
    const found = byKey.get(key);
    if (found === undefined) return configured;
    byKey.delete(key);
    const configuredBranches = new Set(configured.branches);
    const newBranches = found.branches.filter((branch) => !configuredBranches.has(branch));
    const newFlakyTests = found.flakyTests && !configured.flakyTests;
    if (newBranches.length === 0 && !newFlakyTests) return configured;
    return {
      ...configured,
      branches: [...configured.branches, ...newBranches],
      flakyTests: configured.flakyTests || found.flakyTests,
      discovered: { branches: new Set(newBranches), flakyTests: newFlakyTests },
    };
  });
  return { ...config, targets: [...merged, ...byKey.values()] };
}
