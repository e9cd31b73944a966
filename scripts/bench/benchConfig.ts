// The exporter configuration the call-counting benchmarks (apiEconomy.ts, apiCallsV1V2.ts) poll
// with, built as the loaded config would be: each benchmark passes only what it varies.
import type { ExporterConfig as Config } from '../../src/config/types.js';

export interface BenchRepository {
  readonly host: string;
  readonly owner: string;
  readonly name: string;
  readonly branches: string[];
}

export interface BenchConfigOptions {
  readonly apiUrl: string;
  /** Secrets made by the loaded build's Secret class. */
  readonly token?: Config['trunk']['token'];
  readonly apiKey?: Config['trunk']['apiKey'];
  readonly timeoutSeconds: number;
  readonly mergeQueueIntervalSeconds: number;
  readonly repositories: readonly BenchRepository[];
  readonly flakyTests: boolean;
  readonly polling?: Partial<Config['polling']>;
  /** The API v2 reads to turn off (each `reads.*` key is on unless named here). */
  readonly readsOff?: readonly ('queueEntryHistory' | 'verificationRuns' | 'testCollections')[];
}

export function benchExporterConfig(options: BenchConfigOptions): Config {
  return {
    trunk: {
      apiUrl: options.apiUrl,
      token: options.token,
      apiKey: options.apiKey,
      orgUrlSlug: 'acme',
      timeoutSeconds: options.timeoutSeconds,
      maxConcurrentRequests: 16,
      maxRequestsPerSecond: 100_000,
    },
    server: {
      address: '127.0.0.1',
      port: 0,
      enableReload: false,
      maxConnections: 512,
      maxConnectionsPerAddress: 64,
      maxTlsConnectionsPerAddressPerSecond: 10,
      tls: undefined,
      basicAuthUsers: new Map(),
    },
    polling: {
      mergeQueueIntervalSeconds: options.mergeQueueIntervalSeconds,
      flakyTestsIntervalSeconds: 300,
      pullRequestDetails: true,
      pullRequestRecheckSeconds: 300,
      flakyTestDetails: true,
      staleAfterSeconds: 600,
      ...options.polling,
    },
    metrics: { topCodeowners: 20 },
    reads: {
      queueEntryHistory: !options.readsOff?.includes('queueEntryHistory'),
      verificationRuns: !options.readsOff?.includes('verificationRuns'),
      testMetricsPeriod: '7d',
      testCollections: !options.readsOff?.includes('testCollections'),
    },
    sharding: { shard: 0, totalShards: 1 },
    webhooks: {
      enabled: false,
      path: '/webhooks/trunk',
      signingSecret: undefined,
      toleranceSeconds: 300,
      bodyTimeoutSeconds: 5,
    },
    targets: options.repositories.map((repository) => ({
      repo: { host: repository.host, owner: repository.owner, name: repository.name },
      name: `${repository.host}/${repository.owner}/${repository.name}`,
      branches: repository.branches,
      flakyTests: options.flakyTests,
    })),
  };
}
