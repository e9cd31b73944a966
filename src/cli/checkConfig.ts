import { computeApiBudget } from '../budget/apiBudget.js';
import { describeBudgetExcess } from '../budget/budgetReport.js';
import { loadConfigFile } from '../config/load.js';
import { ConfigError, configErrorLines } from '../config/problems.js';
import type { ExporterConfig } from '../config/types.js';
import { metricSelectionEntryProblem, metricSelectionEntryWarning } from '../metrics/index.js';
import { bcryptCostWarning } from '../server/index.js';
import { DEFAULT_TRIGGER_SPACING } from '../webhooks/pollTriggers.js';

/** Exit status of `--check-config` (and of a start-up) when the configuration has problems. */
export const EXIT_CONFIG_PROBLEM = 2;

interface CheckOutput {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
}

/**
 * `--check-config`: exit 0 with a one-line summary (and warnings on stderr, each on a line), or
 * every problem (one per line, with its path and line) and exit 2.
 */
export async function checkConfig(
  path: string,
  output: CheckOutput = process,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<number> {
  try {
    const config = await loadExporterConfig(path, env);
    for (const warning of config.warnings ?? [])
      output.stderr.write(`${path}: warning: ${warning}\n`);
    output.stdout.write(`${path}: OK (${describeTargets(config)})\n`);
    const budget = computeApiBudget(config, { eventSpacing: DEFAULT_TRIGGER_SPACING });
    for (const warning of [
      bcryptCostWarning(config.server.basicAuthUsers),
      describeBudgetExcess(budget),
    ]) {
      if (warning !== undefined) output.stderr.write(`${path}: warning: ${warning}\n`);
    }
    return 0;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    output.stderr.write(`${configErrorLines(error).join('\n')}\n`);
    return EXIT_CONFIG_PROBLEM;
  }
}

/**
 * Loads the file, its `metrics.include`/`exclude` checked against the families there are (the
 * schema cannot: the family names live in the metrics layer) with every other problem.
 */
export function loadExporterConfig(
  path: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<ExporterConfig> {
  return loadConfigFile(path, env, {
    metricSelection: metricSelectionEntryProblem,
    metricSelectionWarning: metricSelectionEntryWarning,
  });
}

/** `1 repository, 3 merge queues`. */
export function describeTargets(config: ExporterConfig): string {
  const repositories = config.targets.length;
  const queues = config.targets.reduce((sum, target) => sum + target.branches.length, 0);
  const discovery =
    config.discovery?.enabled === true
      ? `; discovery of the organization's merge queues every ${config.discovery.intervalSeconds}s`
      : '';
  return `${count(repositories, 'repository', 'repositories')}, ${count(queues, 'merge queue', 'merge queues')}${discovery}`;
}

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}
