import type { Registry } from 'prom-client';
import {
  computeApiBudget,
  type EventPollSpacing,
  type OrganizationLists,
} from '../budget/apiBudget.js';
import { logApiBudget } from '../budget/budgetReport.js';
import type { ExporterConfig } from '../config/types.js';
import type { LiveConfig } from '../config/liveConfig.js';
import type { DiscoveryObserver } from '../discovery/observer.js';
import type { Logger } from '../log/logger.js';
import type { PollObserver } from '../poller/pollObserver.js';
import type { ReloadObserver } from '../reload/observer.js';
import type { SnapshotStore } from '../snapshot/store.js';
import type { Target } from '../snapshot/types.js';
import type { ApiCallObserver } from '../trunk/observer.js';
import type { WebhookObserver } from '../webhooks/observer.js';
import { DEFAULT_TRIGGER_SPACING } from '../webhooks/pollTriggers.js';
import { registerCapacityMetrics } from './capacityMetrics.js';
import { registerConnectionMetrics, type ConnectionObserver } from './connectionMetrics.js';
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
  readonly connectionObserver: ConnectionObserver;
  /**
   * The polled targets (configured and discovered) and their configuration changed: the API
   * budget is computed again, with the organization as its lists last named it, and logged when
   * it moved.
   */
  readonly targetsChanged: (
    targets: readonly Target[],
    config: ExporterConfig,
    organization: OrganizationLists,
  ) => void;
}

interface ExporterMetricsOptions {
  readonly store: SnapshotStore;
  readonly version: string;
  /** Each reload's HELP texts, selection, budget and sharding are taken from here. */
  readonly config: LiveConfig;
  /** Where a family that fails to render and an API budget over the limit are reported. */
  readonly logger: Logger;
  /** How often webhook events may poll (the budget's bound with webhooks on); the default's. */
  readonly eventSpacing?: EventPollSpacing | undefined;
}

/**
 * Registers every exporter metric on `registry` (production and the test apps alike) and follows
 * the configuration: the families' settings are applied on every reload, the API budget whenever
 * the polled targets change (targetsChanged).
 */
export function createExporterMetrics(
  registry: Registry,
  options: ExporterMetricsOptions,
): ExporterMetrics {
  const { store, version, config, logger } = options;
  const eventSpacing = options.eventSpacing ?? DEFAULT_TRIGGER_SPACING;
  const initial = config.current;
  const families = registerExporterMetrics({
    registry,
    store,
    version,
    mergeQueueIntervalSeconds: initial.polling.mergeQueueIntervalSeconds,
    flakyTestsIntervalSeconds: initial.polling.flakyTestsIntervalSeconds,
    ...initial.metrics,
    webhooksEnabled: initial.webhooks.enabled,
    logger,
  });
  let apiBudget = computeApiBudget(initial, { eventSpacing });
  let logged: string | undefined;
  registerCapacityMetrics({
    registry,
    apiBudget: () => apiBudget,
    sharding: () => config.current.sharding,
  });
  // In page order.
  const reloadObserver = registerReloadMetrics(registry);
  const pollObserver = registerPollOverrunMetrics(registry);
  const webhookRequests = registerWebhookRequestMetrics(registry);
  const metrics: ExporterMetrics = {
    snapshotMetrics: families.snapshotMetrics,
    apiCallObserver: families.apiCallObserver,
    reloadObserver,
    pollObserver,
    webhookObserver: webhookRequests.observer,
    discoveryObserver: registerDiscoveryMetrics(registry),
    connectionObserver: registerConnectionMetrics(registry, initial.server.tls !== undefined),
    targetsChanged(targets, next, organization) {
      apiBudget = computeApiBudget(next, { targets, organization, eventSpacing });
      // Until discovery has found targets, the load is discovery's own reads: the line waits for
      // them; a discovery read that changes nothing logs nothing.
      if (targets.length === 0 && next.discovery?.enabled === true) return;
      const key = `${apiBudget.requestsPerSecond}/${apiBudget.maxRequestsPerSecond}`;
      if (key !== logged) logApiBudget(apiBudget, logger);
      logged = key;
    },
  };
  config.subscribe((next) => {
    families.applySettings({
      ...next.polling,
      ...next.metrics,
      webhooksEnabled: next.webhooks.enabled,
    });
    webhookRequests.setEnabled(next.webhooks.enabled);
  });
  return metrics;
}
