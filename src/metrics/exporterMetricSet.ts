import type { Registry } from 'prom-client';
import { checkApiBudget, computeApiBudget } from '../budget/apiBudget.js';
import type { LiveConfig } from '../config/liveConfig.js';
import type { DiscoveryObserver } from '../discovery/observer.js';
import type { Logger } from '../log/logger.js';
import type { PollObserver } from '../poller/pollObserver.js';
import type { ReloadObserver } from '../reload/observer.js';
import type { SnapshotStore } from '../snapshot/store.js';
import type { ApiCallObserver } from '../trunk/observer.js';
import type { WebhookObserver } from '../webhooks/observer.js';
import { registerCapacityMetrics } from './capacityMetrics.js';
import { registerDiscoveryMetrics } from './discoveryMetrics.js';
import { registerExporterMetrics } from './index.js';
import { registerPollOverrunMetrics } from './pollOverrunMetrics.js';
import { registerReloadMetrics } from './reloadMetrics.js';
import type { SnapshotFamilies } from './snapshotFamilies.js';
import { registerWebhookRequestMetrics } from './webhookRequestMetrics.js';

/** Every metric of an exporter, by what feeds it. */
export interface ExporterMetrics {
  /** The families computed from the store alone, as the /metrics page renders them. */
  readonly snapshotMetrics: SnapshotFamilies;
  readonly apiCallObserver: ApiCallObserver;
  readonly reloadObserver: ReloadObserver;
  readonly pollObserver: PollObserver;
  readonly webhookObserver: WebhookObserver;
  readonly discoveryObserver: DiscoveryObserver;
}

interface ExporterMetricsOptions {
  readonly store: SnapshotStore;
  readonly version: string;
  /** Each reload's HELP texts, selection, budget and sharding are taken from here. */
  readonly config: LiveConfig;
  /** Where a family that fails to render and an API budget over the limit are reported. */
  readonly logger: Logger;
}

/**
 * Registers every exporter metric on `registry` (production and the test apps alike) and follows
 * the configuration: the families' settings and the API budget are applied on every reload.
 */
export function createExporterMetrics(
  registry: Registry,
  options: ExporterMetricsOptions,
): ExporterMetrics {
  const { store, version, config, logger } = options;
  const initial = config.current;
  const families = registerExporterMetrics({
    registry,
    store,
    version,
    mergeQueueIntervalSeconds: initial.polling.mergeQueueIntervalSeconds,
    flakyTestsIntervalSeconds: initial.polling.flakyTestsIntervalSeconds,
    ...initial.metrics,
    logger,
  });
  let apiBudget = computeApiBudget(initial);
  registerCapacityMetrics({
    registry,
    apiBudget: () => apiBudget,
    sharding: () => config.current.sharding,
  });
  const metrics: ExporterMetrics = {
    snapshotMetrics: families.snapshotMetrics,
    apiCallObserver: families.apiCallObserver,
    reloadObserver: registerReloadMetrics(registry),
    pollObserver: registerPollOverrunMetrics(registry),
    webhookObserver: registerWebhookRequestMetrics(registry),
    discoveryObserver: registerDiscoveryMetrics(registry),
  };
  config.subscribe((next) => {
    families.applySettings({ ...next.polling, ...next.metrics });
    apiBudget = checkApiBudget(next, logger);
  });
  return metrics;
}
