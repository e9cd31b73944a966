// The shape of a benchmark organization, turned into the simulator's repositories and the
// exporter's configuration, so both sides always describe the same targets.
import type { SimulatedRepository } from '../../src/simulator/repositories.js';

/** How big an organization a benchmark simulates. */
export interface Scale {
  /** Merge-queue (repo, branch) targets: repositories of two branches each. */
  readonly queues: number;
  /** Undefined: the simulator's natural queue length (3-15, or whatever churn makes it). */
  readonly pullRequestsPerQueue: number | undefined;
  /** The first this many repositories also have their quarantine list polled. */
  readonly flakyRepositories: number;
  /** Undefined: the simulator's natural list size (40-150 tests). */
  readonly quarantinedTests: number | undefined;
}

/** The token the benchmark simulators accept. */
export const BENCH_TOKEN = 'bench-token';
/** The v2 API key the benchmark simulator accepts (`Authorization: Bearer`). */
export const BENCH_API_KEY = 'trunk_v2_bench-key';

const BRANCHES = ['main', 'release'] as const;

/** Repositories for `scale`; unpolled ones get an empty quarantine list to keep the simulator small. */
export function simulatedRepositories(scale: Scale): SimulatedRepository[] {
  const count = Math.max(Math.ceil(scale.queues / BRANCHES.length), scale.flakyRepositories);
  return Array.from({ length: count }, (_unused, index) => {
    const branches = BRANCHES.slice(
      0,
      Math.min(BRANCHES.length, scale.queues - index * BRANCHES.length),
    );
    return {
      host: 'github.com',
      owner: 'acme',
      name: `repo-${String(index).padStart(4, '0')}`,
      // A repository polled only for its quarantine list still needs a branch in the config.
      branches: branches.length > 0 ? branches : ['main'],
      pullRequestsPerQueue: scale.pullRequestsPerQueue,
      quarantinedTests: index < scale.flakyRepositories ? scale.quarantinedTests : 0,
    };
  });
}

/** The configuration YAML for an exporter polling the simulator of `scale` at `apiUrl`. */
export function configYaml(
  scale: Scale,
  options: {
    apiUrl: string;
    port: number;
    maxConcurrentRequests: number;
    maxRequestsPerSecond: number;
    mergeQueueIntervalSeconds: number;
    flakyTestsIntervalSeconds: number;
    /** polling.pullRequestRecheckSeconds; the exporter's default when absent. */
    pullRequestRecheckSeconds?: number;
    /**
     * v1 (the default): the token and the scale's targets listed. v2: the API key and discovery
     * (every queue of the organization, every repository's tests), as an API v2 user runs it.
     */
    api?: 'v1' | 'v2' | undefined;
    /** Listed (the default with v1) or found by discovery (the default with v2). */
    targets?: 'listed' | 'discovered';
    /** The `reads:` section; absent (every read at its default) when undefined. */
    reads?: Readonly<Record<string, boolean | string>> | undefined;
  },
): string {
  const discovered =
    (options.targets ?? (options.api === 'v2' ? 'discovered' : 'listed')) === 'discovered';
  const targets = discovered
    ? ['discovery:', '  enabled: true']
    : [
        'targets:',
        ...simulatedRepositories(scale).flatMap((repository, index) => [
          `  - repo: ${repository.host}/${repository.owner}/${repository.name}`,
          `    branches: [${repository.branches.join(', ')}]`,
          `    flakyTests: ${String(index < scale.flakyRepositories)}`,
        ]),
      ];
  return [
    'trunk:',
    `  apiUrl: ${options.apiUrl}`,
    options.api === 'v2' ? `  apiKey: ${BENCH_API_KEY}` : `  token: ${BENCH_TOKEN}`,
    '  orgUrlSlug: acme',
    '  timeoutSeconds: 30',
    `  maxConcurrentRequests: ${options.maxConcurrentRequests}`,
    `  maxRequestsPerSecond: ${options.maxRequestsPerSecond}`,
    'server:',
    '  address: 127.0.0.1',
    `  port: ${options.port}`,
    // Every load generator's connection comes from 127.0.0.1 (wrk runs up to 200).
    '  maxConnectionsPerAddress: 512',
    'polling:',
    `  mergeQueueIntervalSeconds: ${options.mergeQueueIntervalSeconds}`,
    `  flakyTestsIntervalSeconds: ${options.flakyTestsIntervalSeconds}`,
    ...(options.pullRequestRecheckSeconds === undefined
      ? []
      : [`  pullRequestRecheckSeconds: ${options.pullRequestRecheckSeconds}`]),
    '  staleAfterSeconds: 3600',
    ...(options.reads === undefined
      ? []
      : [
          'reads:',
          ...Object.entries(options.reads).map(([key, value]) => `  ${key}: ${String(value)}`),
        ]),
    ...targets,
    '',
  ].join('\n');
}
