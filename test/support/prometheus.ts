// Runs a real Prometheus (Debian's `prometheus` package) for a test: a temporary directory for its
// config and storage, a free loopback port, and a small client for its HTTP API.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One series of an instant query's answer. */
export interface InstantSample {
  readonly metric: Record<string, string>;
  readonly value: [number, string];
}

/** One series of /api/v1/query_exemplars' answer. */
export interface ExemplarSeries {
  readonly seriesLabels: Record<string, string>;
  readonly exemplars: readonly {
    labels: Record<string, string>;
    value: string;
    timestamp: number;
  }[];
}

/** A started Prometheus: its base URL, its API and how to stop it. */
export interface RunningPrometheus {
  readonly url: string;
  /** GETs an API path (e.g. `/api/v1/query?query=up`); resolves to the `data` of a success answer. */
  api(pathAndQuery: string): Promise<unknown>;
  /** The series of an instant query (`data.result` of /api/v1/query), now or at `time` (epoch s). */
  query(expression: string, time?: number): Promise<InstantSample[]>;
  /** Stops Prometheus and deletes its directory; its log is returned for failure messages. */
  stop(): Promise<string>;
  readonly log: () => string;
}

interface PrometheusOptions {
  readonly binary: string;
  /** `host:port` scraped at /metrics by the job `trunk-exporter`; or give `scrapeConfigs`. */
  readonly scrapeTarget?: string;
  /** `scrape_configs` entries as Prometheus reads them (TLS, basic auth…), instead of a target. */
  readonly scrapeConfigs?: readonly Record<string, unknown>[];
  readonly ruleFiles?: readonly string[];
  /** Scrape and rule evaluation interval; 1 s unless given. */
  readonly intervalSeconds?: number;
  /** A config file to run as it is, instead of the one made from the options above. */
  readonly configFile?: string;
  /** Feature flags to enable (`--enable-feature`), e.g. `exemplar-storage`. */
  readonly features?: readonly string[];
}

/**
 * A free loopback port. Prometheus cannot listen on port 0 and report the port it got, so the port
 * is found by binding one and releasing it just before Prometheus takes it.
 */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => {
        resolve(port);
      });
    });
  });
}

/** Starts Prometheus scraping its targets and evaluating the given rule files; stop() it after. */
export async function startPrometheus(options: PrometheusOptions): Promise<RunningPrometheus> {
  const directory = mkdtempSync(join(tmpdir(), 'trunk-exporter-prometheus-'));
  const configFile = join(directory, 'prometheus.yml');
  const interval = `${String(Math.round((options.intervalSeconds ?? 1) * 1000))}ms`;
  const scrapeConfigs = options.scrapeConfigs ?? [
    { job_name: 'trunk-exporter', static_configs: [{ targets: [options.scrapeTarget] }] },
  ];
  // JSON is YAML, and needs no quoting rules of its own.
  writeFileSync(
    configFile,
    JSON.stringify({
      global: {
        scrape_interval: interval,
        scrape_timeout: interval,
        evaluation_interval: interval,
      },
      rule_files: options.ruleFiles ?? [],
      scrape_configs: scrapeConfigs,
    }),
  );
  const port = await freeLoopbackPort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    options.binary,
    [
      `--config.file=${options.configFile ?? configFile}`,
      `--storage.tsdb.path=${join(directory, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
      ...(options.features ?? []).map((feature) => `--enable-feature=${feature}`),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let log = '';
  child.stdout.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      resolve();
    });
  });

  const running: RunningPrometheus = {
    url,
    log: () => log,
    async api(pathAndQuery) {
      const response = await fetch(`${url}${pathAndQuery}`);
      const body = (await response.json()) as { status: string; data?: unknown; error?: string };
      if (body.status !== 'success') {
        throw new Error(`${decodeURIComponent(pathAndQuery)}: ${body.error ?? 'failed'}`);
      }
      return body.data;
    },
    async query(expression, time) {
      const at = time === undefined ? '' : `&time=${String(time)}`;
      const data = (await running.api(
        `/api/v1/query?query=${encodeURIComponent(expression)}${at}`,
      )) as { result: InstantSample[] };
      return data.result;
    },
    async stop() {
      await stopChild(child, exited);
      rmSync(directory, { recursive: true, force: true });
      return log;
    },
  };
  try {
    await waitUntilReady(url, child);
  } catch (error) {
    await running.stop();
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${log}`, {
      cause: error,
    });
  }
  return running;
}

async function waitUntilReady(url: string, child: ChildProcess): Promise<void> {
  const deadline = performance.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prometheus exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/-/ready`)).ok) return;
    } catch {
      // not listening yet
    }
    if (performance.now() > deadline) throw new Error('prometheus did not become ready in 20s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}
