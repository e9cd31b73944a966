// `node scripts/bench/pairedCycle.ts --base <checkout> [--this <checkout>] [--api v1|v2]
// [--runs 5] [--queues 1000] [--reads key=value,…] [--cpu-prof-dir <dir>]`: one merge-queue row run
// by two builds at the same time, each built with `npm run build`, each in its own process
// against its own simulator process (pairedCycleChild.ts). The cycles run in lockstep (both start
// cycle n together), so the load of a shared machine falls on both alike. Rows, 1,000 queues × 30
// PRs, L = 100 ms, C = 128:
// - v1 (the cycle-time benchmark's documented row): the token, every PR looked up on every poll,
//   the world standing still;
// - v2: the API key, the world moving one merge-queue interval before each cycle: 300 s, since a
//   poll's deadline is its interval on the wall clock, which a loaded machine may take for a cycle.
// The report gives, per build, the calls per queue per cycle (counted at the simulator, by
// endpoint), the client's CPU time per call (process.cpuUsage() of the process that runs the poll
// jobs and TrunkClient, user + system) and the cycle against its floor ceil(R / C) × L, with the
// ratio of this build to the base per cycle. `--reads` sets this build's `reads:` section (the
// base gets none: an older build may not know the keys). `--cpu-prof-dir <dir>` writes each
// child's V8 CPU profile under <dir>/this and <dir>/base. Prints a markdown report.
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { ROOT } from './built.ts';
import { runChild, type CycleFigures, type PairedRow } from './pairedCycleChild.ts';
import { format, median, progress, table } from './stats.ts';

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index < 0 ? undefined : process.argv[index + 1];
}

/** A child process and its stdout as lines. */
interface Side {
  readonly label: string;
  readonly process: ChildProcess;
  nextLine(): Promise<string>;
}

function startSide(label: string, root: string, row: PairedRow, profiles?: string): Side {
  const profile =
    profiles === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', resolve(profiles, label)];
  const started = spawn(
    process.execPath,
    [...profile, 'scripts/bench/pairedCycle.ts', '--child', root, '--row', JSON.stringify(row)],
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

/** `a=1,b=false` as { a: '1', b: 'false' }. */
function settings(text: string | undefined): Record<string, string> | undefined {
  if (text === undefined) return undefined;
  return Object.fromEntries(text.split(',').map((pair) => pair.split('=') as [string, string]));
}

async function parent(): Promise<void> {
  const base = argument('base');
  if (base === undefined) {
    throw new Error(
      'usage: node scripts/bench/pairedCycle.ts --base <checkout> [--this <checkout>] [--api v1|v2] [--runs N] [--queues N] [--reads key=value,…]',
    );
  }
  const ours = argument('this') ?? ROOT;
  const runs = Number(argument('runs') ?? 5);
  const api = argument('api') === 'v2' ? 'v2' : 'v1';
  const row: PairedRow = {
    api,
    queues: Number(argument('queues') ?? 1000),
    latencyMs: 100,
    concurrency: 128,
    intervalSeconds: api === 'v2' ? 300 : 3600,
    reads: undefined,
  };
  const reads = settings(argument('reads'));
  const profiles = argument('cpu-prof-dir');
  const sides = [
    startSide('this', resolve(ours), { ...row, reads }, profiles),
    startSide('base', resolve(base), row, profiles),
  ];
  try {
    await Promise.all(sides.map((side) => side.nextLine()));
    const figures: CycleFigures[][] = [[], []];
    // Cycle 0 opens the connections, warms the JIT and (v2) starts each queue's ledger on both
    // sides; it is not reported.
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
              `${sides[side]?.label ?? ''} ${result.calls} calls, ${format(result.cpuMicros / result.calls, 1)} µs/call, ${format(result.seconds / result.floorSeconds, 3)} × floor`,
          )
          .join('; ')}`,
      );
    }
    console.log(report(figures[0] ?? [], figures[1] ?? [], row, { ours, base, reads }));
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

const perCall = (cycle: CycleFigures): number => cycle.cpuMicros / cycle.calls;
const ofFloor = (cycle: CycleFigures): number => cycle.seconds / cycle.floorSeconds;
const ratios = (
  ours: readonly CycleFigures[],
  base: readonly CycleFigures[],
  measure: (cycle: CycleFigures) => number,
): number[] => ours.map((cycle, index) => measure(cycle) / measure(base[index] ?? cycle));
const listed = (values: readonly number[], decimals: number): string =>
  values.map((value) => format(value, decimals)).join(', ');

/** Calls per queue per cycle by endpoint, averaged over the cycles. */
function byEndpoint(cycles: readonly CycleFigures[], queues: number): string {
  const sums = new Map<string, number>();
  for (const cycle of cycles) {
    for (const [endpoint, count] of Object.entries(cycle.byEndpoint)) {
      sums.set(endpoint, (sums.get(endpoint) ?? 0) + count);
    }
  }
  return [...sums]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([endpoint, sum]) => `\`${endpoint}\` ${format(sum / cycles.length / queues, 3)}`)
    .join(', ');
}

function report(
  ours: readonly CycleFigures[],
  base: readonly CycleFigures[],
  row: PairedRow,
  builds: { ours: string; base: string; reads: Record<string, string> | undefined },
): string {
  const perQueue = (cycle: CycleFigures): number => cycle.calls / row.queues;
  const mean = (values: readonly number[]): number =>
    values.reduce((sum, value) => sum + value, 0) / values.length;
  const buildRow = (label: string, cycles: readonly CycleFigures[]): string[] => [
    label,
    `**${format(mean(cycles.map(perQueue)), 3)}**`,
    byEndpoint(cycles, row.queues),
    listed(cycles.map(perQueue), 3),
    `**${format(median(cycles.map(perCall)), 1)} µs**`,
    listed(cycles.map(perCall), 1),
    format(median(cycles.map(ofFloor)), 3),
    listed(cycles.map(ofFloor), 3),
  ];
  const cpuRatios = ratios(ours, base, perCall);
  const callRatios = ratios(ours, base, (cycle) => cycle.calls);
  const callRatio = mean(ours.map(perQueue)) / mean(base.map(perQueue));
  const readsNote =
    builds.reads === undefined
      ? ''
      : ` This build's \`reads:\` ${Object.entries(builds.reads)
          .map(([key, value]) => `\`${key}: ${value}\``)
          .join(', ')}.`;
  return [
    `API ${row.api}, ${format(row.queues)} queues × 30 PRs, documented shape, ${row.api === 'v2' ? `the world moving ${format(row.intervalSeconds)} s (the merge-queue interval) before each cycle` : 'every PR looked up, the world standing still'}, L = ${row.latencyMs} ms, C = ${row.concurrency}; ${ours.length} cycles per build after one cold cycle, both builds in lockstep (this: ${builds.ours}; base: ${builds.base}).${readsNote}`,
    '',
    table(
      [
        'build',
        'calls per queue per cycle (mean)',
        'by endpoint',
        'per cycle',
        'client CPU per call (median)',
        'per cycle',
        'cycle / floor (median)',
        'per cycle',
      ],
      [buildRow('this', ours), buildRow('base', base)],
    ),
    '',
    `Calls per queue per cycle, this ÷ base: **${format(callRatio, 3)}** (per cycle: ${listed(callRatios, 3)}). Client CPU per call, this ÷ base: **${format(median(cpuRatios), 3)}** (per cycle: ${listed(cpuRatios, 3)}; ${format(Math.min(...cpuRatios), 3)}–${format(Math.max(...cpuRatios), 3)}).`,
  ].join('\n');
}

const child = argument('child');
if (child === undefined) await parent();
else await runChild(resolve(child), JSON.parse(argument('row') ?? '{}') as PairedRow);
