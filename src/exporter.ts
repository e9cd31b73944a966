import { checkApiBudget, computeApiBudget } from './budget/apiBudget.js';
import { configuredTargets } from './config/targets.js';
import type { ExporterConfig } from './config/types.js';
import { KnownSecrets } from './secrets/knownSecrets.js';
import { scrubSecrets } from './secrets/scrubSecrets.js';
import type { Logger } from './log/logger.js';
import {
  registerCapacityMetrics,
  registerExporterMetrics,
  registerReloadMetrics,
} from './metrics/index.js';
import { registerPollOverrunMetrics } from './metrics/pollOverrunMetrics.js';
import { registerWebhookRequestMetrics } from './metrics/webhookRequestMetrics.js';
import { createRegistry } from './metrics/registry.js';
import { LookupMemories } from './poller/lookupMemories.js';
import { PollScheduler } from './poller/scheduler.js';
import { buildPollJobs } from './poller/targetJobs.js';
import { clientSettingsChanged, diffConfigs, type ConfigChanges } from './reload/configChanges.js';
import { ConfigReloader, type ReloadResult, type ReloadTrigger } from './reload/configReloader.js';
import { TrunkClientSlot } from './reload/trunkClientSlot.js';
import {
  BasicAuthVerifier,
  checkOpenFileLimit,
  createHttpApp,
  startHttpServer,
} from './server/index.js';
import { SnapshotStore } from './snapshot/store.js';
import { targetKey, type Target } from './snapshot/types.js';
import { TrunkClient } from './trunk/client.js';
import type { MergeQueueEvent } from './trunk/webhookEvents.js';
import { applyMergeQueueEvent } from './flow/queueEvents.js';
import { TriggeredPolls, type TriggerSpacing } from './webhooks/pollTriggers.js';
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
 * Wires one exporter: config → scheduler → Trunk client → snapshot store → metrics → HTTP. The
 * scrape path only reads the store; all network traffic to Trunk starts in the scheduler. Start-up
 * and every reload go through the same applyConfig.
 */
export async function startExporter(
  config: ExporterConfig,
  dependencies: ExporterDependencies,
): Promise<RunningExporter> {
  const { logger, version } = dependencies;
  const secrets = dependencies.secrets ?? new KnownSecrets();
  let current = config;
  // Read by its gauge from the first scrape on; applyConfig checks (and logs) it for every config.
  let apiBudget = computeApiBudget(config);
  const registry = createRegistry();
  const store = new SnapshotStore(config.polling.staleAfterSeconds);
  // Before the server starts, so /readyz never sees an empty (hence "ready") target list.
  const targets = configuredTargets(config);
  store.setTargets(targets);
  /** How many targets share the Trunk client's limits; set by applyConfig. */
  let targetCount = targets.length;
  const metrics = registerExporterMetrics({
    registry,
    store,
    version,
    mergeQueueIntervalSeconds: config.polling.mergeQueueIntervalSeconds,
    flakyTestsIntervalSeconds: config.polling.flakyTestsIntervalSeconds,
    ...config.metrics,
    logger,
  });
  registerCapacityMetrics({
    registry,
    apiBudget: () => apiBudget,
    sharding: () => current.sharding,
  });
  const reloadObserver = registerReloadMetrics(registry);
  const pollObserver = registerPollOverrunMetrics(registry);
  const clients = new TrunkClientSlot(
    (trunk) =>
      new TrunkClient({
        apiUrl: trunk.apiUrl,
        token: trunk.token,
        timeoutSeconds: trunk.timeoutSeconds,
        maxConcurrentRequests: trunk.maxConcurrentRequests,
        maxRequestsPerSecond: trunk.maxRequestsPerSecond,
        maxResponseBytes: trunk.maxResponseBytes,
        observer: metrics.apiCallObserver,
        logger,
        version,
        targets: () => targetCount,
      }),
    config.trunk,
  );
  const auth = new BasicAuthVerifier(config.server.basicAuthUsers);
  const scheduler = new PollScheduler({
    logger,
    ...(dependencies.firstPollSpreadSeconds === undefined
      ? {}
      : { firstPollSpreadSeconds: dependencies.firstPollSpreadSeconds }),
  });
  const lookupMemories = new LookupMemories();
  // Event-triggered polls run as the target's own scheduled job: the same client limits,
  // fairness and deadline as every other poll, and never two polls of one target at once.
  const triggeredPolls = new TriggeredPolls((target) => {
    scheduler.runNow(targetKey(target));
  }, dependencies.webhookTriggerSpacing);
  /**
   * An accepted webhook event about a configured merge queue (its ledger already counted it):
   * what else the event means for the queue starts here. Never blocks the answer to Trunk.
   */
  function onMergeQueueEvent(target: Target, event: MergeQueueEvent, receivedAt: number): void {
    // An exit counts at once, and once: the poll that sees the PR gone will not count it again.
    store.updateQueueFlow(target, (flow) =>
      applyMergeQueueEvent(flow, event, receivedAt, {
        intervalSeconds: current.polling.mergeQueueIntervalSeconds,
      }),
    );
    triggeredPolls.request(target);
  }
  const webhooks = new WebhookReceiver({
    store,
    observer: registerWebhookRequestMetrics(registry),
    logger,
    onMergeQueueEvent,
    onFlakyTestEvent: (target) => {
      triggeredPolls.request(target);
    },
  });
  const reloader =
    dependencies.loadConfig &&
    new ConfigReloader({
      load: dependencies.loadConfig,
      apply: (next) => applyConfig(next),
      observer: reloadObserver,
      logger,
    });
  const reload = async (trigger: ReloadTrigger): Promise<ReloadResult> => {
    if (!reloader) {
      const message = 'nothing to reload: this exporter has no configuration file';
      logger.warn({ trigger }, message);
      return { applied: false, message };
    }
    const result = await reloader.reload(trigger);
    // The log is scrubbed line by line; a response body is not, so scrub it here.
    return { ...result, message: scrubSecrets(result.message, secrets.values()) };
  };

  const app = createHttpApp({
    registry,
    store,
    snapshotMetrics: metrics.snapshotMetrics,
    version,
    logger,
    auth,
    intervals: {
      get mergeQueueIntervalSeconds() {
        return current.polling.mergeQueueIntervalSeconds;
      },
      get flakyTestsIntervalSeconds() {
        return current.polling.flakyTestsIntervalSeconds;
      },
    },
    reload: { enabled: () => current.server.enableReload, reload: () => reload('HTTP') },
    simulatedUpstream: dependencies.simulatedUpstream === true,
    webhooks,
  });
  const { address, port, tls } = config.server;
  const http = await startHttpServer(app, address, port, tls, {
    maxConnections: config.server.maxConnections,
  });
  const listening = { address, port, tls: tls !== undefined };

  /** Makes `next` the running configuration; kept targets keep their data and their schedule. */
  function applyConfig(next: ExporterConfig): ConfigChanges {
    const changes = diffConfigs(current, next, listening);
    // A renewed certificate serves new connections at once; TLS on or off waits for a restart.
    if (next.server.tls && changes.settingsChanged.includes('server.tls')) {
      http.updateTls(next.server.tls);
    }
    auth.setUsers(next.server.basicAuthUsers);
    http.setMaxConnections(next.server.maxConnections);
    checkOpenFileLimit(
      {
        maxConnections: next.server.maxConnections,
        maxConcurrentRequests: next.trunk.maxConcurrentRequests,
      },
      logger,
    );
    secrets.add(next.trunk.token);
    if (next.webhooks.signingSecret) secrets.add(next.webhooks.signingSecret);
    if (clientSettingsChanged(current, next)) clients.replace(next.trunk);
    metrics.applySettings({ ...next.polling, ...next.metrics });
    // After applySettings: setTargets counts as a store change, so the cached /metrics page, whose
    // HELP texts may just have changed, is rendered again.
    const nextTargets = configuredTargets(next);
    targetCount = nextTargets.length;
    store.setTargets(nextTargets, next.polling.staleAfterSeconds);
    webhooks.configure(next.webhooks, nextTargets);
    triggeredPolls.keepOnly(nextTargets);
    scheduler.setJobs(
      buildPollJobs({
        config: next,
        reader: clients.current,
        store,
        logger,
        lookupMemories,
        pollObserver,
      }),
    );
    apiBudget = checkApiBudget(next, logger);
    current = next;
    return changes;
  }

  applyConfig(config);
  let stopping: Promise<void> | undefined;
  reloadObserver.reloadSucceeded(Date.now() / 1000);
  logger.info(
    {
      url: http.url,
      apiUrl: config.trunk.apiUrl,
      mergeQueues: targets.filter((target) => target.kind === 'merge_queue').length,
      flakyTestRepositories: targets.filter((target) => target.kind === 'flaky_tests').length,
      shard: config.sharding.shard,
      totalShards: config.sharding.totalShards,
      tls: listening.tls,
      basicAuth: auth.enabled,
      reloadEndpoint: config.server.enableReload,
      webhooks: webhooks.path,
    },
    `serving metrics on ${http.url}/metrics`,
  );

  return {
    url: http.url,
    store,
    reload,
    stop() {
      // All at once: no new scrapes, every poll and API call aborted, connections closed. A second
      // call (a signal during shutdown, a test cleanup) waits for the same stop.
      triggeredPolls.stop();
      stopping ??= Promise.all([http.close(), scheduler.stop(), clients.close()]).then(() => {});
      return stopping;
    },
  };
}
