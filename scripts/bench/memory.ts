// Memory: the exporter's resident set after garbage collection, once every target has been polled
// and the page is cached, for growing organizations. Each size runs the exporter's own command line
// in a fresh process against a simulator in another one, so only the exporter counts. A preload
// given as a data: URL (so nothing else is loaded into the exporter) collects garbage and prints
// process.memoryUsage() when the process gets SIGUSR2.
import {
  freePort,
  startExporterProcess,
  startSimulatorProcess,
  type RunningChild,
} from './processes.ts';
import { configYaml, type Scale } from './scale.ts';
import { rawGet } from './staticServers.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { ROOT } from './built.ts';
import { format, median, megabytes, progress, slope, table } from './stats.ts';

interface MemoryFigures {
  readonly rss: number;
  /** RSS SETTLE_MS after the collection, the process idle: what V8 has given back by then. */
  readonly settledRss: number;
  readonly heapTotal: number;
  readonly heapUsed: number;
  readonly external: number;
  readonly series: number;
  readonly pageBytes: number;
}

/** What Prometheus sends: OpenMetrics first, gzip. */
const PROMETHEUS_SCRAPE_HEADERS = {
  Accept:
    'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1',
  'Accept-Encoding': 'gzip',
};

/** RSS over a run at production intervals, scraped as Prometheus does. */
interface SteadyFigures {
  readonly seconds: number;
  readonly warmUpSeconds: number;
  readonly scrapes: number;
  readonly samples: number;
  readonly min: number;
  readonly median: number;
  readonly max: number;
  /** VmHWM: the most the process ever had resident, start-up and first render included. */
  readonly peak: number;
  /** How fast RSS rose over the samples (bytes an hour, least squares): what keeps growing past the run. */
  readonly risePerHour: number;
  /** The last scrape's page, as Prometheus got it (OpenMetrics), unzipped. */
  readonly lastPage: string;
}

/**
 * How long after the forced collection RSS is read again. V8 keeps the pages a collection emptied
 * in a pool for reuse and gives them back only at its next memory-reducing collection, which its
 * memory reducer runs once the process has been idle for a few seconds (8 s at most).
 */
const SETTLE_MS = 10_000;

const MEMORY_ON_SIGUSR2 = `data:text/javascript,${encodeURIComponent(
  'process.on("SIGUSR2", () => { for (let i = 0; i < 3; i++) globalThis.gc(); ' +
    'process.stderr.write("MEMORY " + JSON.stringify(process.memoryUsage()) + "\\n"); });',
)}`;

/**
 * The memory settings the container image sets (its Dockerfile's `ENV MALLOC_…` and
 * `ENV NODE_OPTIONS=…`), read from the Dockerfile so that the figures measured "as in the image"
 * cannot drift from what it ships.
 */
export function imageEnvironment(): Record<string, string> {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const malloc = /^ENV (MALLOC_.*)$/m.exec(dockerfile)?.[1];
  if (malloc === undefined) throw new Error('Dockerfile sets no MALLOC_ environment');
  const nodeOptions = /^ENV NODE_OPTIONS=(\S+)$/m.exec(dockerfile)?.[1];
  if (nodeOptions === undefined) throw new Error('Dockerfile sets no NODE_OPTIONS');
  return {
    ...Object.fromEntries(malloc.split(/\s+/).map((pair) => pair.split('=') as [string, string])),
    NODE_OPTIONS: nodeOptions,
  };
}

/** Runs the benchmark; see the module comment. */
export async function run(options: {
  quick: boolean;
}): Promise<{ title: string; markdown: string }> {
  const sizes = (
    options.quick
      ? [
          [1, 0],
          [20, 1],
          [100, 5],
        ]
      : [
          [1, 0],
          [100, 5],
          [300, 15],
          [1000, 50],
        ]
  ).map(([queues = 1, flakyRepositories = 0]): Scale => ({
    queues,
    pullRequestsPerQueue: 30,
    flakyRepositories,
    quarantinedTests: 2000,
  }));
  const image = imageEnvironment();
  const imageEnvironmentText = Object.entries(image)
    .map(([name, value]) => `\`${name}=${value}\``)
    .join(' ');
  const rows: string[][] = [];
  const measured: { scale: Scale; figures: MemoryFigures }[] = [];
  const runs = [
    ...sizes.map((scale) => ({ scale, environment: image })),
    // The largest size once more as a plain command line on a glibc host, without those settings.
    ...sizes.slice(-1).map((scale) => ({ scale, environment: {} })),
  ];
  for (const { scale, environment } of runs) {
    const asImage = environment === image;
    progress(
      `memory: ${scale.queues} queues, ${scale.flakyRepositories} quarantine lists${asImage ? '' : ', no malloc settings'}`,
    );
    const figures = await measure(scale, environment);
    if (asImage) measured.push({ scale, figures });
    rows.push([
      asImage ? 'image' : 'none',
      format(scale.queues),
      format(scale.flakyRepositories),
      format(figures.series),
      `**${megabytes(figures.rss)}**`,
      `**${megabytes(figures.settledRss)}**`,
      megabytes(figures.heapTotal),
      megabytes(figures.heapUsed),
      megabytes(figures.external),
      megabytes(figures.pageBytes),
    ]);
  }
  const steadyScale = sizes.at(-1);
  if (steadyScale === undefined) throw new Error('no sizes');
  const steadySeconds = options.quick ? 20 : 180;
  progress(
    `memory: ${steadyScale.queues} queues polled every 30 s and scraped every 15 s for ${steadySeconds} s`,
  );
  const steady = await measureSteadyState(steadyScale, steadySeconds, image);
  progress('memory: the same without the malloc settings');
  const steadyWithout = await measureSteadyState(steadyScale, steadySeconds, {});
  const smallest = measured[0];
  const largest = measured.at(-1);
  const growth = (pick: (figures: MemoryFigures) => number): string =>
    smallest !== undefined && largest !== undefined
      ? megabytes(
          ((pick(largest.figures) - pick(smallest.figures)) /
            (largest.scale.queues - smallest.scale.queues)) *
            100,
        )
      : 'n/a';
  return {
    title: 'Memory',
    markdown: [
      `Resident set size of the exporter process (\`node --expose-gc bin/trunk-exporter.js --config …\`), run with the malloc settings the container image sets (${imageEnvironmentText}; "image") and, at the largest size, once more without them ("none", a plain command line on a glibc host), after \`gc()\` (three times), once every target has been polled once (\`/readyz\` is 200) and /metrics has been served in both encodings (so the render cache is full). Each merge queue holds 30 pull requests; each polled quarantine list 2,000 tests. One fresh process per size; the simulator runs in another process.`,
      '',
      table(
        [
          'malloc settings',
          'merge-queue targets',
          'quarantine lists',
          'series',
          'RSS',
          `RSS ${format(SETTLE_MS / 1000)} s later`,
          'heap total',
          'heap used',
          'external',
          'page (text)',
        ],
        rows,
      ),
      '',
      `**Steady state.** The same exporter at the largest size (${format(steadyScale.queues)} merge-queue targets, ${format(steadyScale.flakyRepositories)} quarantine lists), at the default intervals (merge queues every 30 s, quarantine lists every 300 s) against a simulator whose queues move, scraped every 15 s with Prometheus's own \`Accept\` and \`Accept-Encoding\` (OpenMetrics, gzip), for ${format(steady.seconds)} s; RSS read from \`/proc/<pid>/status\` every 5 s after a warm-up of ${format(steady.warmUpSeconds)} s, no forced GC (${format(steady.samples)} samples, ${format(steady.scrapes)} scrapes):`,
      '',
      table(
        ['malloc settings', 'RSS min', 'RSS median', 'RSS max', 'peak (VmHWM, start-up included)'],
        [[`image: ${imageEnvironmentText}`, steady] as const, ['none', steadyWithout] as const].map(
          ([settings, figures]) => [
            settings,
            megabytes(figures.min),
            `**${megabytes(figures.median)}**`,
            megabytes(figures.max),
            megabytes(figures.peak),
          ],
        ),
      ),
      '',
      `Growth from the smallest to the largest size, per 100 merge-queue targets (with their share of quarantine lists): ${growth((f) => f.rss)} of RSS, ${growth((f) => f.heapUsed)} of heap in use. Target: RSS under 150 MB at 1,000 targets × 30 PRs and 50 × 2,000 quarantined tests.`,
      '',
      `Against the target, RSS under 150 MB at 1,000 targets × 30 PRs and 50 × 2,000 quarantined tests: the steady-state median with the image's settings is ${megabytes(steady.median)} (${steady.median < 150e6 ? 'under' : 'over'} it), its maximum ${megabytes(steady.max)}; without them, ${megabytes(steadyWithout.median)}.`,
      '',
      "**What limits it.** About 52 MB of RSS at every size is the `node` binary's own code, mapped from the file, and about 40 MB more is Node.js, V8 and the loaded modules before the first poll (the 1-target row). Above that, at 1,000 targets: the snapshots and flow ledgers (about 17 MB of heap in use), the cached page (each target's bytes per format and encoding asked for, and the blocks joined from them, as external memory), and the garbage between two collections. The first RSS column is read right after the forced collection, with the pages it emptied still resident: V8 keeps those in a pool for reuse until its next memory-reducing collection, which its memory reducer runs once the process has been idle for a few seconds; the second column is read 10 s later (`SETTLE_MS`), the process idle, once V8 has given them back (the same process, the same heap in use). The external column counts the page's whole buffer, which a render reserves with room to grow; only the bytes written are ever touched, and only those are resident. The page is rendered per target (`src/metrics/metricsPage.ts`): when a poll changes a target, that target's samples are rendered into bytes (gzip members for a gzip scrape) and every other target's bytes stay as they are, so a render allocates in proportion to what changed, and histogram buckets (half the lines) are written straight to text rather than through prom-client's sample objects; a scrape sends those bytes as they are, joined in blocks of 32 consecutive targets, and joins them into one buffer only for a page it sends again unchanged (a quiet organization, a scrape flood). With only gzip asked for (Prometheus), no plain text of the page is kept. Two settings outside the code matter. V8's `--optimize-for-size`, which the `trunk-exporter` command sets at run time before it loads anything (`src/cli/v8Flags.ts`): without it V8 grows its young generation to 128 MB and its old space to about 200 MB during the first poll cycle and render and keeps them (about 390 MB at the largest size); it costs some CPU in garbage collection (see Cycle time). And glibc's malloc settings, which the container image sets: without them glibc raises its mmap threshold once the first large buffer is freed and then keeps every later page-sized buffer in its heap, and gives busy threads arenas of their own (the \"none\" rows). They cannot be set from inside the process; on a plain command line, set them in the environment. Measured and not kept (2026-11-21, median of the same steady-state run): releasing the page's plain text when only gzip is asked for and restoring it from the gzip member for the next render (external memory 16 MB lower, median RSS about 2 MB lower, one gunzip per render); V8's `--no-concurrent-recompilation` (no change). Measured and not kept (2026-11-22, scratch runs of the same two measurements): jemalloc or mimalloc preloaded with `LD_PRELOAD` (Debian's libjemalloc2 and libmimalloc2.0) instead of glibc with the image's settings (RSS after forced GC 161 and 152 MB against 146-150 MB); V8's `--heap-growing-percent=15` and `--external-memory-accounted-in-global-limit` (steady-state medians 138.5 and 135.5 MB against 135.7-137.9 MB the same hour: within the noise).",
    ].join('\n'),
  };
}

/** The exporter's command line polling a simulator of `scale`, both stopped once `use` is done. */
async function withExporter<T>(
  scale: Scale,
  options: {
    readonly intervalSeconds: { readonly mergeQueue: number; readonly flakyTests: number };
    readonly nodeOptions: readonly string[];
    readonly environment: Record<string, string>;
  } & SteadyStateOptions,
  use: (exporter: RunningChild & { url: string }) => Promise<T>,
): Promise<T> {
  const simulator = await startSimulatorProcess({
    scale,
    flavour: 'live',
    latencyMs: 0,
    churn: 'normal',
    wallClock: options.wallClock,
  });
  try {
    const config = configYaml(scale, {
      // The simulator serves API v1 under /v1 and API v2 beside it under /v2.
      apiUrl: options.api === 'v2' ? new URL(simulator.baseUrl).origin : simulator.baseUrl,
      api: options.api,
      port: await freePort(),
      maxConcurrentRequests: 16,
      maxRequestsPerSecond: 10_000,
      mergeQueueIntervalSeconds: options.intervalSeconds.mergeQueue,
      flakyTestsIntervalSeconds: options.intervalSeconds.flakyTests,
    });
    const exporter = await startExporterProcess(config, options.nodeOptions, options.environment);
    try {
      return await use(exporter);
    } finally {
      await exporter.stop();
    }
  } finally {
    await simulator.stop();
  }
}

/** How the exporter of a steady-state run reads, and what world it reads. */
interface SteadyStateOptions {
  /** v1 (the default): the token and listed targets; v2: the API key and discovery. */
  readonly api?: 'v1' | 'v2' | undefined;
  /** The simulator's world follows the wall clock; by default it stays as its warm-up left it. */
  readonly wallClock?: boolean | undefined;
}

/** The steady-state run of the report; also run alone by steadyMemory.ts. */
export async function measureSteadyState(
  scale: Scale,
  seconds: number,
  environment: Record<string, string>,
  options: SteadyStateOptions = {},
): Promise<SteadyFigures> {
  const intervalSeconds = { mergeQueue: 30, flakyTests: 300 };
  return withExporter(
    scale,
    { intervalSeconds, nodeOptions: [], environment, ...options },
    async (exporter) => {
      const status = (): string =>
        readFileSync(`/proc/${String(exporter.child.pid)}/status`, 'utf8');
      const kilobytes = (field: string): number =>
        Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status())?.[1] ?? Number.NaN) * 1024;
      const warmUpMs = Math.min(60_000, (seconds * 1000) / 3);
      const started = Date.now();
      const rss: number[] = [];
      const sampledAt: number[] = [];
      let scrapes = 0;
      let nextScrape = started;
      let lastPage: Buffer = Buffer.alloc(0);
      while (Date.now() - started < seconds * 1000) {
        if (Date.now() >= nextScrape) {
          lastPage = (await rawGet(`${exporter.url}/metrics`, PROMETHEUS_SCRAPE_HEADERS)).body;
          scrapes++;
          nextScrape += 15_000;
        }
        await new Promise((resolve) => setTimeout(resolve, 5_000));
        if (Date.now() - started >= warmUpMs) {
          rss.push(kilobytes('VmRSS'));
          sampledAt.push((Date.now() - started) / 3_600_000);
        }
      }
      return {
        seconds,
        warmUpSeconds: warmUpMs / 1000,
        scrapes,
        samples: rss.length,
        min: Math.min(...rss),
        median: median(rss),
        max: Math.max(...rss),
        peak: kilobytes('VmHWM'),
        risePerHour: slope(sampledAt, rss),
        lastPage: gunzipSync(lastPage).toString('utf8'),
      };
    },
  );
}

async function measure(scale: Scale, environment: Record<string, string>): Promise<MemoryFigures> {
  const options = {
    intervalSeconds: { mergeQueue: 86_400, flakyTests: 86_400 },
    nodeOptions: ['--expose-gc', '--import', MEMORY_ON_SIGUSR2],
    environment,
  };
  return withExporter(scale, options, async (exporter) => {
    // What a scraped exporter holds: both encodings of the page in its render cache.
    const plain = await rawGet(`${exporter.url}/metrics`);
    await rawGet(`${exporter.url}/metrics`, { 'Accept-Encoding': 'gzip' });
    const printed = exporter.waitFor(/MEMORY (\{.*\})/);
    exporter.child.kill('SIGUSR2');
    const usage = JSON.parse((await printed)[1] ?? '{}') as Omit<
      MemoryFigures,
      'series' | 'pageBytes' | 'settledRss'
    >;
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const status = readFileSync(`/proc/${String(exporter.child.pid)}/status`, 'utf8');
    const settledRss = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) * 1024;
    const series = plain.body
      .toString('utf8')
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('#')).length;
    return { ...usage, settledRss, series, pageBytes: plain.body.length };
  });
}
