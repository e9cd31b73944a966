// Starts real exporters against a real simulator on loopback for the end-to-end tests, and stops
// everything after each test.
import { Writable } from 'node:stream';
import { loadConfigFile, parseConfig } from '../../src/config/load.js';
import { startExporter, type RunningExporter } from '../../src/exporter.js';
import { KnownSecrets } from '../../src/secrets/knownSecrets.js';
import { createLogger } from '../../src/log/logger.js';
import type { RunningSimulator } from '../../src/simulator/server.js';
import type { SimulatorWorld } from '../../src/simulator/world.js';
import type { SimulatorFlavour } from '../../src/simulator/responses.js';
import type { TriggerSpacing } from '../../src/webhooks/pollTriggers.js';
import { parseExposition, type Sample } from './exposition.js';
import { afterThisTest } from './afterTest.js';
import { startTestSimulator } from './simulator.js';

export const SIMULATOR_TOKEN = 'sim-token-4b1d';

/**
 * The most seconds a test exporter's first polls wait (the exporter's own default, 2 s, spreads
 * the start-up load of many targets; a test has a handful, and would wait for it before each case).
 */
export const FIRST_POLL_SPREAD_SECONDS = 0.1;

/** The longest a test waits for a condition of its exporter. */
const WAIT_MS = 20_000;

/** A frozen simulator world (it moves only when the test calls advance) behind a real server. */
export function startFrozenSimulator(
  flavour: SimulatorFlavour = 'documented',
  seed = 7,
): Promise<{ world: SimulatorWorld; simulator: RunningSimulator }> {
  return startTestSimulator({ seed, flavour, token: SIMULATOR_TOKEN });
}

/**
 * The YAML of a config for the given simulator URL; `polling` replaces the lines under `polling:`,
 * `server` adds lines under `server:`, `tokenFile` replaces `token`.
 */
export function configYaml(options: {
  apiUrl: string;
  /** null: no v1 token (an API key only). */
  token?: string | null;
  apiKey?: string;
  tokenFile?: string;
  targets: string;
  polling?: string;
  /** Lines of the `reads:` section; none when absent. */
  reads?: string;
  server?: string;
  timeoutSeconds?: number;
  maxConcurrentRequests?: number;
}): string {
  return [
    'trunk:',
    `  apiUrl: ${options.apiUrl}`,
    ...(options.tokenFile !== undefined
      ? [`  tokenFile: ${options.tokenFile}`]
      : options.token === null
        ? []
        : [`  token: ${options.token ?? SIMULATOR_TOKEN}`]),
    ...(options.apiKey === undefined ? [] : [`  apiKey: ${options.apiKey}`]),
    '  orgUrlSlug: acme',
    `  timeoutSeconds: ${options.timeoutSeconds ?? 2}`,
    `  maxConcurrentRequests: ${options.maxConcurrentRequests ?? 8}`,
    '  maxRequestsPerSecond: 500',
    'server:',
    '  address: 127.0.0.1',
    '  port: 0',
    ...(options.server === undefined ? [] : [options.server]),
    'polling:',
    options.polling ?? '  mergeQueueIntervalSeconds: 600\n  flakyTestsIntervalSeconds: 600',
    ...(options.reads === undefined ? [] : ['reads:', options.reads]),
    'targets:',
    options.targets,
  ].join('\n');
}

/** A running exporter with its log output captured. */
export interface ExporterUnderTest {
  readonly exporter: RunningExporter;
  readonly logs: () => string;
  /** Stops the exporter now (a test checking what is left behind); cleanup will not stop it again. */
  stop(): Promise<void>;
  scrape(path?: string, headers?: Record<string, string>): Promise<string>;
  samples(): Promise<Sample[]>;
  waitUntilReady(): Promise<void>;
  waitFor(predicate: (samples: Sample[]) => boolean, what: string): Promise<Sample[]>;
}

/**
 * Starts an exporter from YAML text, logging at `level` into a buffer; `configFile` (holding the
 * same YAML) is what reloads read.
 */
export async function startTestExporter(
  yaml: string,
  level: 'info' | 'debug' | 'trace' = 'info',
  configFile?: string,
  /** How webhook events turn into polls, when a test shortens it. */
  webhookTriggerSpacing?: TriggerSpacing,
): Promise<ExporterUnderTest> {
  const config = await parseConfig(yaml, { source: 'test.yaml', env: {} });
  let output = '';
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      output += chunk.toString();
      callback();
    },
  });
  const secrets = new KnownSecrets([config.trunk.token, config.trunk.apiKey]);
  const logger = createLogger({ level, secrets: () => secrets.values(), destination });
  const exporter = await startExporter(config, {
    logger,
    version: '0.0.0-test',
    secrets,
    firstPollSpreadSeconds: FIRST_POLL_SPREAD_SECONDS,
    ...(configFile === undefined ? {} : { loadConfig: () => loadConfigFile(configFile, {}) }),
    ...(webhookTriggerSpacing === undefined ? {} : { webhookTriggerSpacing }),
  });
  let stopped: Promise<void> | undefined;
  const stop = () => (stopped ??= exporter.stop());
  afterThisTest(stop);

  const scrape = async (path = '/metrics', headers: Record<string, string> = {}) => {
    const response = await fetch(`${exporter.url}${path}`, { headers });
    return response.text();
  };
  const samples = async () => parseExposition(await scrape());
  // Long enough for a busy machine, well inside a test's 30 s: a condition that never comes fails.
  // The deadlines read performance.now(): a test may stand the exporter's clock still by faking Date.
  const waitFor = async (predicate: (samples: Sample[]) => boolean, what: string) => {
    const deadline = performance.now() + WAIT_MS;
    for (;;) {
      const current = await samples();
      if (predicate(current)) return current;
      if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const waitUntilReady = async () => {
    const deadline = performance.now() + WAIT_MS;
    while ((await fetch(`${exporter.url}/readyz`)).status !== 200) {
      if (performance.now() > deadline) throw new Error('exporter never became ready');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  return { exporter, logs: () => output, stop, scrape, samples, waitUntilReady, waitFor };
}

/**
 * The warn lines `exporter` logged about anomalies of `kind` (trunk/anomalyLog.ts), once there is
 * one: a line is written a turn after its count, so a case that saw the count waits for the line.
 */
export async function anomalyLines(
  exporter: ExporterUnderTest,
  kind: string,
): Promise<Record<string, unknown>[]> {
  const deadline = performance.now() + WAIT_MS;
  for (;;) {
    const lines = exporter
      .logs()
      .split('\n')
      .filter((line) => line.includes(`"kind":"${kind}"`))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    if (lines.length > 0) return lines;
    if (performance.now() > deadline) throw new Error(`timed out waiting for a line of ${kind}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
