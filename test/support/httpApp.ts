// The HTTP app wired as startExporter wires it (every exporter metric on one registry, by
// createExporterMetrics), over a store the test fills by hand.
import type { RequestListener } from 'node:http';
import type { Registry } from 'prom-client';
import { silentLogger, type Logger } from '../../src/log/logger.js';
import { LiveConfig } from '../../src/config/liveConfig.js';
import { createExporterMetrics } from '../../src/metrics/exporterMetricSet.js';
import { createRegistry } from '../../src/metrics/registry.js';
import { createHttpApp, type BasicAuthVerifier } from '../../src/server/index.js';
import type { SnapshotStore } from '../../src/snapshot/store.js';
import { exporterConfig } from './exporterConfig.js';

/** The version the test apps report. */
export const TEST_APP_VERSION = '9.9.9-test';

interface TestAppOptions {
  readonly store: SnapshotStore;
  /** A fresh registry without default metrics unless given. */
  readonly registry?: Registry;
  readonly logger?: Logger;
  readonly now?: () => number;
  readonly auth?: BasicAuthVerifier;
}

/** The app and the registry its metrics live on. */
export function createTestHttpApp(options: TestAppOptions): {
  app: RequestListener;
  registry: Registry;
} {
  const registry = options.registry ?? createRegistry({ defaultMetrics: false });
  const logger = options.logger ?? silentLogger();
  const config = exporterConfig('http://127.0.0.1:1', [], {
    polling: { mergeQueueIntervalSeconds: 30, flakyTestsIntervalSeconds: 300 },
  });
  const { snapshotMetrics } = createExporterMetrics(registry, {
    store: options.store,
    version: TEST_APP_VERSION,
    config: new LiveConfig({ ...config, metrics: { topCodeowners: 5 } }),
    logger,
  });
  const app = createHttpApp({
    registry,
    store: options.store,
    snapshotMetrics,
    version: TEST_APP_VERSION,
    logger,
    intervals: { mergeQueueIntervalSeconds: 30, flakyTestsIntervalSeconds: 300 },
    ...(options.now && { now: options.now }),
    ...(options.auth && { auth: options.auth }),
  });
  return { app, registry };
}
