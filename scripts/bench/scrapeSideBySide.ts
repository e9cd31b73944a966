// `node scripts/bench/scrapeSideBySide.ts [exporter checkout …]`: the scrape path measured against
// Node.js itself, in one run, for one or more builds (default: this checkout's dist/; give other
// checkouts' roots to compare builds side by side). Printed, not written to docs/benchmarks.md.
// 1. Throughput: the 1,000-target page (1,000 merge queues × 30 PRs, 50 quarantine lists × 2,000
//    tests, polls paused) from /metrics, and the same bytes from the bare node:http reference
//    (nodeHttpServer.ts), with and without gzip, `wrk -t1 -c4` in interleaved rounds.
// 2. Latency while polled: 200 merge queues polled every 3 s from a moving simulator; scrapes as
//    Prometheus sends them (OpenMetrics, gzip), one at a time, alternating between /metrics and the
//    node:http reference serving a copy of the exporter's page, a pair every PAIR_GAP_MS so that
//    the run spans several poll cycles; the median time to the last byte. With --polls-paused, the
//    same after the first poll of every target and no poll since: what the scrape path costs with
//    the page unchanged.
import { join } from 'node:path';
import { freePort, startChild, startSimulatorProcess, waitForOk } from './processes.ts';
import type { RunningChild } from './processes.ts';
import { configYaml, type Scale } from './scale.ts';
import { rawGet, startNodeHttp, type RunningPageServer } from './staticServers.ts';
import { format, median, megabytes, progress, table } from './stats.ts';
import { runWrk } from './wrk.ts';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { ROOT } from './built.ts';

const PROMETHEUS_HEADERS = {
  Accept:
    'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1',
  'Accept-Encoding': 'gzip',
};
const ENCODINGS = { gzip: { 'Accept-Encoding': 'gzip' }, identity: {} } as const;
type Encoding = keyof typeof ENCODINGS;

const quick = process.argv.includes('--quick');
const pollsPaused = process.argv.includes('--polls-paused');
const checkouts = process.argv.slice(2).filter((argument) => !argument.startsWith('--'));
const roots = checkouts.length > 0 ? checkouts : [ROOT];
const ROUNDS = quick ? 3 : 9;
const SECONDS = quick ? 2 : 4;
const SCRAPES = quick ? 30 : 300;
const PAIR_GAP_MS = 30;

/** CPU time (user + system) a process has used, in microseconds; Linux clock ticks are 10 ms. */
function cpuMicros(pid: number | undefined): number {
  const fields =
    readFileSync(`/proc/${String(pid)}/stat`, 'utf8')
      .split(') ')[1]
      ?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** The exporter of checkout `root` on `config`, once every target has been polled. */
async function startExporterAt(root: string, config: string): Promise<RunningChild> {
  const directory = mkdtempSync(join(tmpdir(), 'trunk-exporter-bench-side-'));
  const path = join(directory, 'config.yaml');
  writeFileSync(path, config);
  const port = /port: (\d+)/.exec(config)?.[1] ?? '';
  const running = await startChild(
    process.execPath,
    [join(root, 'bin/trunk-exporter.js'), '--config', path],
    { cwd: root },
  );
  await waitForOk(`http://127.0.0.1:${port}/readyz`);
  return running;
}

/** What withPair() hands over: the exporter, its /metrics, and the reference serving its page. */
interface Pair {
  readonly exporter: RunningChild;
  readonly url: string;
  readonly reference: RunningPageServer;
  readonly plain: Buffer;
  readonly gzipped: Buffer;
}

/**
 * The exporter of checkout `root` on `config(port)`, and the node:http reference serving the page
 * the exporter served first (asked with `accept`), for the time `use` takes.
 */
async function withPair<T>(
  root: string,
  config: (port: number) => string,
  accept: Readonly<Record<string, string>>,
  use: (pair: Pair) => Promise<T>,
): Promise<T> {
  const port = await freePort();
  const exporter = await startExporterAt(root, config(port));
  let reference: RunningPageServer | undefined;
  try {
    const url = `http://127.0.0.1:${String(port)}/metrics`;
    const plain = (await rawGet(url, accept)).body;
    const gzipped = (await rawGet(url, { ...accept, ...ENCODINGS.gzip })).body;
    reference = await startNodeHttp(plain, gzipped);
    return await use({ exporter, url, reference, plain, gzipped });
  } finally {
    await reference?.stop();
    await exporter.stop();
  }
}

async function throughput(): Promise<string> {
  const scale: Scale = {
    queues: quick ? 100 : 1000,
    pullRequestsPerQueue: 30,
    flakyRepositories: quick ? 5 : 50,
    quarantinedTests: 2000,
  };
  progress(`side by side: ${scale.queues} queues, polls paused`);
  const simulator = await startSimulatorProcess({
    scale,
    flavour: 'live',
    latencyMs: 0,
    churn: 'normal',
  });
  const rows: string[][] = [];
  try {
    for (const root of roots) {
      const config = (port: number): string =>
        configYaml(scale, {
          apiUrl: simulator.baseUrl,
          port,
          maxConcurrentRequests: 16,
          maxRequestsPerSecond: 10_000,
          mergeQueueIntervalSeconds: 86_400,
          flakyTestsIntervalSeconds: 86_400,
        });
      await withPair(root, config, {}, async ({ exporter, url, reference, plain, gzipped }) => {
        const rps = new Map<string, number[]>();
        const cpu = new Map<string, number[]>();
        for (let round = 1; round <= ROUNDS; round++) {
          for (const encoding of Object.keys(ENCODINGS) as Encoding[]) {
            for (const [name, target, pid] of [
              ['exporter', url, exporter.child.pid],
              ['node:http', reference.url, reference.child.pid],
            ] as const) {
              const cpuBefore = cpuMicros(pid);
              const result = await runWrk({
                url: target,
                connections: 4,
                seconds: SECONDS,
                headers: ENCODINGS[encoding],
              });
              if (result.errors > 0)
                throw new Error(`${name} ${encoding}: ${result.errors} errors`);
              const key = `${name}/${encoding}`;
              rps.set(key, [...(rps.get(key) ?? []), result.requestsPerSecond]);
              cpu.set(key, [
                ...(cpu.get(key) ?? []),
                (cpuMicros(pid) - cpuBefore) / result.requests,
              ]);
              progress(
                `  ${root} round ${round} ${key}: ${format(result.requestsPerSecond)} req/s`,
              );
            }
          }
        }
        for (const encoding of Object.keys(ENCODINGS) as Encoding[]) {
          const exporterRps = rps.get(`exporter/${encoding}`) ?? [];
          const referenceRps = rps.get(`node:http/${encoding}`) ?? [];
          const ratios = exporterRps.map((value, index) => value / (referenceRps[index] ?? NaN));
          const exporterCpu = median(cpu.get(`exporter/${encoding}`) ?? []);
          const referenceCpu = median(cpu.get(`node:http/${encoding}`) ?? []);
          rows.push([
            root,
            encoding,
            megabytes((encoding === 'gzip' ? gzipped : plain).length),
            format(median(exporterRps)),
            format(median(referenceRps)),
            `**${format(median(ratios), 2)}×**`,
            ratios.map((ratio) => format(ratio, 2)).join(', '),
            `${format(exporterCpu)} µs / ${format(referenceCpu)} µs`,
          ]);
        }
      });
    }
  } finally {
    await simulator.stop();
  }
  return table(
    [
      'build',
      'encoding',
      'body',
      'exporter req/s',
      'node:http req/s',
      'exporter ÷ node:http (median of rounds)',
      'per round',
      'CPU per request (exporter / node:http, medians)',
    ],
    rows,
  );
}

/** Milliseconds to the last byte of one GET. */
async function timedGet(url: string): Promise<number> {
  const started = performance.now();
  const answer = await rawGet(url, PROMETHEUS_HEADERS);
  if (answer.status !== 200) throw new Error(`${url}: ${answer.status}`);
  return performance.now() - started;
}

async function whilePolled(): Promise<string> {
  const scale: Scale = {
    queues: quick ? 40 : 200,
    pullRequestsPerQueue: 30,
    flakyRepositories: 0,
    quarantinedTests: 0,
  };
  progress(
    `side by side: ${scale.queues} queues ${pollsPaused ? 'polled once' : 'polled every 3 s'}`,
  );
  const simulator = await startSimulatorProcess({
    scale,
    flavour: 'live',
    latencyMs: 20,
    churn: 'normal',
    advance: { tickMs: 100, secondsPerTick: 5 },
  });
  const rows: string[][] = [];
  try {
    for (const root of roots) {
      const config = (port: number): string =>
        configYaml(scale, {
          apiUrl: simulator.baseUrl,
          port,
          maxConcurrentRequests: 16,
          maxRequestsPerSecond: 10_000,
          mergeQueueIntervalSeconds: pollsPaused ? 86_400 : 3,
          flakyTestsIntervalSeconds: 300,
        });
      const accept = { Accept: PROMETHEUS_HEADERS.Accept };
      await withPair(root, config, accept, async ({ url, reference, plain, gzipped }) => {
        // Warm both up.
        for (let index = 0; index < 10; index++) {
          await timedGet(url);
          await timedGet(reference.url);
        }
        const exporterMs: number[] = [];
        const referenceMs: number[] = [];
        for (let index = 0; index < SCRAPES; index++) {
          // The first GET after the gap takes longer whichever server answers it (the client and
          // the loopback wake from idle), so each server goes first in every other pair.
          if (index % 2 === 0) {
            exporterMs.push(await timedGet(url));
            referenceMs.push(await timedGet(reference.url));
          } else {
            referenceMs.push(await timedGet(reference.url));
            exporterMs.push(await timedGet(url));
          }
          await new Promise((resolve) => setTimeout(resolve, PAIR_GAP_MS));
        }
        rows.push([
          root,
          megabytes(plain.length),
          megabytes(gzipped.length),
          `${format(median(exporterMs), 2)} ms`,
          `${format(median(referenceMs), 2)} ms`,
          `**${format(median(exporterMs) / median(referenceMs), 2)}×**`,
        ]);
        progress(`  ${root}: ${rows.at(-1)?.slice(3).join(' ')}`);
      });
    }
  } finally {
    await simulator.stop();
  }
  return table(
    ['build', 'page', 'gzipped', 'exporter median', 'node:http median', 'exporter ÷ node:http'],
    rows,
  );
}

const sections = [];
if (!process.argv.includes('--only-polled')) sections.push(await throughput());
if (!process.argv.includes('--only-throughput')) sections.push(await whilePolled());
console.log(sections.join('\n\n'));
