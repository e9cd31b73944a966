import { parseCommandLine, USAGE, UsageError, type Command } from './cli/arguments.js';
import { checkConfig } from './cli/checkConfig.js';
import { loadWithOverrides } from './cli/commandLineOverrides.js';
import { startThenRun } from './cli/runUntilStopped.js';
import { secretsOf } from './config/credentials.js';
import { ConfigError, configErrorLines } from './config/problems.js';
import type { ExporterConfig } from './config/types.js';
import { startExporter } from './exporter.js';
import { KnownSecrets } from './secrets/knownSecrets.js';
import { createLogger } from './log/logger.js';
import { VERSION } from './version.js';

/** Exit status for a bad command line or configuration, as `--check-config` documents. */
const EXIT_USAGE = 2;

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
      const { startSimulatorProgram } = await import('./simulator/program.js');
      const { webhook } = command;
      const logger = createLogger({
        level: command.logLevel,
        secrets: () => (webhook === undefined ? [] : [webhook.secret]),
      });
      return startThenRun(() => startSimulatorProgram(command, logger), logger);
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
      const loadConfig = () => loadWithOverrides(command);
      let config: ExporterConfig;
      try {
        config = await loadConfig();
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        process.stderr.write(`${configErrorLines(error).join('\n')}\n`);
        return EXIT_USAGE;
      }
      const secrets = new KnownSecrets(secretsOf(config));
      const logger = createLogger({ level: command.logLevel, secrets: () => secrets.values() });
      return startThenRun(
        () => startExporter(config, { logger, version: VERSION, loadConfig, secrets }),
        logger,
      );
    }
  }
}
