import type { Logger } from '../log/logger.js';
import { SIMULATOR_DEMO_API_KEY, SIMULATOR_DEMO_TOKEN } from './repositories.js';
import { startSimulatorServer } from './server.js';
import type { TestListPath } from './v2Routes.js';
import { createWebhookSender, sendWorldWebhooks } from './webhookSender.js';
import { createSimulatorWorld } from './world.js';

/** The options of `trunk-exporter simulate`. */
export interface SimulateOptions {
  readonly port: number;
  readonly host: string;
  readonly seed: number;
  readonly flavour: 'documented' | 'live';
  readonly token: string | undefined;
  /** --api-key: the v2 API key the simulator accepts (Authorization: Bearer). */
  readonly apiKey: string | undefined;
  readonly latencyMs: number;
  /** --test-list-path: which path serves v2's test list. */
  readonly testListPath: TestListPath;
  /** --webhook-url and --webhook-secret: where to send the world's events, signed with what. */
  readonly webhook: { readonly url: string; readonly secret: string } | undefined;
}

/**
 * `trunk-exporter simulate`: a world moving in real time behind the simulated Trunk API, and,
 * with a webhook URL, its events sent there; resolves once it listens, to how to stop it.
 */
export async function startSimulatorProgram(
  options: SimulateOptions,
  logger: Logger,
): Promise<{ stop(): Promise<void> }> {
  const { webhook } = options;
  const world = createSimulatorWorld({
    seed: options.seed,
    flavour: options.flavour,
    startTime: Date.now() / 1000,
  });
  // Before the server: a secret svix cannot use stops the start-up.
  const sender = webhook && createWebhookSender({ ...webhook, logger });
  const simulator = await startSimulatorServer({
    world,
    token: options.token ?? SIMULATOR_DEMO_TOKEN,
    apiKey: options.apiKey ?? SIMULATOR_DEMO_API_KEY,
    host: options.host,
    port: options.port,
    autoAdvance: { tickMs: 1000 },
    latencyMs: options.latencyMs,
    testListPath: options.testListPath,
    logger,
  });
  const unsubscribe = sender && sendWorldWebhooks(world, sender);
  logger.info(
    `Trunk API simulator listening on ${simulator.baseUrl} (v1) and ${simulator.origin}/v2`,
  );
  if (webhook) logger.info({ url: webhook.url }, `sending webhooks to ${webhook.url}`);
  return {
    stop: async () => {
      unsubscribe?.();
      await Promise.all([simulator.close(), sender?.close()]);
    },
  };
}
