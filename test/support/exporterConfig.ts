// A complete ExporterConfig for tests that drive the poller without the config file: the schema's
// defaults, loopback addresses, and what each test overrides. One place to add a new config key.
import {
  DEFAULT_DISCOVERY_MAX_TARGETS,
  DEFAULT_WEBHOOK_BODY_TIMEOUT_SECONDS,
} from '../../src/config/schema.js';
import { Secret } from '../../src/secrets/secret.js';
import type { ExporterConfig, RepositoryTarget } from '../../src/config/types.js';
import { SIMULATOR_ORG_SLUG } from '../../src/simulator/repositories.js';
import { TOKEN } from '../trunk/harness.js';

interface ConfigOverrides {
  readonly trunk?: Partial<Omit<ExporterConfig['trunk'], 'apiUrl' | 'token'>>;
  readonly polling?: Partial<ExporterConfig['polling']>;
}

/** The configuration of an exporter polling `apiUrl` (with the test token) for `targets`. */
export function exporterConfig(
  apiUrl: string,
  targets: readonly RepositoryTarget[],
  overrides: ConfigOverrides = {},
): ExporterConfig {
  return {
    trunk: {
      apiUrl,
      token: new Secret(TOKEN),
      orgUrlSlug: SIMULATOR_ORG_SLUG,
      timeoutSeconds: 2,
      maxConcurrentRequests: 8,
      maxRequestsPerSecond: 10_000,
      ...overrides.trunk,
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
      mergeQueueIntervalSeconds: 30,
      flakyTestsIntervalSeconds: 300,
      pullRequestDetails: true,
      pullRequestRecheckSeconds: 300,
      flakyTestDetails: true,
      staleAfterSeconds: 600,
      ...overrides.polling,
    },
    metrics: { topCodeowners: 20 },
    reads: {
      queueEntryHistory: true,
      verificationRuns: true,
      testMetricsPeriod: '7d',
      testCollections: true,
    },
    sharding: { shard: 0, totalShards: 1 },
    discovery: {
      enabled: false,
      intervalSeconds: 300,
      repos: ['*'],
      branches: ['*'],
      flakyTests: true,
      maxTargets: DEFAULT_DISCOVERY_MAX_TARGETS,
    },
    webhooks: {
      enabled: false,
      path: '/webhooks/trunk',
      signingSecret: undefined,
      toleranceSeconds: 300,
      bodyTimeoutSeconds: DEFAULT_WEBHOOK_BODY_TIMEOUT_SECONDS,
    },
    targets,
  };
}
