import { parseArgs } from 'node:util';
import { MAX_REPORTED_PROBLEMS } from '../config/problems.js';
import { LOG_LEVELS } from '../log/logger.js';
import type { SimulateOptions } from '../simulator/program.js';
import { TEST_LIST_PATHS, type TestListPath } from '../simulator/v2Routes.js';

type LogLevel = (typeof LOG_LEVELS)[number];

/** What the command line asked for. */
export type Command =
  | { readonly name: 'help' }
  | { readonly name: 'version' }
  | { readonly name: 'check-config'; readonly configPath: string }
  | {
      readonly name: 'run';
      readonly configPath: string;
      readonly logLevel: LogLevel;
      readonly port: number | undefined;
      /** --shard / --total-shards; each overrides the config's `sharding` key of the same meaning. */
      readonly sharding: ShardFlags;
    }
  | { readonly name: 'demo'; readonly logLevel: LogLevel; readonly port: number | undefined }
  | ({ readonly name: 'simulate'; readonly logLevel: LogLevel } & SimulateOptions);

/** The shard flags given on the command line (absent ones come from the config). */
export interface ShardFlags {
  readonly shard?: number;
  readonly totalShards?: number;
}

/** A command line that cannot be run; the message says which argument and why. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The text printed by --help. */
export const USAGE = `Usage:
  trunk-exporter [--config FILE] [--log-level LEVEL] [--port N] [--shard N --total-shards M]
      Poll the Trunk API as FILE says (default ./config.yaml) and serve /metrics.
  trunk-exporter --check-config [--config FILE]
      Validate FILE: exit 0, or print its problems with their paths and lines (the first
      ${MAX_REPORTED_PROBLEMS} in file order, then a count of the rest) and exit 2.
  trunk-exporter --demo [--log-level LEVEL] [--port N]
      Run against the built-in Trunk API simulator; no token needed.
  trunk-exporter simulate [--port N] [--host ADDRESS] [--seed N] [--flavour documented|live] [--token T]
                          [--api-key K] [--latency-ms N] [--test-list-path tests|test-cases|both]
                          [--webhook-url URL --webhook-secret whsec_...]
      Run the Trunk API simulator alone (default 127.0.0.1:8080, seed 1, v1 token demo-token,
      v2 API key trunk_v2_demo-key), answering every request after N milliseconds (default 0),
      with v2's test list on /v2/tests, /v2/test-cases or both (default both);
      with --webhook-url, also POST Trunk's webhooks for what the simulated world does, signed
      Svix-style with the secret.
  trunk-exporter --version | --help

Options:
  --config FILE      configuration file (default ./config.yaml)
  --check-config     validate the configuration and exit
  --demo             run the exporter on the built-in simulator
  --log-level LEVEL  ${LOG_LEVELS.join(', ')} (default info)
  --port N           listen on this port instead of server.port
  --shard N          poll only the targets of shard N (0-based; overrides sharding.shard)
  --total-shards M   number of shards the targets are divided among (overrides sharding.totalShards)
  --version          print the version and exit
  --help             print this text and exit
`;

/** The options of `trunk-exporter` (run, --check-config, --demo), which the docs list. */
export const EXPORTER_OPTIONS = {
  config: { type: 'string' },
  'check-config': { type: 'boolean' },
  demo: { type: 'boolean' },
  'log-level': { type: 'string' },
  port: { type: 'string' },
  shard: { type: 'string' },
  'total-shards': { type: 'string' },
  version: { type: 'boolean' },
  help: { type: 'boolean' },
} as const satisfies OptionSpec;

/** The options of `trunk-exporter simulate`. */
export const SIMULATE_OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  seed: { type: 'string' },
  flavour: { type: 'string' },
  token: { type: 'string' },
  'api-key': { type: 'string' },
  'latency-ms': { type: 'string' },
  'test-list-path': { type: 'string' },
  'log-level': { type: 'string' },
  'webhook-url': { type: 'string' },
  'webhook-secret': { type: 'string' },
} as const satisfies OptionSpec;

/** Parses the command line (without `node` and the script path). */
export function parseCommandLine(argv: readonly string[]): Command {
  if (argv[0] === 'simulate') return parseSimulate(argv.slice(1));
  const { values } = parse(argv, EXPORTER_OPTIONS);
  if (values.help) return { name: 'help' };
  if (values.version) return { name: 'version' };
  const configPath = values.config ?? './config.yaml';
  const logLevel = parseLogLevel(values['log-level']);
  const port = values.port === undefined ? undefined : parsePort(values.port);
  if (values.demo && values['check-config']) {
    throw new UsageError('--demo and --check-config cannot be used together');
  }
  if (values.demo && values.config !== undefined) {
    throw new UsageError('--demo uses a built-in configuration; drop --config');
  }
  const sharding = parseShardFlags(values.shard, values['total-shards']);
  if ((values.demo || values['check-config']) && Object.keys(sharding).length > 0) {
    throw new UsageError('--shard and --total-shards only apply when running the exporter');
  }
  if (values['check-config']) return { name: 'check-config', configPath };
  if (values.demo) return { name: 'demo', logLevel, port };
  return { name: 'run', configPath, logLevel, port, sharding };
}

function parseShardFlags(shard: string | undefined, totalShards: string | undefined): ShardFlags {
  const flags = {
    ...(shard === undefined ? {} : { shard: parseInteger('--shard', shard) }),
    ...(totalShards === undefined
      ? {}
      : { totalShards: parseInteger('--total-shards', totalShards) }),
  };
  if (flags.totalShards !== undefined && flags.totalShards < 1) {
    throw new UsageError(`--total-shards: expected at least 1, got ${flags.totalShards}`);
  }
  if (
    flags.shard !== undefined &&
    flags.totalShards !== undefined &&
    flags.shard >= flags.totalShards
  ) {
    throw new UsageError(
      `--shard: expected 0..${flags.totalShards - 1} (--total-shards ${flags.totalShards}), got ${flags.shard}`,
    );
  }
  return flags;
}

function parseSimulate(argv: readonly string[]): Command {
  const { values } = parse(argv, SIMULATE_OPTIONS);
  const flavour = values.flavour ?? 'documented';
  if (flavour !== 'documented' && flavour !== 'live') {
    throw new UsageError(`--flavour: expected documented or live, got ${JSON.stringify(flavour)}`);
  }
  const testListPath = values['test-list-path'] ?? 'both';
  if (!isTestListPath(testListPath)) {
    throw new UsageError(
      `--test-list-path: expected ${TEST_LIST_PATHS.join(', ')}, got ${JSON.stringify(testListPath)}`,
    );
  }
  return {
    name: 'simulate',
    port: values.port === undefined ? 8080 : parsePort(values.port),
    host: values.host ?? '127.0.0.1',
    seed: values.seed === undefined ? 1 : parseInteger('--seed', values.seed),
    flavour,
    token: values.token,
    apiKey: values['api-key'],
    latencyMs:
      values['latency-ms'] === undefined ? 0 : parseInteger('--latency-ms', values['latency-ms']),
    testListPath,
    logLevel: parseLogLevel(values['log-level']),
    webhook: parseWebhookFlags(values['webhook-url'], values['webhook-secret']),
  };
}

function isTestListPath(value: string): value is TestListPath {
  return (TEST_LIST_PATHS as readonly string[]).includes(value);
}

function parseWebhookFlags(
  url: string | undefined,
  secret: string | undefined,
): { url: string; secret: string } | undefined {
  if (url === undefined && secret === undefined) return undefined;
  if (url === undefined) throw new UsageError('--webhook-secret needs --webhook-url');
  if (secret === undefined || secret === '') {
    throw new UsageError(
      "--webhook-url needs --webhook-secret (the endpoint's whsec_ signing secret)",
    );
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--webhook-url: expected an http(s) URL, got ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new UsageError(`--webhook-url: expected an http(s) URL, got ${JSON.stringify(url)}`);
  }
  if (!secret.startsWith('whsec_')) {
    // Never echo a secret, even a mistyped one.
    throw new UsageError('--webhook-secret: expected whsec_ followed by base64');
  }
  return { url, secret };
}

type OptionSpec = Record<string, { type: 'string' | 'boolean' }>;

function parse<T extends OptionSpec>(argv: readonly string[], options: T) {
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals: false });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

function parseLogLevel(value: string | undefined): LogLevel {
  if (value === undefined) return 'info';
  const level = LOG_LEVELS.find((known) => known === value);
  if (!level)
    throw new UsageError(
      `--log-level: expected one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(value)}`,
    );
  return level;
}

function parsePort(value: string): number {
  const port = parseInteger('--port', value);
  if (port < 0 || port > 65535) throw new UsageError(`--port: expected 0..65535, got ${value}`);
  return port;
}

function parseInteger(flag: string, value: string): number {
  if (!/^\d+$/.test(value))
    throw new UsageError(`${flag}: expected a whole number, got ${JSON.stringify(value)}`);
  return Number(value);
}
