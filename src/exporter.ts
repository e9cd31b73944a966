import { secretsOf } from './config/credentials.js';
import { LiveConfig, type ApplyConfig } from './config/liveConfig.js';
import { configuredTargets } from './config/targets.js';
import type { ExporterConfig } from './config/types.js';
import { PolledTargets } from './discovery/polledTargets.js';
import type { Logger } from './log/logger.js';
import { createExporterMetrics } from './metrics/exporterMetricSet.js';
import { createRegistry } from './metrics/registry.js';
import type { ReloadResult, ReloadTrigger } from './reload/configReloader.js';
import { liveReload } from './reload/liveReload.js';
import { ReplaceableTrunkClient, trunkClientBuilder } from './reload/replaceableTrunkClient.js';
import { KnownSecrets } from './secrets/knownSecrets.js';
import {
  applyServerSettings,
  BasicAuthVerifier,
  createHttpApp,
  type HttpAppOptions,
  startHttpServer,
} from './server/index.js';
import { SnapshotStore } from './snapshot/store.js';
import type { TriggerSpacing } from './webhooks/pollTriggers.js';
import type { WebhookObserver } from './webhooks/observer.js';
import { WebhookReceiver } from './webhooks/receiver.js';

/** A started exporter: its address, its state for tests, and how to reload and stop it. */
export interface RunningExporter {
  /** Base URL of the HTTP server, e.g. `http://127.0.0.1:9740` (`https://` with TLS). */
  readonly url: string;
  readonly store: SnapshotStore;
  /** Loads the configuration again and applies it; an invalid one leaves the running one. */
  reload(trigger: ReloadTrigger): Promise<ReloadResult>;
  /** Stops serving, aborts in-flight API calls and closes connections. */
  stop(): Promise<void>;
}

interface ExporterDependencies {
  readonly logger: Logger;
  readonly version: string;
  /** Reads the configuration again, for reloads; without it (the demo) there is nothing to reload. */
  readonly loadConfig?: () => Promise<ExporterConfig>;
  /** Told every token the exporter uses, so the logger scrubs rotated ones too. */
  readonly secrets?: KnownSecrets;
  /** The upstream is the built-in simulator (`--demo`); the landing page says so. */
  readonly simulatedUpstream?: boolean;
  /** How webhook events turn into polls; tests shorten it. */
  readonly webhookTriggerSpacing?: TriggerSpacing;
  /** The most seconds a target's first poll waits (PollScheduler's default 2); tests shorten it. */
  readonly firstPollSpreadSeconds?: number;
}

/**
 * Wires one exporter: config → scheduler → Trunk client → snapshot store → metrics → HTTP. Each
 * component subscribes its own apply step to the live configuration, which runs it at once and on
 * every reload; the scrape path only reads the store.
 */
export async function startExporter(
  config: ExporterConfig,
  dependencies: ExporterDependencies,
): Promise<RunningExporter> {
  const { logger, version, firstPollSpreadSeconds } = dependencies;
  const triggerSpacing = dependencies.webhookTriggerSpacing;
  const secrets = dependencies.secrets ?? new KnownSecrets();
  const live = new LiveConfig(config);
  live.subscribe(noteSecretsAndWarnings(secrets, logger));
  const registry = createRegistry();
  const store = new SnapshotStore(config.polling.staleAfterSeconds);
  // Before the server starts, so /readyz never sees an empty (hence "ready") target list.
  store.setTargets(configuredTargets(config));
  const metrics = createExporterMetrics(registry, {
    store,
    version,
    config: live,
    logger,
    eventSpacing: triggerSpacing,
  });
  const shared = { observer: metrics.apiCallObserver, logger, version };
  const clients = new ReplaceableTrunkClient(trunkClientBuilder(shared), config.trunk);
  live.subscribe(clients.apply);
  const polled = new PolledTargets(
    { store, clients, logger, triggerSpacing, firstPollSpreadSeconds, ...metrics },
    config,
  );
  polled.onTargets(metrics.targetsChanged);
  const webhooks = receiveWebhooks(store, metrics.webhookObserver, polled, logger);
  const {
    address,
    port,
    tls,
    basicAuthUsers,
    maxConnections,
    maxConnectionsPerAddress,
    maxTlsConnectionsPerAddressPerSecond,
  } = config.server;
  const listening = { address, port, tls: tls !== undefined };
  const reload = liveReload({
    config: live,
    load: dependencies.loadConfig,
    listening,
    secrets,
    logger,
    observer: metrics.reloadObserver,
    polledTargets: () => polled.targets(),
  });
  const auth = new BasicAuthVerifier(basicAuthUsers);
  const app = createHttpApp({
    registry,
    store,
    snapshotMetrics: metrics.snapshotMetrics,
    version,
    logger,
    auth,
    intervals: pollingIntervals(live),
    reload: { enabled: () => live.current.server.enableReload, reload: () => reload('HTTP') },
    simulatedUpstream: dependencies.simulatedUpstream === true,
    webhooks,
  });
  const http = await startHttpServer(
    app,
    address,
    port,
    tls,
    { maxConnections, maxConnectionsPerAddress, maxTlsConnectionsPerAddressPerSecond },
    metrics.connectionObserver,
  );
  live.subscribe(applyServerSettings(http, auth, logger));
  live.subscribe(polled.apply);
  metrics.reloadObserver.reloadSucceeded(Date.now() / 1000);
  logServing(logger, http.url, config, auth.enabled, webhooks.path);

  let stopping: Promise<void> | undefined;
  return {
    url: http.url,
    store,
    reload,
    stop() {
      // All at once: no new scrapes, every poll and API call aborted, connections closed. A second
      // call (a signal during shutdown, a test cleanup) waits for the same stop.
      stopping ??= Promise.all([http.close(), polled.stop(), clients.close()]).then(() => {});
      return stopping;
    },
  };
}

function logServing(
  logger: Logger,
  url: string,
  config: ExporterConfig,
  basicAuth: boolean,
  webhooks: string | undefined,
): void {
  const targets = configuredTargets(config);
  logger.info(
    {
      url,
      apiUrl: config.trunk.apiUrl,
      mergeQueues: targets.filter((target) => target.kind === 'merge_queue').length,
      flakyTestRepositories: targets.filter((target) => target.kind === 'flaky_tests').length,
      shard: config.sharding.shard,
      totalShards: config.sharding.totalShards,
      tls: config.server.tls !== undefined,
      basicAuth,
      reloadEndpoint: config.server.enableReload,
      webhooks,
    },
    `serving metrics on ${url}/metrics`,
  );
}

/** The apply step that tells the logger's scrubber each secret and logs the config's warnings. */
function noteSecretsAndWarnings(secrets: KnownSecrets, logger: Logger): ApplyConfig {
  return (next) => {
    for (const secret of secretsOf(next)) secrets.add(secret);
    for (const warning of next.warnings ?? []) logger.warn(warning);
  };
}

/** The webhook endpoint, configured with the polled targets: an accepted event moves its target. */
function receiveWebhooks(
  store: SnapshotStore,
  observer: WebhookObserver,
  polled: PolledTargets,
  logger: Logger,
): WebhookReceiver {
  const webhooks = new WebhookReceiver({
    store,
    observer,
    logger,
    onMergeQueueEvent: (target, event, receivedAt) => {
      polled.mergeQueueEvent(target, event, receivedAt);
    },
    onFlakyTestEvent: (target, event) => {
      polled.flakyTestEvent(target, event);
    },
  });
  polled.onTargets((targets, next) => {
    webhooks.configure(next.webhooks, targets);
  });
  return webhooks;
}

/** The polling intervals the landing page shows, as the live configuration has them. */
function pollingIntervals(live: LiveConfig): HttpAppOptions['intervals'] {
  return {
    get mergeQueueIntervalSeconds() {
      return live.current.polling.mergeQueueIntervalSeconds;
    },
    get flakyTestsIntervalSeconds() {
      return live.current.polling.flakyTestsIntervalSeconds;
    },
  };
}
