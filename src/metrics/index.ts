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
export { registerReloadMetrics } from './reloadMetrics.js';
export type { ReloadObserver } from './reloadMetrics.js';

export interface MetricsOptions {
  registry: Registry;
  store: SnapshotStore;
  version: string;
  mergeQueueIntervalSeconds: number;
  flakyTestsIntervalSeconds: number;
  /** How many code owners get their own series; the rest are summed as `other`. */
  topCodeowners: number;
}

/** Registers every exporter metric on the registry; the returned observer feeds the API metrics. */
export function registerExporterMetrics(options: MetricsOptions): {
  apiCallObserver: ApiCallObserver;
} {
  const { registry, store } = options;
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
  return { apiCallObserver: registerApiMetrics(registry) };
}
