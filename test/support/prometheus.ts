// Runs a real Prometheus server scraping one target every 200 ms, for tests that must prove a page
// parses where it matters; stopped and its data directory removed after the test.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';

const running: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of running.splice(0)) await stop();
});

/** A running Prometheus and how to ask it things. */
export interface RunningPrometheus {
  readonly url: string;
  /** Result of an instant query (`data.result` of /api/v1/query). */
  query(expression: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts `binary` scraping `target` (host:port, path /metrics) and resolves once it is ready. */
export async function startPrometheus(binary: string, target: string): Promise<RunningPrometheus> {
  const directory = await mkdtemp(join(tmpdir(), 'trunk-exporter-prometheus-'));
  const config = [
    'global:',
    '  scrape_interval: 200ms',
    '  scrape_timeout: 200ms',
    'scrape_configs:',
    '  - job_name: trunk-exporter',
    '    static_configs:',
    `      - targets: ['${target}']`,
  ].join('\n');
  await writeFile(join(directory, 'prometheus.yml'), config);
  const port = await freePort();
  let output = '';
  const child: ChildProcess = spawn(
    binary,
    [
      `--config.file=${join(directory, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(directory, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      resolve();
    }),
  );
  running.push(async () => {
    child.kill('SIGTERM');
    await exited;
    await rm(directory, { recursive: true, force: true });
  });

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prometheus exited early:\n${output}`);
    const ready = await fetch(`${url}/-/ready`).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) throw new Error(`prometheus never became ready:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    async query(expression) {
      const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expression)}`);
      const body = (await response.json()) as {
        status: string;
        data?: { result: { metric: Record<string, string>; value: [number, string] }[] };
        error?: string;
      };
      if (body.status !== 'success' || body.data === undefined) {
        throw new Error(`query ${expression} failed: ${body.error ?? response.statusText}`);
      }
      return body.data.result;
    },
  };
}
