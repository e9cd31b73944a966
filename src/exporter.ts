import type { ExporterConfig } from './config/types.js';
import type { Logger } from './log/logger.js';
import { registerExporterMetrics } from './metrics/index.js';
import { createRegistry } from './metrics/registry.js';
import { PollScheduler } from './poller/scheduler.js';
import { buildPollJobs, configuredTargets } from './poller/targetJobs.js';
import { createHttpApp, startHttpServer } from './server/index.js';
import { SnapshotStore } from './snapshot/store.js';
import { TrunkClient } from './trunk/client.js';

/** A started exporter: its address, its state for tests, and how to stop it. */
export interface RunningExporter {
  /** Base URL of the HTTP server, e.g. `http://127.0.0.1:9740`. */
  readonly url: string;
  readonly store: SnapshotStore;
  /** Stops serving, aborts in-flight API calls and closes connections. */
  stop(): Promise<void>;
}

interface ExporterDependencies {
  readonly logger: Logger;
  readonly version: string;
}

/**
 * Wires one exporter: config → scheduler → Trunk client → snapshot store → metrics → HTTP. The
 * scrape path only reads the store; all network traffic to Trunk starts in the scheduler.
 */
export async function startExporter(
  config: ExporterConfig,
  { logger, version }: ExporterDependencies,
): Promise<RunningExporter> {
  const registry = createRegistry();
  const store = new SnapshotStore(config.polling.staleAfterSeconds);
  store.setTargets(configuredTargets(config));
  const { apiCallObserver, snapshotMetrics } = registerExporterMetrics({
    registry,
    store,
    version,
    mergeQueueIntervalSeconds: config.polling.mergeQueueIntervalSeconds,
    flakyTestsIntervalSeconds: config.polling.flakyTestsIntervalSeconds,
    topCodeowners: config.metrics.topCodeowners,
  });
  const client = new TrunkClient({
    apiUrl: config.trunk.apiUrl,
    token: config.trunk.token,
    timeoutSeconds: config.trunk.timeoutSeconds,
    maxConcurrentRequests: config.trunk.maxConcurrentRequests,
    maxRequestsPerSecond: config.trunk.maxRequestsPerSecond,
    observer: apiCallObserver,
    logger,
    version,
  });
  const app = createHttpApp({
    registry,
    store,
    snapshotMetrics,
    version,
    logger,
    intervals: {
      mergeQueueIntervalSeconds: config.polling.mergeQueueIntervalSeconds,
      flakyTestsIntervalSeconds: config.polling.flakyTestsIntervalSeconds,
    },
  });
  const http = await startHttpServer(app, config.server.address, config.server.port);
  const scheduler = new PollScheduler({ logger });
  scheduler.setJobs(buildPollJobs({ config, reader: client, store, logger }));
  logger.info(
    {
      url: http.url,
      apiUrl: config.trunk.apiUrl,
      mergeQueues: config.targets.reduce((sum, target) => sum + target.branches.length, 0),
      flakyTestRepositories: config.targets.filter((target) => target.flakyTests).length,
    },
    `serving metrics on ${http.url}/metrics`,
  );

  return {
    url: http.url,
    store,
    async stop() {
      await http.close();
      await scheduler.stop();
      await client.close();
    },
  };
}
