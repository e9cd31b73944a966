// Scrapes /metrics over TLS every 100 ms from 127.0.0.2 (one keep-alive connection, as Prometheus
// keeps it) while another process floods the exporter from 127.0.0.1 with new TLS connections:
// full handshakes (no session resumption), or a ClientHello and nothing more (the server still makes
// its key exchange and signs). The built exporter (bin/trunk-exporter.js) with an RSA 2048 and an
// ECDSA P-256 certificate made by openssl, with server.maxTlsConnectionsPerAddressPerSecond at its
// default and at a million (no bound). Prints the scrapes' median and p99, the exporter's CPU and how
// the flood's connections went, for each certificate, bound and flood.
// `npm run build && node scripts/bench/tlsHandshakeFlood.ts [flood loops] [seconds per phase]`.
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { connect as connectTcp, createServer as createTcpServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { connect as connectTls } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { ROOT } from './built.ts';
import { freePort, idleExporterConfig, stopChild, temporaryDirectory } from './processes.ts';
import { format, median, progress, table } from './stats.ts';

type FloodKind = 'full' | 'hello';

/** What one flood did: connections it opened, and those the server answered (a handshake's reply). */
interface FloodOutcome {
  readonly opened: number;
  readonly answered: number;
}

/** The bytes of one ClientHello, as Node's TLS client sends it to 127.0.0.1. */
function captureClientHello(): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const recorder = createTcpServer((socket) => {
      socket.once('data', (chunk: Buffer) => {
        socket.destroy();
        recorder.close();
        resolve(chunk);
      });
    });
    recorder.listen(0, '127.0.0.1', () => {
      const address = recorder.address();
      if (address === null || typeof address === 'string') {
        reject(new Error('no port'));
        return;
      }
      const client = connectTls({
        host: '127.0.0.1',
        port: address.port,
        rejectUnauthorized: false,
      });
      client.on('error', () => undefined);
    });
  });
}

/** Runs `loops` flood loops against `port` for `seconds`, each reconnecting as its last ends. */
async function flood(kind: FloodKind, loops: number, port: number, seconds: number): Promise<void> {
  const hello = kind === 'hello' ? await captureClientHello() : undefined;
  let stopped = false;
  let opened = 0;
  let answered = 0;
  const sockets = new Set<Socket>();
  const open = (): void => {
    if (stopped) return;
    opened++;
    const base = { host: '127.0.0.1', port, localAddress: '127.0.0.1' };
    const socket =
      hello === undefined
        ? connectTls({ ...base, rejectUnauthorized: false }, () => {
            answered++;
            socket.destroy();
          })
        : connectTcp(base, () => {
            socket.write(hello);
          });
    // The server's first bytes in answer to a bare ClientHello: it has made its key share and signed.
    if (hello !== undefined) {
      socket.once('data', () => {
        answered++;
        socket.destroy();
      });
    }
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      sockets.delete(socket);
      setImmediate(open);
    });
  };
  for (let index = 0; index < loops; index++) open();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  stopped = true;
  for (const socket of sockets) socket.destroy();
  const outcome: FloodOutcome = { opened, answered };
  process.stdout.write(JSON.stringify(outcome));
}

/** The exporter's user + system CPU so far, in seconds (Linux /proc). */
function cpuSeconds(pid: number): number {
  const fields =
    readFileSync(`/proc/${String(pid)}/stat`, 'utf8')
      .split(') ')[1]
      ?.split(' ') ?? [];
  // utime and stime, the 14th and 15th fields, in clock ticks of 1/100 s.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** One scrape over `agent`'s kept connection: its time in ms, or the error's code. */
function scrape(port: number, agent: Agent): Promise<number | string> {
  const startedAt = performance.now();
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/metrics',
        localAddress: '127.0.0.2',
        agent,
        rejectUnauthorized: false,
        timeout: 5_000,
      },
      (response) => {
        response.resume();
        response.on('end', () => {
          resolve(
            response.statusCode === 200
              ? performance.now() - startedAt
              : String(response.statusCode),
          );
        });
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => {
      resolve(error.code ?? error.message);
    });
    req.on('timeout', () => {
      req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' }));
    });
    req.end();
  });
}

/** Scrapes every 100 ms for `seconds`: the times of the answered ones and the failures. */
async function scrapeEvery100Ms(port: number, seconds: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const times: number[] = [];
  const failures: string[] = [];
  const endAt = Date.now() + seconds * 1000;
  while (Date.now() < endAt) {
    const startedAt = Date.now();
    const outcome = await scrape(port, agent);
    if (typeof outcome === 'number') times.push(outcome);
    else failures.push(outcome);
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, 100 - (Date.now() - startedAt))),
    );
  }
  agent.destroy();
  return { times, failures };
}

function percentile(values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)] ?? Number.NaN;
}

/** Starts a flood in a process of its own, so its own handshakes do not delay the scraper. */
function startFlood(kind: FloodKind, loops: number, port: number, seconds: number) {
  const child = spawn(
    process.execPath,
    [fileURLToPath(import.meta.url), 'flood', kind, String(loops), String(port), String(seconds)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise<FloodOutcome>((resolve, reject) => {
    child.once('exit', () => {
      try {
        resolve(JSON.parse(output) as FloodOutcome);
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  });
}

const CERTIFICATE_KEYS = {
  'RSA 2048': ['-newkey', 'rsa:2048'],
  'ECDSA P-256': ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'],
};

/** The bound's default, and one no flood reaches. */
const RATES = [10, 1_000_000];

/** Rows of the table for one certificate and rate: no flood, full handshakes, ClientHellos. */
async function measureExporter(
  directory: string,
  name: keyof typeof CERTIFICATE_KEYS,
  rate: number,
  loops: number,
  seconds: number,
): Promise<string[][]> {
  const cert = join(directory, 'tls.crt');
  const key = join(directory, 'tls.key');
  const subject = ['-nodes', '-days', '1', '-subj', '/CN=localhost'];
  const names = ['-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', key, '-out', cert];
  execFileSync('openssl', ['req', '-x509', ...CERTIFICATE_KEYS[name], ...subject, ...names], {
    stdio: 'ignore',
  });
  const port = await freePort();
  const config = join(directory, 'config.yaml');
  const tlsLines = ['  tls:', `    certFile: ${cert}`, `    keyFile: ${key}`];
  const rateLine = `  maxTlsConnectionsPerAddressPerSecond: ${String(rate)}`;
  writeFileSync(config, idleExporterConfig(port, [rateLine, ...tlsLines]));
  const exporter = spawn(
    process.execPath,
    [join(ROOT, 'bin/trunk-exporter.js'), '--config', config],
    {
      stdio: 'ignore',
    },
  );
  const rows: string[][] = [];
  try {
    for (let tries = 0; typeof (await scrape(port, new Agent())) !== 'number'; tries++) {
      if (tries > 100) throw new Error('the exporter did not start');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const pid = exporter.pid ?? 0;
    for (const kind of [undefined, 'full', 'hello'] as const) {
      progress(`${name}, ${format(rate)}/s: ${kind ?? 'no'} flood`);
      const cpuBefore = cpuSeconds(pid);
      const floodDone = kind === undefined ? undefined : startFlood(kind, loops, port, seconds);
      const { times, failures } = await scrapeEvery100Ms(port, seconds);
      const outcome = await floodDone;
      const cpu = (cpuSeconds(pid) - cpuBefore) / seconds;
      const flood =
        kind === undefined
          ? 'none'
          : `${String(loops)} loops of ${kind === 'full' ? 'full handshakes' : 'ClientHellos'}`;
      const connections =
        outcome === undefined
          ? '—'
          : `${format(outcome.opened / seconds)}/s opened, ${format(outcome.answered / seconds)}/s answered`;
      rows.push([
        name,
        `${format(rate)}/s`,
        flood,
        connections,
        `${format(times.length)} (${format(failures.length)} failed)`,
        `${format(median(times), 1)} ms`,
        `${format(percentile(times, 0.99), 1)} ms`,
        `${format(cpu * 100)} %`,
      ]);
    }
  } finally {
    await stopChild(exporter);
  }
  return rows;
}

async function measure(loops: number, seconds: number): Promise<void> {
  const directory = temporaryDirectory('tls-flood');
  const rows: string[][] = [];
  try {
    for (const name of Object.keys(CERTIFICATE_KEYS) as (keyof typeof CERTIFICATE_KEYS)[]) {
      for (const rate of RATES)
        rows.push(...(await measureExporter(directory, name, rate, loops, seconds)));
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  const header = ['certificate', 'new TLS connections per address', 'flood from 127.0.0.1'];
  console.log(
    table([...header, 'flood connections', 'scrapes', 'median', 'p99', 'exporter CPU'], rows),
  );
}

if (process.argv[2] === 'flood') {
  const [kind, loops, port, seconds] = process.argv.slice(3);
  await flood(kind === 'hello' ? 'hello' : 'full', Number(loops), Number(port), Number(seconds));
} else {
  await measure(Number(process.argv[2] ?? 8), Number(process.argv[3] ?? 10));
}
