import { parseCommandLine, USAGE, UsageError, type Command } from './cli/arguments.js';
import { checkConfig, loadExporterConfig } from './cli/checkConfig.js';
import { listenToProcessSignals, type ProcessSignals } from './cli/processSignals.js';
import { ConfigError, configErrorLines } from './config/problems.js';
import type { ExporterConfig } from './config/types.js';
import { startExporter, type RunningExporter } from './exporter.js';
import { KnownSecrets } from './secrets/knownSecrets.js';
import { createLogger, type Logger } from './log/logger.js';
import { shardingProblem } from './sharding/shardAssignment.js';
import { VERSION } from './version.js';

/** Exit status for a bad command line or configuration, as `--check-config` documents. */
const EXIT_USAGE = 2;
/** How long shutdown may take before the process gives up waiting for in-flight work. */
const SHUTDOWN_GRACE_MS = 5000;

/** Something long-running the command line starts: stoppable, and reloadable if it has a config file. */
type Runnable = Pick<RunningExporter, 'stop'> & Partial<Pick<RunningExporter, 'reload'>>;

/** Runs the command line; resolves to the exit status once the command has finished. */
export async function main(argv: readonly string[]): Promise<number> {
  let command: Command;
  try {
    command = parseCommandLine(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`trunk-exporter: ${error.message}\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  switch (command.name) {
    case 'help':
      process.stdout.write(USAGE);
      return 0;
    case 'version':
      process.stdout.write(`trunk-exporter ${VERSION}\n`);
      return 0;
    case 'check-config':
      return checkConfig(command.configPath);
    case 'simulate': {
      // The simulator is loaded only by the commands that run it: an exporter never holds its code.
      const [
        { startSimulatorServer },
        { SIMULATOR_DEMO_API_KEY, SIMULATOR_DEMO_TOKEN },
        { createSimulatorWorld },
        { createWebhookSender, sendWorldWebhooks },
      ] = await Promise.all([
        import('./simulator/server.js'),
        import('./simulator/repositories.js'),
        import('./simulator/world.js'),
        import('./simulator/webhookSender.js'),
      ]);
      const { webhook } = command;
      const logger = createLogger({
        level: command.logLevel,
        secrets: () => (webhook === undefined ? [] : [webhook.secret]),
      });
      const world = createSimulatorWorld({
        seed: command.seed,
        flavour: command.flavour,
        startTime: Date.now() / 1000,
      });
      return startThenRun(async () => {
        // Before the server: a secret svix cannot use stops the start-up.
        const sender = webhook && createWebhookSender({ ...webhook, logger });
        const simulator = await startSimulatorServer({
          world,
          token: command.token ?? SIMULATOR_DEMO_TOKEN,
          apiKey: command.apiKey ?? SIMULATOR_DEMO_API_KEY,
          host: command.host,
          port: command.port,
          autoAdvance: { tickMs: 1000 },
          latencyMs: command.latencyMs,
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
      }, logger);
    }
    case 'demo': {
      const { startDemo } = await import('./demo/demo.js');
      const logger = createLogger({ level: command.logLevel, secrets: () => [] });
      return startThenRun(
        () => startDemo({ logger, version: VERSION, port: command.port ?? 9740 }),
        logger,
      );
    }
    case 'run': {
      // --port and --shard/--total-shards win over the file on every reload too.
      const loadConfig = async (): Promise<ExporterConfig> => {
        const config = await loadExporterConfig(command.configPath);
        const sharding = { ...config.sharding, ...command.sharding };
        const shardingError = shardingProblem(sharding);
        if (shardingError !== undefined) {
          throw new ConfigError(command.configPath, [
            {
              path: 'sharding',
              message: `${shardingError} (--shard/--total-shards override sharding in ${command.configPath})`,
            },
          ]);
        }
        return {
          ...config,
          server: { ...config.server, port: command.port ?? config.server.port },
          sharding,
        };
      };
      let config: ExporterConfig;
      try {
        config = await loadConfig();
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        printProblems(error);
        return EXIT_USAGE;
      }
      const secrets = new KnownSecrets([
        config.trunk.token,
        config.trunk.apiKey,
        config.webhooks.signingSecret,
      ]);
      const logger = createLogger({ level: command.logLevel, secrets: () => secrets.values() });
      return startThenRun(
        () => startExporter(config, { logger, version: VERSION, loadConfig, secrets }),
        logger,
      );
    }
  }
}

/** Starts something long-running; a start-up failure (a port in use…) is one log line and exit 1. */
async function startThenRun(start: () => Promise<Runnable>, logger: Logger): Promise<number> {
  // A promise rejected with nobody listening is a bug, but one that must not take the metrics
  // of every target down with it: log it and keep serving.
  process.on('unhandledRejection', (reason) => {
    logger.error({ err: reason }, 'unhandled promise rejection');
  });
  // Before start-up: the URL is logged while start() is still returning.
  const signals = listenToProcessSignals();
  let running: Runnable;
  try {
    running = await start();
  } catch (error) {
    signals.dispose();
    logger.fatal(
      { err: error },
      `cannot start: ${error instanceof Error ? error.message : String(error)}`,
    );
    return 1;
  }
  return runUntilSignal(running, signals, logger);
}

function printProblems(error: ConfigError): void {
  process.stderr.write(`${configErrorLines(error).join('\n')}\n`);
}

/** Keeps running until SIGTERM or SIGINT (reloading on SIGHUP), then stops within the grace period. */
async function runUntilSignal(
  running: Runnable,
  signals: ProcessSignals,
  logger: Logger,
): Promise<number> {
  const { reload } = running;
  if (reload) {
    signals.onHangup(() => {
      // The reloader logs the outcome itself.
      void reload('SIGHUP');
    });
  }
  const signal = await signals.stopRequested;
  // A second SIGTERM or SIGINT during shutdown gets the default action: it ends the process now.
  signals.dispose();
  logger.info({ signal }, 'shutting down');
  const timeout = new Promise<'timeout'>((resolve) =>
    setTimeout(() => {
      resolve('timeout');
    }, SHUTDOWN_GRACE_MS).unref(),
  );
  const outcome = await Promise.race([running.stop().then(() => 'stopped' as const), timeout]);
  if (outcome === 'timeout') {
    logger.warn(`shutdown took longer than ${SHUTDOWN_GRACE_MS / 1000}s; exiting anyway`);
    // In-flight work would keep the event loop alive past the grace period.
    process.exit(0);
  }
  return 0;
}
