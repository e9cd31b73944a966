// `npm run soak`: thousands of poll cycles at a short interval against a simulator with heavy churn
// (pull requests and quarantined tests constantly arriving and leaving), checking that
//  - the exporter's data series stay within what the simulator holds at the end: after freezing the
//    simulator, every data series on the soaked exporter's page is one that a fresh exporter,
//    polling the frozen simulator once, also shows (cumulative queue-flow series aside: those
//    must name known PR states only, which bounds them; and time in queue of outcome unknown,
//    which appears with its first exit);
//  - heap in use after GC (for each V8 space the least of a few readings) does not grow more than
//    10% past its level after the first cycles.
// Usage: node --expose-gc --no-flush-bytecode scripts/soak.ts [--cycles N] [--interval-ms N] [--json]
// Exits 1 when a bound is broken. The test suite runs a short version (test/soak.test.ts).
import { parseArgs } from 'node:util';
import { getHeapSpaceStatistics } from 'node:v8';
import type * as LoadModule from '../src/config/load.js';
import type * as ExporterModule from '../src/exporter.js';
import type * as LoggerModule from '../src/log/logger.js';
import type * as SnapshotTypesModule from '../src/snapshot/types.js';
import { loadBuilt } from './bench/built.ts';
import { startSimulatorProcess } from './bench/processes.ts';
import { configYaml, type Scale } from './bench/scale.ts';

const { values } = parseArgs({
  options: {
    cycles: { type: 'string', default: '10000' },
    'interval-ms': { type: 'string', default: '20' },
    json: { type: 'boolean', default: false },
  },
});
const cycles = Number(values.cycles);
const intervalMs = Number(values['interval-ms']);
const gc = (globalThis as { gc?: () => void }).gc;
// V8 drops the bytecode of functions unused since start-up at a moment set by the wall clock:
// between the two readings it would hide a leak of its size (docs/performance.md#load-and-soak).
if (gc === undefined || !process.execArgv.includes('--no-flush-bytecode')) {
  throw new Error('run with node --expose-gc --no-flush-bytecode scripts/soak.ts');
}

/** Heap growth allowed over the level measured after the first cycles. */
const MAX_HEAP_GROWTH = 0.1;
/** Readings of heapAfterGc, the least of which it keeps for each space. */
const HEAP_READINGS = 8;
/** Series from the exporter process itself (API calls by status code, Node.js), not from data. */
const PROCESS_SERIES = /^(trunk_exporter_api_|process_|nodejs_)/;
/**
 * Cumulative queue-flow families keep a series for every state (pair) a queue has ever shown, so a
 * fresh exporter has fewer of them; they are bounded by the PR-state vocabulary instead. A queue's
 * last merge (one series, without a state) is shown through API v1 only once a merge was seen.
 */
const FLOW_SERIES =
  /^trunk_merge_queue_(state_transitions_total|time_in_state_seconds|last_merge_timestamp_seconds)/;
/**
 * Series that appear with a queue's first exit of their outcome, not from the start: "merged,
 * failed and cancelled are written at 0 from the start, unknown from its first exit"
 * (trunk_merge_queue_time_in_queue_seconds). Under load an exit whose lookups keep failing counts
 * unknown, so the soaked exporter may have them where a fresh one, which saw no exit, has none.
 */
const FIRST_EXIT_SERIES =
  /^trunk_merge_queue_time_in_queue_seconds_(bucket|sum|count)\{[^}]*\boutcome="unknown"[,}]/;
const SCALE: Scale = {
  queues: 4,
  pullRequestsPerQueue: undefined,
  flakyRepositories: 2,
  quarantinedTests: undefined,
};

const { parseConfig } = await loadBuilt<typeof LoadModule>('config/load.js');
const { startExporter } = await loadBuilt<typeof ExporterModule>('exporter.js');
const { silentLogger } = await loadBuilt<typeof LoggerModule>('log/logger.js');
const { KNOWN_PULL_REQUEST_STATES } =
  await loadBuilt<typeof SnapshotTypesModule>('snapshot/types.js');

const log = (message: string): void => {
  if (!values.json) process.stderr.write(`[soak] ${message}\n`);
};

// Twenty simulated seconds (four model steps) every 10 ms: heavy churn moves the world on
// between almost every two polls.
const simulator = await startSimulatorProcess({
  scale: SCALE,
  flavour: 'live',
  latencyMs: 0,
  churn: 'heavy',
  advance: { tickMs: 10, secondsPerTick: 20 },
});
const configFor = (seconds: number) =>
  parseConfig(
    configYaml(SCALE, {
      apiUrl: simulator.baseUrl,
      port: 0,
      maxConcurrentRequests: 8,
      maxRequestsPerSecond: 100_000,
      mergeQueueIntervalSeconds: seconds,
      flakyTestsIntervalSeconds: seconds,
    }),
    { source: 'soak.yaml', env: {} },
  );

const exporter = await startExporter(await configFor(intervalMs / 1000), {
  logger: silentLogger(),
  version: 'soak',
});
const started = Date.now();
// "The first cycles": a twentieth of the run, and never before the code has warmed up and every
// series has appeared (flow series and exemplars fill in over the first hundred cycles).
const baselineCycle = Math.max(100, Math.floor(cycles / 20));
let baselineHeap: number | undefined;
const heapSamples: { cycle: number; heapUsed: number }[] = [];
let completed = 0;
let nextReport = Math.ceil(cycles / 10);
while (completed < cycles) {
  // Each look renders the whole page in this process, the exporter's: a few a second will do.
  await new Promise((resolve) => setTimeout(resolve, 200));
  completed = Math.floor((await apiCalls(exporter.url, 'getQueue')) / SCALE.queues);
  if (baselineHeap === undefined && completed >= baselineCycle) {
    baselineHeap = await heapAfterGc();
    heapSamples.push({ cycle: completed, heapUsed: baselineHeap });
  }
  // Progress for a person watching; the bound reads only the first and last readings, and each
  // reading is twenty full collections (most of a short soak's CPU), so --json takes none.
  if (!values.json && completed >= nextReport) {
    heapSamples.push({ cycle: completed, heapUsed: await heapAfterGc() });
    log(`${completed} cycles, heap ${megabytes(heapSamples.at(-1)?.heapUsed ?? 0)}`);
    nextReport += Math.ceil(cycles / 10);
  }
}
const finalHeap = await heapAfterGc();
const seconds = (Date.now() - started) / 1000;

// Freeze the world, let every target be polled twice more, then compare with a fresh exporter.
const frozen = simulator.waitFor(/FROZEN/);
simulator.child.kill('SIGUSR2');
await frozen;
const frozenAt = await apiCalls(exporter.url, 'getQueue');
while ((await apiCalls(exporter.url, 'getQueue')) < frozenAt + 2 * SCALE.queues + SCALE.queues) {
  await new Promise((resolve) => setTimeout(resolve, 20));
}
const soakedPage = await page(exporter.url);
await exporter.stop();
const fresh = await startExporter(await configFor(3600), {
  logger: silentLogger(),
  version: 'soak',
});
while (!fresh.store.allPolledOnce()) await new Promise((resolve) => setTimeout(resolve, 20));
const freshPage = await page(fresh.url);
await fresh.stop();
await simulator.stop();

const soakedSeries = dataSeries(soakedPage);
const freshSeries = new Set(dataSeries(freshPage));
/** Series a fresh exporter on the same world shows too: neither cumulative nor from a first exit. */
const worldSeries = soakedSeries.filter(
  (series) => !FLOW_SERIES.test(series) && !FIRST_EXIT_SERIES.test(series),
);
const extraSeries = worldSeries.filter((series) => !freshSeries.has(series));
// Every flow series names known PR states only: at most states² pairs per queue, however long it runs.
const knownStates = new Set<string>(KNOWN_PULL_REQUEST_STATES);
const unboundedFlowSeries = soakedSeries.filter(
  (series) =>
    FLOW_SERIES.test(series) &&
    [...series.matchAll(/(?:from|to|state)="([^"]*)"/g)].some(
      ([, state]) => !knownStates.has(state ?? ''),
    ),
);
const heapGrowth = finalHeap / (baselineHeap ?? finalHeap) - 1;
const result = {
  cycles: completed,
  intervalMs,
  seconds,
  series: worldSeries.length,
  seriesOfFreshExporter: freshSeries.size,
  extraSeries: extraSeries.length,
  extraSeriesExamples: extraSeries.slice(0, 5),
  flowSeries: soakedSeries.filter((series) => FLOW_SERIES.test(series)).length,
  unboundedFlowSeries: unboundedFlowSeries.slice(0, 5),
  baselineCycle,
  baselineHeapBytes: baselineHeap,
  finalHeapBytes: finalHeap,
  heapGrowth,
  heapSamples,
  ok: extraSeries.length === 0 && unboundedFlowSeries.length === 0 && heapGrowth <= MAX_HEAP_GROWTH,
};
if (values.json) {
  process.stdout.write(`${JSON.stringify(result)}\n`);
} else {
  log(`${completed} cycles in ${seconds.toFixed(0)} s (${intervalMs} ms interval)`);
  log(
    `data series at the end: ${result.series} (and ${result.flowSeries} queue-flow series, ${unboundedFlowSeries.length} naming unknown states); a fresh exporter on the same world: ${freshSeries.size}; extra: ${extraSeries.length}`,
  );
  log(
    `heap after GC: ${megabytes(baselineHeap ?? 0)} after cycle ${baselineCycle}, ${megabytes(finalHeap)} at the end (${(heapGrowth * 100).toFixed(1)}%, limit ${MAX_HEAP_GROWTH * 100}%)`,
  );
  log(result.ok ? 'OK' : 'FAILED');
}
process.exitCode = result.ok ? 0 : 1;

/**
 * Heap in use after full collections: for each V8 space the least of HEAP_READINGS readings, summed.
 * At a 20 ms interval a poll is nearly always under way, and what it holds (its answers, parsed,
 * in the young generation or as large objects) is not retained, while a leak is in every reading of
 * its space (docs/performance.md#load-and-soak). Between two collections, a turn of the event loop
 * lets finalization callbacks run (AbortSignal.any cleans up through them): a single gc() leaves
 * their garbage behind.
 */
async function heapAfterGc(): Promise<number> {
  const least = new Map<string, number>();
  for (let reading = 0; reading < HEAP_READINGS; reading++) {
    for (let i = 0; i < 4; i++) {
      gc?.();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // Read right after a collection: in the last wait the polls under way allocate megabytes of
    // young objects, which would be read as heap in use.
    gc?.();
    for (const space of getHeapSpaceStatistics()) {
      least.set(
        space.space_name,
        Math.min(least.get(space.space_name) ?? Infinity, space.space_used_size),
      );
    }
  }
  return [...least.values()].reduce((sum, bytes) => sum + bytes, 0);
}

function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

async function page(url: string): Promise<string> {
  return (await fetch(`${url}/metrics`)).text();
}

/** Successful calls of one endpoint so far, from the exporter's own counter. */
async function apiCalls(url: string, endpoint: string): Promise<number> {
  const pattern = new RegExp(
    `^trunk_exporter_api_requests_total\\{endpoint="${endpoint}",code="200"\\} (\\S+)$`,
    'm',
  );
  return Number(pattern.exec(await page(url))?.[1] ?? 0);
}

/** The identity (name and labels) of every data series on a page. */
function dataSeries(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#') && !PROCESS_SERIES.test(line))
    .map((line) => line.slice(0, line.lastIndexOf(' ')));
}
