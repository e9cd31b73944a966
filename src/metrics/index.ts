import type { Registry } from 'prom-client';
import type { Logger } from '../log/logger.js';
import type { SnapshotStore } from '../snapshot/store.js';
import type { ApiCallObserver } from '../trunk/observer.js';
import { registerApiMetrics } from './apiMetrics.js';
import { WEBHOOK_ONLY_FAMILIES } from './families.js';
import { RenderErrors } from './renderErrors.js';
import type { FamilySettings } from './family.js';
import type { MetricSelection } from './selection.js';
import { SnapshotFamilies } from './snapshotFamilies.js';

export { registerCapacityMetrics } from './capacityMetrics.js';
export { createRegistry } from './registry.js';
export type { RegistryOptions } from './registry.js';
export {
  negotiateExpositionFormat,
  OPENMETRICS_CONTENT_TYPE,
  PROMETHEUS_CONTENT_TYPE,
} from './exposition.js';
export type { ExpositionFormat } from './exposition.js';
export { metricSelectionEntryProblem, metricSelectionEntryWarning } from './families.js';
export { registerReloadMetrics } from './reloadMetrics.js';
export { MetricsPage } from './metricsPage.js';
export type { MetricsPageResponse } from './metricsPage.js';
export { SnapshotFamilies } from './snapshotFamilies.js';

export interface MetricsOptions extends MetricSelection {
  registry: Registry;
  store: SnapshotStore;
  version: string;
  mergeQueueIntervalSeconds: number;
  flakyTestsIntervalSeconds: number;
  /** How many code owners get their own series; the rest are summed as `other`. */
  topCodeowners: number;
  /** Where a family that fails to render is reported; without it, it is only counted. */
  logger?: Logger;
  /** `webhooks.enabled`; false leaves out the families only webhooks feed (unset keeps them). */
  webhooksEnabled?: boolean;
}

/** The settings that shape the snapshot families' HELP texts, series and selection; a reload may change them. */
export type SnapshotMetricSettings = Pick<
  MetricsOptions,
  | 'mergeQueueIntervalSeconds'
  | 'flakyTestsIntervalSeconds'
  | 'topCodeowners'
  | 'include'
  | 'exclude'
  | 'webhooksEnabled'
>;

/**
 * Sets up every exporter metric: the families the engine renders from the store, and on the
 * registry what the exporter observes itself. The returned observer feeds the API metrics;
 * `applySettings` applies a reload's HELP-shaping settings and selection to the families. Throws
 * when the selection names no family (metricSelectionEntryProblem tells what first).
 */
export function registerExporterMetrics(options: MetricsOptions): {
  apiCallObserver: ApiCallObserver;
  applySettings: (settings: SnapshotMetricSettings) => void;
  /** The families computed from the store alone, as the /metrics page renders them. */
  snapshotMetrics: SnapshotFamilies;
} {
  const { registry, version } = options;
  const snapshotMetrics = new SnapshotFamilies({
    settings: familySettings(options, version),
    selection: selectionOf(options),
    renderErrors: new RenderErrors(registry, options.logger),
  });
  return {
    apiCallObserver: registerApiMetrics(registry),
    snapshotMetrics,
    applySettings(settings) {
      snapshotMetrics.apply(familySettings(settings, version), selectionOf(settings));
    },
  };
}

function familySettings(settings: SnapshotMetricSettings, version: string): FamilySettings {
  return {
    mergeQueueIntervalSeconds: settings.mergeQueueIntervalSeconds,
    flakyTestsIntervalSeconds: settings.flakyTestsIntervalSeconds,
    topCodeowners: settings.topCodeowners,
    version,
  };
}

function selectionOf(
  settings: MetricSelection & Pick<MetricsOptions, 'webhooksEnabled'>,
): MetricSelection {
  const webhookOnly = settings.webhooksEnabled === false ? WEBHOOK_ONLY_FAMILIES : [];
  return { include: settings.include, exclude: [...(settings.exclude ?? []), ...webhookOnly] };
}
