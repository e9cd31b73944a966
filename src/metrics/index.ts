import type { Metric, Registry } from 'prom-client';
import type { SnapshotStore } from '../snapshot/store.js';
import type { ApiCallObserver } from '../trunk/observer.js';
import { registerApiMetrics } from './apiMetrics.js';
import { MetricChanges } from './metricChanges.js';
import { registerExporterSummaryMetrics, registerTargetStatusMetrics } from './exporterMetrics.js';
import { registerFlakyTestsMetrics } from './flakyTestsMetrics.js';
import { registerMergeQueueMetrics } from './mergeQueueMetrics.js';
import { registerQueueFlowMetrics } from './queueFlowMetrics.js';
import { SnapshotView } from './snapshotView.js';
import type { SnapshotMetrics } from './snapshotView.js';

export { registerCapacityMetrics } from './capacityMetrics.js';
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
export { MetricsPage } from './metricsPage.js';
export type { MetricsPageResponse } from './metricsPage.js';
export type { SnapshotMetrics } from './snapshotView.js';

export interface MetricsOptions {
  registry: Registry;
  store: SnapshotStore;
  version: string;
  mergeQueueIntervalSeconds: number;
  flakyTestsIntervalSeconds: number;
  /** How many code owners get their own series; the rest are summed as `other`. */
  topCodeowners: number;
}

/** The settings that shape the snapshot metrics' HELP texts and series; a reload may change them. */
export type SnapshotMetricSettings = Pick<
  MetricsOptions,
  'mergeQueueIntervalSeconds' | 'flakyTestsIntervalSeconds' | 'topCodeowners'
>;

/**
 * Registers every exporter metric on the registry. The returned observer feeds the API metrics;
 * `applySettings` re-registers the snapshot metrics (stateless: they rebuild from the store on each
 * scrape) when a reload changes what their HELP text states, since prom-client fixes HELP at
 * construction. The API counters keep counting.
 */
export function registerExporterMetrics(options: MetricsOptions): {
  apiCallObserver: ApiCallObserver;
  applySettings: (settings: SnapshotMetricSettings) => void;
  /** The metrics computed from the store alone (cacheable per store change), and what they read. */
  snapshotMetrics: SnapshotMetrics;
  /** Counts changes to the metrics set outside the store; pass it to registerReloadMetrics too. */
  metricChanges: MetricChanges;
} {
  const { registry } = options;
  let current: SnapshotMetricSettings = options;
  const view = new SnapshotView(options.store);
  const registered = registerSnapshotMetrics(options, view);
  let snapshotMetricNames = registered.names;
  const metricChanges = new MetricChanges();
  return {
    apiCallObserver: registerApiMetrics(registry, metricChanges),
    metricChanges,
    // Re-registration keeps the names, so these sets hold across reloads.
    snapshotMetrics: {
      names: new Set(snapshotMetricNames),
      perTarget: new Set(registered.perTarget),
      view,
    },
    applySettings(settings) {
      if (
        settings.mergeQueueIntervalSeconds === current.mergeQueueIntervalSeconds &&
        settings.flakyTestsIntervalSeconds === current.flakyTestsIntervalSeconds &&
        settings.topCodeowners === current.topCodeowners
      ) {
        return;
      }
      for (const name of snapshotMetricNames) registry.removeSingleMetric(name);
      current = settings;
      snapshotMetricNames = registerSnapshotMetrics({ ...options, ...settings }, view).names;
    },
  };
}

/**
 * Registers the metrics computed from snapshots, reading `view`; returns their names, and which of
 * them are per target.
 */
function registerSnapshotMetrics(
  options: MetricsOptions,
  view: SnapshotView,
): { names: string[]; perTarget: string[] } {
  const { registry } = options;
  const namesNow = (): string[] => registry.getMetricsAsArray().map((metric) => metric.name);
  const before = new Set(namesNow());
  const source = view.perTarget;
  registerMergeQueueMetrics({
    registry,
    source,
    intervalSeconds: options.mergeQueueIntervalSeconds,
  });
  registerQueueFlowMetrics({
    registry,
    source,
    intervalSeconds: options.mergeQueueIntervalSeconds,
  });
  registerFlakyTestsMetrics({
    registry,
    source,
    intervalSeconds: options.flakyTestsIntervalSeconds,
    topCodeowners: options.topCodeowners,
  });
  registerTargetStatusMetrics({
    registry,
    source,
    mergeQueueIntervalSeconds: options.mergeQueueIntervalSeconds,
    flakyTestsIntervalSeconds: options.flakyTestsIntervalSeconds,
  });
  const perTarget = namesNow().filter((name) => !before.has(name));
  registerExporterSummaryMetrics({
    registry,
    source: view.allTargets,
    version: options.version,
    mergeQueueIntervalSeconds: options.mergeQueueIntervalSeconds,
    flakyTestsIntervalSeconds: options.flakyTestsIntervalSeconds,
  });
  const added = namesNow().filter((name) => !before.has(name));
  for (const name of added) {
    const metric = registry.getSingleMetric(name);
    if (metric !== undefined) releaseSeriesAfterEachRead(metric);
  }
  return { names: added, perTarget };
}

/**
 * A snapshot metric with a collect() rebuilds every series from the store on each read (collect()
 * starts with reset()), so the series it keeps between reads are never used again: with 1,000
 * queues that is about 135,000 label sets and keys (tens of MB of heap) held only to be replaced
 * by the next read. Dropping them once read keeps only the rendered page. Metrics without a
 * collect() (build_info, set once) keep their series.
 */
function releaseSeriesAfterEachRead(metric: Metric): void {
  if (typeof (metric as { collect?: unknown }).collect !== 'function') return;
  const read = metric.get.bind(metric);
  metric.get = async () => {
    const values = await read();
    metric.reset();
    return values;
  };
}
