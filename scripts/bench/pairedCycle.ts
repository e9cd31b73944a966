// `node scripts/bench/pairedCycle.ts --base <checkout> [--runs 5] [--queues 1000]`: the cycle-time
// benchmark's documented row (1,000 queues × 30 PRs, every PR looked up, L = 100 ms, C = 128) run
// by two builds at the same time, this checkout's dist/ and the base checkout's dist/ (each built
// with `npm run build`), each in its own process against its own simulator process. The cycles
// run in lockstep (both start cycle n together), so the load of a shared machine falls on both
// alike, and the report gives, per build, the client's CPU time per API call (process.cpuUsage()
// of the process that runs the poll jobs and TrunkClient, user + system) and the cycle against its
// floor ceil(R / C) × L, with their medians and the ratio of this build to the base per cycle.
// Prints a markdown report.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import type * as LoadModule from '../../src/config/load.js';
import type * as TargetsModule from '../../src/config/targets.js';
import type * as V8FlagsModule from '../../src/cli/v8Flags.js';
import type * as LoggerModule from '../../src/log/logger.js';
import type * as JobsModule from '../../src/poller/jobs/targetJobs.js';
import type * as StoreModule from '../../src/snapshot/store.js';
import type * as ClientModule from '../../src/trunk/client.js';
import { ROOT } from './built.ts';
import { startSimulatorProcess } from './processes.ts';
import { configYaml, type Scale } from './scale.ts';
import { format, median, progress, table } from './stats.ts';

const LATENCY_MS = 100;
const CONCURRENCY = 128;

/** One cycle as a child measured it. */
interface CycleFigures {
  readonly seconds: number;
  readonly calls: number;
  /** User + system CPU of the child process during the cycle, in microseconds. */
  readonly cpuMicros: number;
  readonly floorSeconds: number;
}

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index < 0 ? undefined : process.argv[index + 1];
}

const child = argument('child');
if (child === undefined) await parent();
else await runChild(resolve(child), Number(argument('queues') ?? 1000));

/** Loads `<root>/dist/<path>`, typed as this checkout's source module of that name. */
async function loadFrom<T>(root: string, path: string): Promise<T> {
  return (await import(pathToFileURL(resolve(root, 'dist', path)).href)) as T;
}

/** A child: one build's poll jobs and client, one cycle per "run" line on stdin. */
async function runChild(root: string, queues: number): Promise<void> {
  // As the trunk-exporter command does, before the code under test loads.
  const require = createRequire(import.meta.url);
  const flags = require(resolve(root, 'dist/cli/v8Flags.js')) as typeof V8FlagsModule;
  flags.applyExporterV8Flags();
  const { parseConfig } = await loadFrom<typeof LoadModule>(root, 'config/load.js');
  const { silentLogger } = await loadFrom<typeof LoggerModule>(root, 'log/logger.js');
  // Older builds kept the poll jobs at the top of poller/.
  const jobsModule = await loadFrom<typeof JobsModule>(root, 'poller/jobs/targetJobs.js').catch(
    () => loadFrom<typeof JobsModule>(root, 'poller/targetJobs.js'),
  );
  const { SnapshotStore } = await loadFrom<typeof StoreModule>(root, 'snapshot/store.js');
  const { TrunkClient } = await loadFrom<typeof ClientModule>(root, 'trunk/client.js');
  // Older builds exported configuredTargets from the poll jobs' module.
  const { configuredTargets } = await loadFrom<typeof TargetsModule>(
    root,
    'config/targets.js',
  ).catch(() => jobsModule as unknown as typeof TargetsModule);

  const scale: Scale = {
    queues,
    pullRequestsPerQueue: 30,
    flakyRepositories: 0,
    quarantinedTests: 0,
  };
  const simulator = await startSimulatorProcess({
    scale,
    flavour: 'documented',
    latencyMs: LATENCY_MS,
    churn: 'normal',
  });
  const config = await parseConfig(
    configYaml(scale, {
      apiUrl: simulator.baseUrl,
      port: 0,
      maxConcurrentRequests: CONCURRENCY,
      maxRequestsPerSecond: 1_000_000,
      mergeQueueIntervalSeconds: 3600,
      flakyTestsIntervalSeconds: 3600,
      pullRequestRecheckSeconds: 0,
    })
      // Nothing is served here, and builds older than the key reject it.
      .replace(/^ *maxConnectionsPerAddress:.*\n/m, ''),
    { source: 'bench.yaml', env: {} },
  );
  let calls = 0;
  const options = {
    apiUrl: config.trunk.apiUrl,
    token: config.trunk.token,
    timeoutSeconds: 60,
    maxConcurrentRequests: CONCURRENCY,
    maxRequestsPerSecond: 1_000_000,
    // Builds between fairness and this one were told how many targets share the client.
    targets: () => queues,
    observer: {
      requestFinished() {
        calls++;
      },
      schemaMismatch() {},
      anomaly() {},
    },
    logger: silentLogger(),
  };
  const client = new TrunkClient(options);
  const store = new SnapshotStore(3600);
  store.setTargets(configuredTargets(config));
  const jobs = jobsModule
    .buildPollJobs({ config, reader: client, store, logger: silentLogger() })
    .filter((job) => job.key.startsWith('merge_queue'))
    .map((job) => ({ job, signal: new AbortController().signal }));

  process.stdout.write('READY\n');
  for await (const line of createInterface({ input: process.stdin })) {
    if (line !== 'run') break;
    calls = 0;
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    await Promise.all(jobs.map(({ job, signal }) => job.run(signal)));
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const failed = store.statuses().filter((status) => status.up !== true).length;
    if (failed > 0) throw new Error(`${failed} targets failed their poll during the cycle`);
    const figures: CycleFigures = {
      seconds,
      calls,
      cpuMicros: cpu.user + cpu.system,
      floorSeconds: (Math.ceil(calls / CONCURRENCY) * LATENCY_MS) / 1000,
    };
    process.stdout.write(`${JSON.stringify(figures)}\n`);
  }
  await client.close();
  await simulator.stop();
}

/** A child process and its stdout as lines. */
interface Side {
  readonly label: string;
  readonly process: ChildProcess;
  nextLine(): Promise<string>;
}

function startSide(label: string, root: string, queues: number): Side {
  const started = spawn(
    process.execPath,
    ['scripts/bench/pairedCycle.ts', '--child', root, '--queues', String(queues)],
    { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: started.stdout })[Symbol.asyncIterator]();
  return {
    label,
    process: started,
    async nextLine() {
      const next = await lines.next();
      if (next.done === true) throw new Error(`the ${label} build's process ended early`);
      return next.value;
    },
  };
}

async function parent(): Promise<void> {
  const base = argument('base');
  if (base === undefined) {
    throw new Error('usage: node scripts/bench/pairedCycle.ts --base <checkout> [--runs N]');
  }
  const runs = Number(argument('runs') ?? 5);
  const queues = Number(argument('queues') ?? 1000);
  const sides = [startSide('this', ROOT, queues), startSide('base', resolve(base), queues)];
  try {
    await Promise.all(sides.map((side) => side.nextLine()));
    const figures: CycleFigures[][] = [[], []];
    // Cycle 0 opens the connections and warms the JIT on both sides; it is not reported.
    for (let index = 0; index <= runs; index++) {
      for (const side of sides) side.process.stdin?.write('run\n');
      const results = await Promise.all(
        sides.map(async (side) => JSON.parse(await side.nextLine()) as CycleFigures),
      );
      if (index === 0) continue;
      results.forEach((result, side) => figures[side]?.push(result));
      progress(
        `cycle ${index}: ${results
          .map(
            (result, side) =>
              `${sides[side]?.label ?? ''} ${format(result.cpuMicros / result.calls, 1)} µs/call, ${format(result.seconds / result.floorSeconds, 3)} × floor`,
          )
          .join('; ')}`,
      );
    }
    console.log(report(figures[0] ?? [], figures[1] ?? [], queues, runs, base));
  } finally {
    for (const side of sides) side.process.stdin?.end();
    await Promise.all(
      sides.map(
        (side) =>
          new Promise((done) => {
            if (side.process.exitCode !== null) done(undefined);
            else side.process.once('exit', done);
          }),
      ),
    );
  }
}

function report(
  ours: readonly CycleFigures[],
  base: readonly CycleFigures[],
  queues: number,
  runs: number,
  baseRoot: string,
): string {
  const perCall = (cycle: CycleFigures): number => cycle.cpuMicros / cycle.calls;
  const ofFloor = (cycle: CycleFigures): number => cycle.seconds / cycle.floorSeconds;
  const cpuRatios = ours.map((cycle, index) => perCall(cycle) / perCall(base[index] ?? cycle));
  const cycleRatios = ours.map((cycle, index) => cycle.seconds / (base[index] ?? cycle).seconds);
  const row = (label: string, cycles: readonly CycleFigures[]): string[] => [
    label,
    format(median(cycles.map((cycle) => cycle.calls))),
    `${format(median(cycles.map(perCall)), 1)} µs`,
    cycles.map((cycle) => format(perCall(cycle), 1)).join(', '),
    `${format(median(cycles.map((cycle) => cycle.seconds)), 2)} s`,
    `${format(median(cycles.map((cycle) => cycle.floorSeconds)), 2)} s`,
    `**${format(median(cycles.map(ofFloor)), 3)}**`,
    cycles.map((cycle) => format(ofFloor(cycle), 3)).join(', '),
  ];
  return [
    `${format(queues)} queues × 30 PRs, documented shape (every PR looked up), L = ${LATENCY_MS} ms, C = ${CONCURRENCY}; ${runs} cycles per build after one warm-up, both builds in lockstep (base: ${baseRoot}).`,
    '',
    table(
      [
        'build',
        'calls',
        'client CPU per call (median)',
        'per cycle',
        'cycle (median)',
        'floor',
        'cycle / floor (median)',
        'per cycle',
      ],
      [row('this', ours), row('base', base)],
    ),
    '',
    `Client CPU per call, this ÷ base: **${format(median(cpuRatios), 3)}** (per cycle: ${cpuRatios.map((ratio) => format(ratio, 3)).join(', ')}). Cycle time, this ÷ base: **${format(median(cycleRatios), 3)}** (per cycle: ${cycleRatios.map((ratio) => format(ratio, 3)).join(', ')}).`,
  ].join('\n');
}
