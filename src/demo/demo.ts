import { randomBytes } from 'node:crypto';
import { Secret } from '../secrets/secret.js';
import {
  DEFAULT_DISCOVERY_MAX_TARGETS,
  DEFAULT_WEBHOOK_BODY_TIMEOUT_SECONDS,
  DEFAULT_WEBHOOK_PATH,
  MAX_WEBHOOK_TOLERANCE_SECONDS,
} from '../config/schema.js';
import type { ExporterConfig } from '../config/types.js';
import { startExporter, type RunningExporter } from '../exporter.js';
import type { Logger } from '../log/logger.js';
import { SIMULATOR_DEMO_API_KEY, SIMULATOR_DEMO_TOKEN } from '../simulator/repositories.js';
import { UNSHARDED } from '../sharding/shardAssignment.js';
import { createIncidentCycle, type IncidentCycle } from '../simulator/incidents.js';
import { startSimulatorServer } from '../simulator/server.js';
import { createWebhookSender, sendWorldWebhooks } from '../simulator/webhookSender.js';
import { createSimulatorWorld, type SimulatorWorld } from '../simulator/world.js';

interface DemoOptions {
  readonly logger: Logger;
  readonly version: string;
  /** Port of the exporter; the simulator always takes a free loopback port. */
  readonly port: number;
  readonly address?: string;
  readonly seed?: number;
}

/**
 * The demo's simulated world: the random model plus the scripted incident cycle from startTime.
 * Only the script breaks tests, so the alerts the demo raises are its incidents'.
 */
export function createDemoWorld(
  seed: number,
  startTime: number,
): { world: SimulatorWorld; incidents: IncidentCycle } {
  const incidents = createIncidentCycle(Math.floor(startTime));
  return {
    world: createSimulatorWorld({ seed, startTime, script: incidents, brokenAsFlaky: true }),
    incidents,
  };
}

/**
 * The built-in demo: the simulator on a free loopback port, moving in real time with the scripted
 * incidents, and an exporter polling it with short intervals so the metrics visibly change within a
 * minute. The simulator also sends its webhooks to the exporter, signed with a secret made for
 * this run.
 */
export async function startDemo(options: DemoOptions): Promise<RunningExporter> {
  const { world, incidents } = createDemoWorld(options.seed ?? 1, Date.now() / 1000);
  const webhookSecret = demoWebhookSecret();
  const simulator = await startSimulatorServer({
    world,
    token: SIMULATOR_DEMO_TOKEN,
    apiKey: SIMULATOR_DEMO_API_KEY,
    autoAdvance: { tickMs: 1000 },
    logger: options.logger.child({ component: 'simulator' }),
    faults: incidents,
  });
  let exporter: RunningExporter;
  try {
    exporter = await startExporter(demoConfig(simulator.origin, options, webhookSecret), {
      ...options,
      simulatedUpstream: true,
    });
  } catch (error) {
    await simulator.close();
    throw error;
  }
  const webhooks = sendDemoWebhooks(world, exporter.url, webhookSecret, options.logger);
  options.logger.info(
    `demo: Trunk API simulator (v1 and v2) on ${simulator.origin}, sending webhooks to ${webhooks.url}; ` +
      `metrics on ${exporter.url}/metrics`,
  );
  return {
    ...exporter,
    async stop() {
      await webhooks.stop();
      await exporter.stop();
      await simulator.close();
    },
  };
}

/** A new Svix signing secret for one demo run. */
export function demoWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/**
 * Sends what the demo world does, as Trunk's webhooks signed with `secret`, to the demo exporter at
 * `exporterUrl` (its configured webhook path); `stop` ends it.
 */
export function sendDemoWebhooks(
  world: SimulatorWorld,
  exporterUrl: string,
  secret: string,
  logger: Logger,
): { readonly url: string; stop(): Promise<void> } {
  const url = `${loopbackUrl(exporterUrl)}${DEFAULT_WEBHOOK_PATH}`;
  const sender = createWebhookSender({
    url,
    secret,
    logger: logger.child({ component: 'simulator' }),
  });
  const unsubscribe = sendWorldWebhooks(world, sender);
  return {
    url,
    async stop() {
      unsubscribe();
      await sender.close();
    },
  };
}

/** The exporter's URL as the simulator beside it reaches it: a wildcard address is loopback. */
function loopbackUrl(exporterUrl: string): string {
  const url = new URL(exporterUrl);
  if (url.hostname === '0.0.0.0') url.hostname = '127.0.0.1';
  if (url.hostname === '[::]') url.hostname = '[::1]';
  return url.origin;
}

/**
 * The demo's configuration: as a real organization would start, with a read-only API v2 key and
 * discovery on and no target listed, so every simulated queue (and quarantine list) is found.
 */
export function demoConfig(
  apiUrl: string,
  options: Pick<DemoOptions, 'port' | 'address'>,
  /** With it, webhooks are on and verified with it; without, off. */
  webhookSecret?: string,
): ExporterConfig {
  return {
    trunk: {
      apiUrl,
      token: undefined,
      apiKey: new Secret(SIMULATOR_DEMO_API_KEY),
      orgUrlSlug: undefined,
      timeoutSeconds: 5,
      maxConcurrentRequests: 8,
      maxRequestsPerSecond: 50,
    },
    server: {
      address: options.address ?? '0.0.0.0',
      port: options.port,
      enableReload: false,
      maxConnections: 512,
      maxConnectionsPerAddress: 64,
      maxTlsConnectionsPerAddressPerSecond: 50,
      tls: undefined,
      basicAuthUsers: new Map(),
    },
    polling: {
      mergeQueueIntervalSeconds: 5,
      flakyTestsIntervalSeconds: 30,
      pullRequestDetails: true,
      // The demo's queues move every few seconds; a minute keeps readiness visibly current.
      pullRequestRecheckSeconds: 60,
      flakyTestDetails: true,
      staleAfterSeconds: 120,
    },
    metrics: { topCodeowners: 20 },
    reads: {
      queueEntryHistory: true,
      verificationRuns: true,
      testMetricsPeriod: '7d',
      testCollections: true,
    },
    sharding: UNSHARDED,
    webhooks: {
      enabled: webhookSecret !== undefined,
      path: DEFAULT_WEBHOOK_PATH,
      signingSecret: webhookSecret === undefined ? undefined : new Secret(webhookSecret),
      toleranceSeconds: MAX_WEBHOOK_TOLERANCE_SECONDS,
      bodyTimeoutSeconds: DEFAULT_WEBHOOK_BODY_TIMEOUT_SECONDS,
    },
    discovery: {
      enabled: true,
      // The simulated organization's queues never change; a real one's seldom do.
      intervalSeconds: 60,
      repos: ['*'],
      branches: ['*'],
      flakyTests: true,
      maxTargets: DEFAULT_DISCOVERY_MAX_TARGETS,
    },
    targets: [],
  };
}
