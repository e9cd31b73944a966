import type { Registry } from 'prom-client';
import type { SnapshotStore } from '../snapshot/store.js';
import type { ApiCallObserver } from '../trunk/observer.js';
import { registerApiMetrics } from './apiMetrics.js';
import { registerExporterStatusMetrics } from './exporterMetrics.js';
import { registerFlakyTestsMetrics } from './flakyTestsMetrics.js';
import { registerMergeQueueMetrics } from './mergeQueueMetrics.js';

export { createRegistry } from './registry.js';
export type { RegistryOptions } from './registry.js';
export {
  negotiateExpositionFormat,
  renderExposition,
  OPENMETRICS_CONTENT_TYPE,
  PROMETHEUS_CONTENT_TYPE,
} from './exposition.js';
export type { ExpositionFormat } from './exposition.js';
export { MetricsPage } from './metricsPage.js';
export type { MetricsPageResponse } from './metricsPage.js';

export interface MetricsOptions {
  registry: Registry;
  store: SnapshotStore;
  version: string;
  mergeQueueIntervalSeconds: number;
  flakyTestsIntervalSeconds: number;
  /** How many code owners get their own series; the rest are summed as `other`. */
  topCodeowners: number;
}

/**
 * Registers every exporter metric on the registry. Returns the observer that feeds the API metrics
 * and the names of the metrics computed from the snapshot store alone (cacheable per store change).
 */
export function registerExporterMetrics(options: MetricsOptions): {
  apiCallObserver: ApiCallObserver;
  snapshotMetrics: ReadonlySet<string>;
} {
  const { registry, store } = options;
  const registeredBefore = new Set(registry.getMetricsAsArray().map((metric) => metric.name));
  registerMergeQueueMetrics({
    registry,
    store,
    intervalSeconds: options.mergeQueueIntervalSeconds,
  });
  registerFlakyTestsMetrics({
    registry,
    store,
    intervalSeconds: options.flakyTestsIntervalSeconds,
    topCodeowners: options.topCodeowners,
  });
  registerExporterStatusMetrics({
    registry,
    store,
    version: options.version,
    mergeQueueIntervalSeconds: options.mergeQueueIntervalSeconds,
    flakyTestsIntervalSeconds: options.flakyTestsIntervalSeconds,
  });
  // Only the three store-driven groups above: their collect() reads the store and nothing else.
  const snapshotMetrics = new Set(
    registry
      .getMetricsAsArray()
      .map((metric) => metric.name)
      .filter((name) => !registeredBefore.has(name)),
  );
  return { apiCallObserver: registerApiMetrics(registry), snapshotMetrics };
}
