import { Secret } from '../secrets/secret.js';
import { DEFAULT_WEBHOOK_PATH, MAX_WEBHOOK_TOLERANCE_SECONDS } from '../config/schema.js';
import type { ExporterConfig } from '../config/types.js';
import { startExporter, type RunningExporter } from '../exporter.js';
import type { Logger } from '../log/logger.js';
import {
  DEFAULT_SIMULATED_REPOSITORIES,
  SIMULATOR_DEMO_TOKEN,
  SIMULATOR_ORG_SLUG,
  repositoryKey,
} from '../simulator/repositories.js';
import { UNSHARDED } from '../sharding/shardAssignment.js';
import { createIncidentCycle, type IncidentCycle } from '../simulator/incidents.js';
import { startSimulatorServer } from '../simulator/server.js';
import { createSimulatorWorld, type SimulatorWorld } from '../simulator/world.js';

interface DemoOptions {
  readonly logger: Logger;
  readonly version: string;
  /** Port of the exporter; the simulator always takes a free loopback port. */
  readonly port: number;
  readonly address?: string;
  readonly seed?: number;
}

/** The demo's simulated world: the random model plus the scripted incident cycle from startTime. */
export function createDemoWorld(
  seed: number,
  startTime: number,
): { world: SimulatorWorld; incidents: IncidentCycle } {
  const incidents = createIncidentCycle(Math.floor(startTime));
  return { world: createSimulatorWorld({ seed, startTime, script: incidents }), incidents };
}

/**
 * The built-in demo: the simulator on a free loopback port, moving in real time with the scripted
 * incidents, and an exporter polling it with short intervals so the metrics visibly change within a
 * minute.
 */
export async function startDemo(options: DemoOptions): Promise<RunningExporter> {
  const { world, incidents } = createDemoWorld(options.seed ?? 1, Date.now() / 1000);
  const simulator = await startSimulatorServer({
    world,
    token: SIMULATOR_DEMO_TOKEN,
    autoAdvance: { tickMs: 1000 },
    logger: options.logger.child({ component: 'simulator' }),
    faults: incidents,
  });
  let exporter: RunningExporter;
  try {
    exporter = await startExporter(demoConfig(simulator.baseUrl, options), {
      ...options,
      simulatedUpstream: true,
    });
  } catch (error) {
    await simulator.close();
    throw error;
  }
  options.logger.info(
    `demo: Trunk API simulator on ${simulator.baseUrl}; metrics on ${exporter.url}/metrics`,
  );
  return {
    ...exporter,
    async stop() {
      await exporter.stop();
      await simulator.close();
    },
  };
}

/** The demo's configuration: every simulated repository, flaky tests included. */
export function demoConfig(
  apiUrl: string,
  options: Pick<DemoOptions, 'port' | 'address'>,
): ExporterConfig {
  return {
    trunk: {
      apiUrl,
      token: new Secret(SIMULATOR_DEMO_TOKEN),
      orgUrlSlug: SIMULATOR_ORG_SLUG,
      timeoutSeconds: 5,
      maxConcurrentRequests: 8,
      maxRequestsPerSecond: 50,
    },
    server: {
      address: options.address ?? '0.0.0.0',
      port: options.port,
      enableReload: false,
      maxConnections: 512,
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
    sharding: UNSHARDED,
    webhooks: {
      enabled: false,
      path: DEFAULT_WEBHOOK_PATH,
      signingSecret: undefined,
      toleranceSeconds: MAX_WEBHOOK_TOLERANCE_SECONDS,
    },
    targets: DEFAULT_SIMULATED_REPOSITORIES.map((repository) => ({
      repo: { host: repository.host, owner: repository.owner, name: repository.name },
      name: repositoryKey(repository),
      branches: repository.branches,
      flakyTests: true,
    })),
  };
}
