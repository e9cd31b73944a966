// Which repositories, merge queues and organization the simulator answers for.

/**
 * A repository the simulator knows: one test collection (its quarantine list and the tests not
 * quarantined), one merge queue per branch (none for a repository that uses Flaky Tests only).
 */
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
  /**
   * Start its collection with this many tests that are not quarantined (healthy, flaky, broken):
   * 60-160 when absent, none when `quarantinedTests` is given (benchmarks size the list they poll).
   */
  readonly unquarantinedTests?: number | undefined;
}

/** The organization slug the quarantine endpoint accepts unless told otherwise. */
export const SIMULATOR_ORG_SLUG = 'acme';

/** The API token `--demo` mode uses for the simulator; it guards nothing real. */
export const SIMULATOR_DEMO_TOKEN = 'demo-token';

/** The v2 API key `--demo` mode and `simulate` use unless told otherwise; it guards nothing real. */
export const SIMULATOR_DEMO_API_KEY = 'trunk_v2_demo-key';

/**
 * Four queues over three GitHub repositories, enough to show per-repo and per-branch series, and a
 * self-hosted GitLab repository that uses Trunk Flaky Tests only (Trunk's merge queue is GitHub's).
 */
export const DEFAULT_SIMULATED_REPOSITORIES: readonly SimulatedRepository[] = [
  { host: 'github.com', owner: 'acme', name: 'web', branches: ['main', 'release'] },
  { host: 'github.com', owner: 'acme', name: 'api', branches: ['main'] },
  { host: 'github.com', owner: 'acme', name: 'mobile', branches: ['develop'] },
  { host: 'gitlab.acme.dev', owner: 'acme', name: 'storefront', branches: [] },
];

/** The `host/owner/name` key of a repository reference. */
export function repositoryKey(repo: {
  readonly host: string;
  readonly owner: string;
  readonly name: string;
}): string {
  return `${repo.host}/${repo.owner}/${repo.name}`;
}
