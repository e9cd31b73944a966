// Which repositories, merge queues and organization the simulator answers for.

/** A repository the simulator knows: one quarantine list, one merge queue per branch. */
export interface SimulatedRepository {
  readonly host: string;
  readonly owner: string;
  readonly name: string;
  /** Target branches that have a merge queue. */
  readonly branches: readonly string[];
  /** Keep each of its queues at this many pull requests (benchmarks); natural size when absent. */
  readonly pullRequestsPerQueue?: number | undefined;
  /** Start its quarantine list with this many tests (benchmarks); 40-150 when absent. */
  readonly quarantinedTests?: number | undefined;
}

/** The organization slug the quarantine endpoint accepts unless told otherwise. */
export const SIMULATOR_ORG_SLUG = 'acme';

/** The API token `--demo` mode uses for the simulator; it guards nothing real. */
export const SIMULATOR_DEMO_TOKEN = 'demo-token';

/** The v2 API key `--demo` mode and `simulate` use unless told otherwise; it guards nothing real. */
export const SIMULATOR_DEMO_API_KEY = 'trunk_v2_demo-key';

/** Four queues over three repositories: enough to show per-repo and per-branch series. */
export const DEFAULT_SIMULATED_REPOSITORIES: readonly SimulatedRepository[] = [
  { host: 'github.com', owner: 'acme', name: 'web', branches: ['main', 'release'] },
  { host: 'github.com', owner: 'acme', name: 'api', branches: ['main'] },
  { host: 'github.com', owner: 'acme', name: 'mobile', branches: ['develop'] },
];

/** The `host/owner/name` key of a repository reference. */
export function repositoryKey(repo: {
  readonly host: string;
  readonly owner: string;
  readonly name: string;
}): string {
  return `${repo.host}/${repo.owner}/${repo.name}`;
}
