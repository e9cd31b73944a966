// Scrapes from one address while another floods the exporter with half-open connections, each
// reopened as soon as it is shed: the built exporter (bin/trunk-exporter.js) under `ulimit -n 1024`
// with its default connection settings. Prints how many scrapes failed and how many connections
// the flood opened. `npm run build && node scripts/bench/connectionFlood.ts [flood size]
// [scrapes] [repository root]`.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './built.ts';
import { idleExporterConfig } from './processes.ts';

const floodSize = Number(process.argv[2] ?? 600);
const scrapes = Number(process.argv[3] ?? 20);
const root = process.argv[4] ?? ROOT;
const port = 20_000 + Math.floor(Math.random() * 10_000);
const directory = mkdtempSync(join(tmpdir(), 'connection-flood-'));
const config = join(directory, 'config.yaml');
writeFileSync(config, idleExporterConfig(port));
const exporter = join(root, 'bin/trunk-exporter.js');
const child = spawn(
  'sh',
  ['-c', `ulimit -n 1024 && exec "$0" "$@"`, process.execPath, exporter, '--config', config],
  { stdio: 'ignore' },
);

/** `GET /metrics` from `localAddress` on a connection of its own: its status, or the error's code. */
function scrapeFrom(localAddress: string): Promise<string> {
  return new Promise((resolve) => {
    const scrape = request(
      { host: '127.0.0.1', port, path: '/metrics', localAddress, agent: false, timeout: 5_000 },
      (response) => {
        response.resume();
        response.on('end', () => {
          resolve(String(response.statusCode));
        });
      },
    );
    scrape.on('error', (error: NodeJS.ErrnoException) => {
      resolve(error.code ?? error.message);
    });
    scrape.on('timeout', () => {
      scrape.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' }));
    });
    scrape.end();
  });
}

let stopped = false;
let opened = 0;
const sockets = new Set<Socket>();
function open(): void {
  if (stopped) return;
  opened++;
  const socket = connect({ host: '127.0.0.1', port, localAddress: '127.0.0.1' });
  sockets.add(socket);
  socket.on('error', () => undefined);
  socket.on('close', () => {
    sockets.delete(socket);
    setImmediate(open);
  });
}

try {
  for (let tries = 0; (await scrapeFrom('127.0.0.2')) !== '200'; tries++) {
    if (tries > 100) throw new Error('the exporter did not start');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  for (let index = 0; index < floodSize; index++) open();
  const startedAt = Date.now();
  const outcomes = new Map<string, number>();
  for (let scrape = 0; scrape < scrapes; scrape++) {
    // Spread over the flood's cycles: connections are shed 5 s after they open.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const outcome = await scrapeFrom('127.0.0.2');
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  }
  const seconds = (Date.now() - startedAt) / 1000;
  console.log(
    `${floodSize} reconnecting half-open connections from 127.0.0.1, ${opened} opened in ` +
      `${seconds.toFixed(0)} s; ${scrapes} scrapes from 127.0.0.2: ` +
      Array.from(outcomes, ([outcome, count]) => `${count} x ${outcome}`).join(', '),
  );
} finally {
  stopped = true;
  for (const socket of sockets) socket.destroy();
  child.kill();
  rmSync(directory, { recursive: true, force: true });
}
