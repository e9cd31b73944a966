// Scraping: the same 50,000-series page served by the exporter's /metrics, by nginx as a static
// file, and by node_exporter's textfile collector, measured with the same wrk settings, in
// interleaved rounds so that a noisy neighbour hurts all three alike.
import { gunzipSync } from 'node:zlib';
import { freePort, startExporterProcess, startSimulatorProcess } from './processes.ts';
import { configYaml, type Scale } from './scale.ts';
import {
  rawGet,
  startNginx,
  startNodeExporter,
  startNodeHttp,
  type RunningPageServer,
} from './staticServers.ts';
import { format, median, megabytes, progress, table } from './stats.ts';
import { runWrk, type WrkResult } from './wrk.ts';

/**
 * About 98 series per queue (with the queue-flow histograms) and 134 of the exporter's own: 508
 * queues make 50,000 series. The page is checked against SERIES_RANGE, so it cannot drift again.
 */
const QUEUES_FOR_50K_SERIES = 508;
const SERIES_RANGE = { min: 45_000, max: 55_000 } as const;
/** Few enough that node_exporter, which needs seconds per scrape of this page, does not time out. */
const CONNECTIONS = 4;

const ENCODINGS = {
  gzip: { 'Accept-Encoding': 'gzip' },
  identity: {},
} as const;
type Encoding = keyof typeof ENCODINGS;
type ServerName = 'exporter' | 'node:http' | 'nginx' | 'node_exporter';
const SERVERS: readonly ServerName[] = ['exporter', 'node:http', 'nginx', 'node_exporter'];

/** Runs the benchmark; see the module comment. */
export async function run(options: {
  quick: boolean;
}): Promise<{ title: string; markdown: string }> {
  const scale: Scale = {
    queues: options.quick ? 100 : QUEUES_FOR_50K_SERIES,
    pullRequestsPerQueue: 30,
    flakyRepositories: 0,
    quarantinedTests: 0,
  };
  const seconds = options.quick ? 2 : 10;
  const rounds = options.quick ? 1 : 3;
  progress(`scrape: building the page from ${scale.queues} queues`);
  const simulator = await startSimulatorProcess({
    scale,
    flavour: 'live',
    latencyMs: 0,
    churn: 'normal',
  });
  const servers = new Map<ServerName, RunningPageServer>();
  try {
    const exporter = await startExporterProcess(
      configYaml(scale, {
        apiUrl: simulator.baseUrl,
        port: await freePort(),
        maxConcurrentRequests: 16,
        maxRequestsPerSecond: 10_000,
        // No poll during the measurement: the page stays the same bytes as the static copies.
        mergeQueueIntervalSeconds: 86_400,
        flakyTestsIntervalSeconds: 86_400,
      }),
    );
    servers.set('exporter', { ...exporter, url: `${exporter.url}/metrics` });
    const plain = await rawGet(`${exporter.url}/metrics`);
    const gzipped = await rawGet(`${exporter.url}/metrics`, ENCODINGS.gzip);
    if (gzipped.headers['content-encoding'] !== 'gzip') throw new Error('exporter did not gzip');
    const series = plain.body
      .toString('utf8')
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('#')).length;
    if (!options.quick && (series < SERIES_RANGE.min || series > SERIES_RANGE.max)) {
      throw new Error(
        `the page has ${series} series, not about 50,000: adjust QUEUES_FOR_50K_SERIES`,
      );
    }
    servers.set('node:http', await startNodeHttp(plain.body, gzipped.body));
    servers.set('nginx', await startNginx(plain.body, gzipped.body));
    servers.set('node_exporter', await startNodeExporter(plain.body));
    await checkSamePage(servers, series);

    const results = new Map<string, WrkResult[]>();
    for (let round = 1; round <= rounds; round++) {
      for (const encoding of Object.keys(ENCODINGS) as Encoding[]) {
        for (const name of SERVERS) {
          const server = servers.get(name);
          if (server === undefined) continue;
          const result = await runWrk({
            url: server.url,
            connections: CONNECTIONS,
            seconds,
            headers: ENCODINGS[encoding],
          });
          const key = `${name}/${encoding}`;
          results.set(key, [...(results.get(key) ?? []), result]);
          progress(
            `  round ${round} ${key}: ${format(result.requestsPerSecond)} req/s, p99 ${format(result.p99Ms, 1)} ms`,
          );
        }
      }
    }
    return {
      title: 'Scraping',
      markdown: report(results, {
        series,
        plainBytes: plain.body.length,
        gzipBytes: gzipped.body.length,
        seconds,
        rounds,
      }),
    };
  } finally {
    for (const server of servers.values()) await server.stop();
    await simulator.stop();
  }
}

/** Each server must serve the page's series before its speed means anything. */
async function checkSamePage(
  servers: ReadonlyMap<ServerName, RunningPageServer>,
  series: number,
): Promise<void> {
  for (const [name, server] of servers) {
    const response = await rawGet(server.url, ENCODINGS.gzip);
    const text = (
      response.headers['content-encoding'] === 'gzip' ? gunzipSync(response.body) : response.body
    ).toString('utf8');
    const lines = text.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
    // node_exporter adds a few series of its own (node_textfile_*, node_scrape_collector_*).
    if (lines.length < series || lines.length > series + 20) {
      throw new Error(`${name} serves ${lines.length} series, expected ${series}`);
    }
  }
}

function report(
  results: ReadonlyMap<string, readonly WrkResult[]>,
  page: { series: number; plainBytes: number; gzipBytes: number; seconds: number; rounds: number },
): string {
  const stat = (key: string, pick: (result: WrkResult) => number) =>
    median((results.get(key) ?? []).map(pick));
  const rows: string[][] = [];
  const ratios: string[][] = [];
  for (const encoding of Object.keys(ENCODINGS) as Encoding[]) {
    for (const name of SERVERS) {
      const key = `${name}/${encoding}`;
      rows.push([
        encoding,
        name,
        format(stat(key, (r) => r.requestsPerSecond)),
        `${format(
          stat(key, (r) => r.p50Ms),
          2,
        )} ms`,
        `${format(
          stat(key, (r) => r.p99Ms),
          2,
        )} ms`,
        format(stat(key, (r) => r.errors)),
        (results.get(key) ?? []).map((r) => format(r.requestsPerSecond)).join(', '),
      ]);
    }
    const rps = (name: ServerName) => stat(`${name}/${encoding}`, (r) => r.requestsPerSecond);
    const p99 = (name: ServerName) => stat(`${name}/${encoding}`, (r) => r.p99Ms);
    ratios.push([
      encoding,
      `**${format(rps('exporter') / rps('nginx'), 2)}×** (target ≥ 0.8)`,
      `${format(rps('node:http') / rps('nginx'), 2)}×`,
      `${format(rps('exporter') / rps('node:http'), 2)}×`,
      `**${format(rps('exporter') / rps('node_exporter'), 1)}×** (target ≥ 3)`,
      format(p99('exporter') / p99('nginx'), 2),
      format(p99('exporter') / p99('node_exporter'), 2),
    ]);
  }
  return [
    `One page of ${format(page.series)} series (${megabytes(page.plainBytes)} as text, ${megabytes(page.gzipBytes)} gzipped), built by the exporter polling the simulator, served by:`,
    '',
    "- **exporter**: `trunk-exporter --config …` (the command line, polls paused during the run), `/metrics` from its page cache, the gzip form being one gzip member per target and family plus one for the exporter's own metrics (`src/metrics/metricsPage.ts`);",
    "- **nginx**: Debian nginx-light, one worker, `sendfile on`, `tcp_nopush on`, no access log; the exporter's plain page as the static file and the exporter's own gzip response (both members, byte for byte) beside it as `metrics.gz`, served by `gzip_static on` (with `gzip_vary on`) to requests that accept gzip: neither side compresses per request, and both send the same bytes;",
    '- **node:http**: a bare Node.js `node:http` server (`scripts/bench/nodeHttpServer.ts`) answering every request with the same bytes and headers built once, written as the exporter writes them (one corked `writev`): no routing, no auth, no cache checks. It is the floor for any Node.js server of this page on this machine at this moment, so "rps vs node:http" is what the exporter\'s own code costs, and "node:http vs nginx" what Node.js costs against a C server that uses `sendfile`;',
    '- **node_exporter**: Debian prometheus-node-exporter with only the textfile collector (`--collector.disable-defaults --collector.textfile --web.disable-exporter-metrics`) reading the same page from a `.prom` file; it parses, re-renders and gzips it on every scrape.',
    '',
    `Load: \`wrk -t1 -c${CONNECTIONS} -d${page.seconds}s\` per server and encoding, with \`Accept-Encoding: gzip\` (what Prometheus sends) or without; ${page.rounds} interleaved round(s), medians shown; wrk's timeout is 30 s.`,
    '',
    table(
      ['encoding', 'server', 'requests/s', 'p50', 'p99', 'failed', 'requests/s per round'],
      rows,
    ),
    '',
    'Ratios (requests per second: exporter ÷ other, higher is better; p99: exporter ÷ other, lower is better):',
    '',
    table(
      [
        'encoding',
        'rps vs nginx',
        'node:http vs nginx',
        'rps vs node:http',
        'rps vs node_exporter',
        'p99 vs nginx',
        'p99 vs node_exporter',
      ],
      ratios,
    ),
    '',
    "**How it scales.** For an unchanged page the exporter sends per scrape the page it wrote last (the families computed from the store) and its own metrics, rendered on every scrape, up to 20 times a second (the process and Node.js metrics at most once a second), so its cost per scrape grows with the bytes sent, like nginx's, not with the number of series. node_exporter parses, re-renders and gzips the whole file on every scrape: its cost grows with the series, and it needs seconds per scrape of a page this size. A change of a target costs one render of that target's samples when the store changes it, and the next scrape joins again the block of 32 targets it is in and copies every block into one buffer.",
    '',
    "**What limits it.** Express answers `/metrics` (basic auth, TLS and headers as for every endpoint), from the cached page: the store's view key tells an unchanged page without looking at every target, and headers and both buffers leave in one corked `writev`. What is left is Express's and Node.js's own HTTP handling and the copy of the page into the socket: nginx hands the file to the kernel with `sendfile` instead. The gzip page is larger than one gzip stream of the whole text would be, since each target's piece of each family is compressed on its own (so that a poll never compresses the whole page again): see “Scrape path side by side” for both figures.",
  ].join('\n');
}
