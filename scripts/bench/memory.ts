// Memory: the exporter's resident set after garbage collection, once every target has been polled
// and the page is cached, for growing organizations. Each size runs the exporter's own command line
// in a fresh process against a simulator in another one, so only the exporter counts. A preload
// given as a data: URL (so nothing else is loaded into the exporter) collects garbage and prints
// process.memoryUsage() when the process gets SIGUSR2.
import { freePort, startExporterProcess, startSimulatorProcess } from './processes.ts';
import { configYaml, type Scale } from './scale.ts';
import { rawGet } from './staticServers.ts';
import { format, megabytes, progress, table } from './stats.ts';

interface MemoryFigures {
  readonly rss: number;
  readonly heapTotal: number;
  readonly heapUsed: number;
  readonly external: number;
  readonly series: number;
  readonly pageBytes: number;
}

const MEMORY_ON_SIGUSR2 = `data:text/javascript,${encodeURIComponent(
  'process.on("SIGUSR2", () => { for (let i = 0; i < 3; i++) globalThis.gc(); ' +
    'process.stderr.write("MEMORY " + JSON.stringify(process.memoryUsage()) + "\\n"); });',
)}`;

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
  const rows: string[][] = [];
  const measured: { scale: Scale; figures: MemoryFigures }[] = [];
  for (const scale of sizes) {
    progress(`memory: ${scale.queues} queues, ${scale.flakyRepositories} quarantine lists`);
    const figures = await measure(scale);
    measured.push({ scale, figures });
    rows.push([
      format(scale.queues),
      format(scale.flakyRepositories),
      format(figures.series),
      `**${megabytes(figures.rss)}**`,
      megabytes(figures.heapTotal),
      megabytes(figures.heapUsed),
      megabytes(figures.external),
      megabytes(figures.pageBytes),
    ]);
  }
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
      'Resident set size of the exporter process (`node --expose-gc bin/trunk-exporter.js --config …`) after `gc()` (three times), once every target has been polled once (`/readyz` is 200) and /metrics has been served in both encodings (so the render cache is full). Each merge queue holds 30 pull requests; each polled quarantine list 2,000 tests. One fresh process per size; the simulator runs in another process.',
      '',
      table(
        [
          'merge-queue targets',
          'quarantine lists',
          'series',
          'RSS',
          'heap total',
          'heap used',
          'external',
          'page (text)',
        ],
        rows,
      ),
      '',
      `Growth from the smallest to the largest size, per 100 merge-queue targets (with their share of quarantine lists): ${growth((f) => f.rss)} of RSS, ${growth((f) => f.heapUsed)} of heap in use. Target: RSS under 150 MB at 1,000 targets × 30 PRs and 50 × 2,000 quarantined tests.`,
      '',
      "**What limits it.** The heap in use grows slowly with targets: prom-client keeps every series of the page in its gauges' label maps, the snapshots are small, and the render cache holds the page as text and gzip. RSS grows much faster than the heap in use because of the first poll cycle: every target starts polling within two seconds and the limiter serves the getQueue calls before the lookups queued behind them, so every parsed queue response is alive at once. V8 grows its heap for that burst and, even after `gc()` has shrunk the heap, the process keeps most of those pages resident. In a trial at the largest size, `--max-semi-space-size=2` lowered RSS by about a quarter. The 150 MB target needs that burst flattened (finishing started polls before starting new ones); it is not met yet.",
    ].join('\n'),
  };
}

async function measure(scale: Scale): Promise<MemoryFigures> {
  const simulator = await startSimulatorProcess({
    scale,
    flavour: 'live',
    latencyMs: 0,
    churn: 'normal',
  });
  try {
    const config = configYaml(scale, {
      apiUrl: simulator.baseUrl,
      port: await freePort(),
      maxConcurrentRequests: 16,
      maxRequestsPerSecond: 10_000,
      mergeQueueIntervalSeconds: 86_400,
      flakyTestsIntervalSeconds: 86_400,
    });
    const exporter = await startExporterProcess(config, [
      '--expose-gc',
      '--import',
      MEMORY_ON_SIGUSR2,
    ]);
    try {
      // What a scraped exporter holds: both encodings of the page in its render cache.
      const plain = await rawGet(`${exporter.url}/metrics`);
      await rawGet(`${exporter.url}/metrics`, { 'Accept-Encoding': 'gzip' });
      const printed = exporter.waitFor(/MEMORY (\{.*\})/);
      exporter.child.kill('SIGUSR2');
      const usage = JSON.parse((await printed)[1] ?? '{}') as Omit<
        MemoryFigures,
        'series' | 'pageBytes'
      >;
      const series = plain.body
        .toString('utf8')
        .split('\n')
        .filter((line) => line !== '' && !line.startsWith('#')).length;
      return { ...usage, series, pageBytes: plain.body.length };
    } finally {
      await exporter.stop();
    }
  } finally {
    await simulator.stop();
  }
}
