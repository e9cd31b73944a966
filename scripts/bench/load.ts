// Serving under load: 200 concurrent scrapers for 30 seconds while the exporter keeps polling a
// simulator that keeps moving, so the render cache is invalidated all the time. No scrape may fail.
import { gunzipSync } from 'node:zlib';
import { freePort, startExporterProcess, startSimulatorProcess } from './processes.ts';
import { configYaml, type Scale } from './scale.ts';
import { rawGet } from './staticServers.ts';
import { format, progress, table } from './stats.ts';
import { runWrk } from './wrk.ts';

const SCRAPERS = 200;
const SCALE: Scale = {
  queues: 100,
  pullRequestsPerQueue: undefined,
  flakyRepositories: 20,
  quarantinedTests: undefined,
};
const MERGE_QUEUE_INTERVAL_SECONDS = 2;
const FLAKY_TESTS_INTERVAL_SECONDS = 10;

/** Runs the benchmark; see the module comment. */
export async function run(options: {
  quick: boolean;
}): Promise<{ title: string; markdown: string }> {
  const seconds = options.quick ? 5 : 30;
  progress(
    `load: ${SCRAPERS} scrapers for ${seconds} s while ${SCALE.queues} queues poll every ${MERGE_QUEUE_INTERVAL_SECONDS} s`,
  );
  // Five simulated seconds every 100 ms: queues move 50 times faster than real ones.
  const simulator = await startSimulatorProcess({
    scale: SCALE,
    flavour: 'live',
    latencyMs: 20,
    churn: 'normal',
    advance: { tickMs: 100, secondsPerTick: 5 },
  });
  try {
    const exporter = await startExporterProcess(
      configYaml(SCALE, {
        apiUrl: simulator.baseUrl,
        port: await freePort(),
        maxConcurrentRequests: 8,
        maxRequestsPerSecond: 500,
        mergeQueueIntervalSeconds: MERGE_QUEUE_INTERVAL_SECONDS,
        flakyTestsIntervalSeconds: FLAKY_TESTS_INTERVAL_SECONDS,
      }),
    );
    try {
      const before = await apiCalls(exporter.url);
      const result = await runWrk({
        url: `${exporter.url}/metrics`,
        connections: SCRAPERS,
        threads: 2,
        seconds,
        headers: { 'Accept-Encoding': 'gzip' },
      });
      const after = await apiCalls(exporter.url);
      const polls = (after.get('getQueue') ?? 0) - (before.get('getQueue') ?? 0);
      const down = after.get('down') ?? 0;
      progress(
        `  ${format(result.requests)} scrapes, ${format(result.errors)} failed, p99 ${format(result.p99Ms, 1)} ms, ${format(polls)} queue polls`,
      );
      return {
        title: 'Serving under load',
        markdown: [
          `\`wrk -t2 -c${SCRAPERS} -d${seconds}s -H 'Accept-Encoding: gzip'\` against \`/metrics\` of the exporter's command line while it polls ${SCALE.queues} merge queues every ${MERGE_QUEUE_INTERVAL_SECONDS} s and ${SCALE.flakyRepositories} quarantine lists every ${FLAKY_TESTS_INTERVAL_SECONDS} s (\`maxConcurrentRequests: 8\`), against a simulator that answers after 20 ms and moves five simulated seconds every 100 ms, so nearly every scrape finds a changed store.`,
          '',
          table(
            [
              'scrapes',
              'failed',
              'scrapes/s',
              'p50',
              'p99',
              'max',
              'queue polls during the run',
              'targets down after',
            ],
            [
              [
                format(result.requests),
                `**${format(result.errors)}**`,
                format(result.requestsPerSecond),
                `${format(result.p50Ms, 2)} ms`,
                `**${format(result.p99Ms, 2)} ms**`,
                `${format(result.maxMs, 1)} ms`,
                format(polls),
                format(down),
              ],
            ],
          ),
          '',
          '"Failed" counts connect, read and write errors, timeouts and non-2xx answers, as wrk reports them.',
          '',
          "**What limits it.** Here the store changes about 50 times a second (100 queues every 2 s). A change renders that target's bytes once per format and encoding in use (each gzip piece a gzip member of its own); the first scrape after a change writes the page from every target's bytes, and scrapes until the next change send that page as it is. The exporter's own metrics are rendered afresh for a burst of 20 scrapes and then at most 20 times a second (`EXPORTER_PART_BURST` in `src/metrics/metricsPage.ts`), so 200 scrapers get the latest rendering rather than one each. What sets the tail latency is the page writes and socket writes of 200 scrapers on one thread. Prometheus scrapes far less often than this, so the figures are a stress bound, not a forecast.",
        ].join('\n'),
      };
    } finally {
      await exporter.stop();
    }
  } finally {
    await simulator.stop();
  }
}

/** Successful API calls per endpoint, and how many targets are down, from the exporter's own page. */
async function apiCalls(url: string): Promise<Map<string, number>> {
  const response = await rawGet(`${url}/metrics`, { 'Accept-Encoding': 'gzip' });
  const page = gunzipSync(response.body).toString('utf8');
  const counts = new Map<string, number>();
  for (const match of page.matchAll(
    /^trunk_exporter_api_requests_total\{endpoint="([^"]+)",code="200"\} (\S+)$/gm,
  )) {
    counts.set(match[1] ?? '', Number(match[2]));
  }
  counts.set('down', [...page.matchAll(/^trunk_exporter_target_up\{[^}]*\} 0$/gm)].length);
  return counts;
}
