// The two servers the exporter's /metrics is compared with, each run as a child on a free loopback
// port: nginx serving the page as a static file, and node_exporter's textfile collector.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import {
  freePort,
  startChild,
  temporaryDirectory,
  waitForOk,
  type RunningChild,
} from './processes.ts';
import { requireBinary } from './wrk.ts';

/** A started comparison server: where its page is, and how to stop it. */
export type RunningPageServer = RunningChild & { readonly url: string };

/**
 * nginx with one worker (the exporter's JavaScript runs on one thread too), `sendfile`, and the
 * gzip form precompressed beside the file (`gzip_static`), as the exporter keeps it cached: neither
 * side compresses per request.
 */
export async function startNginx(page: Buffer, gzipped: Buffer): Promise<RunningPageServer> {
  const nginx = requireBinary('/usr/sbin/nginx', 'nginx-light');
  const prefix = temporaryDirectory('nginx');
  const root = join(prefix, 'www');
  mkdirSync(root);
  writeFileSync(join(root, 'metrics'), page);
  writeFileSync(join(root, 'metrics.gz'), gzipped);
  // The worker runs as nobody: it must be able to read the files.
  for (const path of [prefix, root]) chmodSync(path, 0o755);
  const port = await freePort();
  writeFileSync(
    join(prefix, 'nginx.conf'),
    [
      'daemon off;',
      'worker_processes 1;',
      `pid ${join(prefix, 'nginx.pid')};`,
      `error_log ${join(prefix, 'error.log')} warn;`,
      'events { worker_connections 1024; }',
      'http {',
      '  access_log off;',
      '  sendfile on;',
      '  tcp_nopush on;',
      '  keepalive_requests 1000000;',
      `  server {`,
      `    listen 127.0.0.1:${port};`,
      `    root ${root};`,
      '    location = /metrics {',
      '      gzip_static on;',
      '      gzip_vary on;',
      '      types { }',
      '      default_type "text/plain; version=0.0.4; charset=utf-8";',
      '    }',
      '  }',
      '}',
      '',
    ].join('\n'),
  );
  const running = await startChild(nginx, [
    '-p',
    prefix,
    '-c',
    join(prefix, 'nginx.conf'),
    '-e',
    join(prefix, 'error.log'),
  ]);
  return ready(running, `http://127.0.0.1:${port}/metrics`);
}

/** A bare node:http server answering with the same bytes (scripts/bench/nodeHttpServer.ts). */
export async function startNodeHttp(page: Buffer, gzipped: Buffer): Promise<RunningPageServer> {
  const directory = temporaryDirectory('node-http');
  const pagePath = join(directory, 'metrics');
  const gzipPath = join(directory, 'metrics.gz');
  writeFileSync(pagePath, page);
  writeFileSync(gzipPath, gzipped);
  const running = await startChild(
    process.execPath,
    ['scripts/bench/nodeHttpServer.ts', pagePath, gzipPath],
    { ready: /READY (\S+)/ },
  );
  return ready(running, running.match[1] ?? '');
}

/**
 * node_exporter with only the textfile collector, reading the page from a `.prom` file: what a user
 * might wire up with a cron job writing the file. It parses and re-renders the file on every scrape.
 */
export async function startNodeExporter(page: Buffer): Promise<RunningPageServer> {
  const binary = requireBinary('/usr/bin/prometheus-node-exporter', 'prometheus-node-exporter');
  const directory = temporaryDirectory('textfile');
  writeFileSync(join(directory, 'trunk.prom'), page);
  const port = await freePort();
  const running = await startChild(binary, [
    `--web.listen-address=127.0.0.1:${port}`,
    '--collector.disable-defaults',
    '--collector.textfile',
    `--collector.textfile.directory=${directory}`,
    // Its own Go and process metrics would collide with the page's process_* families.
    '--web.disable-exporter-metrics',
  ]);
  return ready(running, `http://127.0.0.1:${port}/metrics`);
}

async function ready(running: RunningChild, url: string): Promise<RunningPageServer> {
  try {
    await waitForOk(url, 30_000);
  } catch (error) {
    await running.stop();
    throw error;
  }
  return { ...running, url };
}

/** A GET that returns the bytes as sent (fetch would decompress them). */
export function rawGet(
  url: string,
  headers: Readonly<Record<string, string>> = {},
): Promise<{
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: Buffer.concat(chunks),
        });
      });
      response.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
