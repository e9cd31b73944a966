// The fault suite's rig: a frozen simulator with a FaultPlan in front of it and a real exporter
// polling it on short intervals, with its log captured. Everything is checked from the outside:
// the metrics page, the log lines and the calls the simulator saw.
import { FaultPlan, type FaultEndpoint, type SeenCall } from '../../src/simulator/faults.js';
import type { SimulatedRepository } from '../../src/simulator/repositories.js';
import type { SimulatorFlavour } from '../../src/simulator/responses.js';
import type { RunningSimulator } from '../../src/simulator/server.js';
import { createSimulatorWorld, type SimulatorWorld } from '../../src/simulator/world.js';
import {
  configYaml,
  SIMULATOR_TOKEN,
  startTestExporter,
  type ExporterUnderTest,
} from '../support/exporterHarness.js';
import { select } from '../support/exposition.js';
import { startTestSimulator } from '../support/simulator.js';

export const WEB = 'github.com/acme/web';
export const API = 'github.com/acme/api';
export const MOBILE = 'github.com/acme/mobile';

/** Two merge queues of two repositories: one to break, one that must not notice. */
export const TWO_QUEUES = [
  `  - repo: ${WEB}`,
  '    branches: [main]',
  `  - repo: ${API}`,
  '    branches: [main]',
].join('\n');

export interface FaultRig {
  readonly faults: FaultPlan;
  readonly world: SimulatorWorld;
  readonly simulator: RunningSimulator;
  readonly subject: ExporterUnderTest;
}

/** Options of a rig; intervals are short so that a test sees several polls within a second or two. */
export interface FaultRigOptions {
  readonly targets?: string;
  /** Lines under `polling:`; default merge queues every 0.2 s, quarantine lists every 0.3 s. */
  readonly polling?: string;
  readonly timeoutSeconds?: number;
  readonly maxConcurrentRequests?: number;
  readonly flavour?: SimulatorFlavour;
  /** Extra lines under `trunk:`, e.g. `  maxResponseBytes: 65536`. */
  readonly trunk?: string;
  readonly repositories?: readonly SimulatedRepository[];
  /** Read through API v2 with this key (and no v1 token) when given. */
  readonly apiKey?: string;
}

/** Starts a simulator with an empty fault plan and an exporter polling it. */
export async function startFaultRig(options: FaultRigOptions = {}): Promise<FaultRig> {
  const faults = new FaultPlan();
  const world = createSimulatorWorld({
    seed: 7,
    flavour: options.flavour ?? 'documented',
    ...(options.repositories === undefined ? {} : { repositories: options.repositories }),
  });
  const { simulator } = await startTestSimulator({
    world,
    token: SIMULATOR_TOKEN,
    faults,
    ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
  });
  const yaml = configYaml({
    apiUrl: simulator.baseUrl,
    ...(options.apiKey === undefined ? {} : { token: null, apiKey: options.apiKey }),
    targets: options.targets ?? TWO_QUEUES,
    polling:
      options.polling ??
      '  mergeQueueIntervalSeconds: 0.2\n  flakyTestsIntervalSeconds: 0.3\n  staleAfterSeconds: 60',
    ...(options.timeoutSeconds === undefined ? {} : { timeoutSeconds: options.timeoutSeconds }),
    ...(options.maxConcurrentRequests === undefined
      ? {}
      : { maxConcurrentRequests: options.maxConcurrentRequests }),
  });
  const subject = await startTestExporter(
    options.trunk === undefined
      ? yaml
      : yaml.replace(
          '\n  maxRequestsPerSecond: 500\n',
          `\n  maxRequestsPerSecond: 500\n${options.trunk}\n`,
        ),
  );
  return { faults, world, simulator, subject };
}

/** One parsed line of the exporter's JSON log. */
export interface LogRecord {
  readonly level: number;
  readonly time: string;
  readonly msg: string;
  readonly [field: string]: unknown;
}

/** pino's numeric levels. */
export const LEVEL = { warn: 40, error: 50 } as const;

/** Every log line of the exporter so far, parsed. */
export function logRecords(subject: ExporterUnderTest): LogRecord[] {
  return subject
    .logs()
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as LogRecord);
}

/** The `poll failed` lines about one target. */
export function pollFailures(
  subject: ExporterUnderTest,
  repo: string,
  kind: 'merge_queue' | 'flaky_tests' = 'merge_queue',
): LogRecord[] {
  return logRecords(subject).filter(
    (record) =>
      record.msg.startsWith('poll failed') && record.repo === repo && record.kind === kind,
  );
}

/** Calls the simulator saw for one endpoint (and repository, if given). */
export function callsTo(faults: FaultPlan, endpoint: FaultEndpoint, repo?: string): SeenCall[] {
  return faults
    .calls()
    .filter((call) => call.endpoint === endpoint && (repo === undefined || call.repo === repo));
}

/** Polls `condition` every 20 ms until it holds; fails after 20 s saying what never happened. */
export async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Waits until the target(s) `labels` select show up: the rig polls every 0.2 s, and a busy machine
 * can run a poll past that interval, which shows 0 until it ends without having failed.
 */
export async function untilUp(
  subject: ExporterUnderTest,
  labels: Readonly<Record<string, string>>,
): Promise<void> {
  await subject.waitFor(
    (samples) => {
      const up = select(samples, 'trunk_exporter_target_up', labels);
      return up.length > 0 && up.every((sample) => sample.value === 1);
    },
    `${JSON.stringify(labels)} up`,
  );
}

/** Timers may fire a millisecond or two early when measured with Date.now(). */
export const CLOCK_SLACK_MS = 5;
