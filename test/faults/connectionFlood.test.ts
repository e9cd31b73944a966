// Connections that take a file descriptor and never ask for anything (half-open, or a request line
// without its end: slowloris). With Node.js's defaults, 1,100 of them under `ulimit -n 1024` failed
// every scrape for minutes. Now the listener holds at most server.maxConnections, each newcomer in
// place of the connection idle longest, and sheds the ones it holds after headersTimeout: a real
// scrape gets through at once.
// One address reopening its connections as fast as they are shed holds at most
// server.maxConnectionsPerAddress of them, so every other client keeps room.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  startHttpServer,
  type ConnectionLimits,
  type RunningHttpServer,
} from '../../src/server/index.js';
import { SnapshotStore } from '../../src/snapshot/store.js';
import { CLI_BIN, startExporterProcess, type RunningCli } from '../support/cli.js';
import { configYaml, startFrozenSimulator, startTestExporter } from '../support/exporterHarness.js';
import { createTestHttpApp } from '../support/httpApp.js';
import { until } from './harness.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A client connection that sends nothing, or half a request line, and records how it ended. */
interface IdleConnection {
  readonly socket: Socket;
  /** What the server sent before closing it (a 408 once headersTimeout passed). */
  received: string;
  closed: boolean;
}

/** Opens `count` connections to `url`'s port, one after the other, every other one slowloris. */
async function openIdleConnections(url: string, count: number): Promise<IdleConnection[]> {
  const { hostname, port } = new URL(url);
  const connections: IdleConnection[] = [];
  for (let index = 0; index < count; index++) {
    const socket = connect(Number(port), hostname);
    const connection: IdleConnection = { socket, received: '', closed: false };
    socket.on('data', (chunk: Buffer) => (connection.received += chunk.toString()));
    socket.on('error', () => {});
    socket.on('close', () => (connection.closed = true));
    await new Promise<void>((resolve) => {
      socket.once('connect', () => {
        if (index % 2 === 1) socket.write('GET /metrics HTTP/1.1\r\nHost: x\r\n');
        resolve();
      });
      socket.once('close', () => {
        resolve();
      });
    });
    connections.push(connection);
  }
  cleanups.push(() => {
    for (const { socket } of connections) socket.destroy();
  });
  return connections;
}

/**
 * Counts, on the server's side, the connections it accepted and the most it held at once: one it
 * closed on arrival, or evicted for a newcomer, is closed before this listener (attached last) runs.
 */
function watchHeldConnections(running: RunningHttpServer): { accepted: number; most: number } {
  const watched = { accepted: 0, most: 0 };
  const open = new Set<Socket>();
  running.server.on('connection', (socket: Socket) => {
    watched.accepted++;
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    const held = [...open].filter((held) => !held.destroyed).length;
    watched.most = Math.max(watched.most, held);
  });
  return watched;
}

/** Scrapes until one succeeds; how many attempts failed first (connection closed on arrival). */
async function scrapeUntilServed(url: string): Promise<{ failedAttempts: number; text: string }> {
  let failedAttempts = 0;
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      const response = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(2_000) });
      if (response.status === 200) return { failedAttempts, text: await response.text() };
    } catch {
      // Closed as it arrived: the listener is full. Prometheus would try again next interval.
    }
    failedAttempts++;
    if (Date.now() > deadline) throw new Error(`no scrape served after ${failedAttempts} attempts`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('more idle connections than server.maxConnections', () => {
  it('holds at most the limit, each newcomer in place of the connection idle longest, serves a scrape at once, and sheds the rest after headersTimeout', async () => {
    const store = new SnapshotStore(600);
    store.setTargets([{ kind: 'merge_queue', repo: 'github.com/acme/web', branch: 'main' }]);
    const { app } = createTestHttpApp({ store });
    const running: RunningHttpServer = await startHttpServer(app, '127.0.0.1', 0, undefined, {
      maxConnections: 20,
      headersTimeoutMs: 2_000,
      requestTimeoutMs: 3_000,
      checkIntervalMs: 200,
    });
    cleanups.push(() => running.close());

    const held = watchHeldConnections(running);
    const idle = await openIdleConnections(running.url, 30);
    await until(() => held.accepted === 30, 'thirty connections arrived');
    // The first ten opened made room for the last ten, closed unanswered; on a busy machine some
    // may have been shed with a 408 first, which makes room too.
    await until(() => idle.slice(0, 10).every((c) => c.closed), 'the oldest ten closed');
    expect(held.most).toBe(20);
    expect(idle.slice(10).filter((c) => c.closed && c.received === '').length).toBeLessThan(20);

    // Served on the first attempt: it takes the place of the connection idle longest.
    const response = await fetch(`${running.url}/metrics`);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('trunk_exporter_build_info');
    // The held ones still without their headers are shed with a 408 once headersTimeout passed.
    await until(() => idle.every((c) => c.closed), 'every idle connection closed');
    // Ten closed for the later ten and one for the scrape, unanswered (fewer if a 408 made room
    // first); every other one was shed with a 408.
    const unanswered = idle.filter((c) => c.received === '').length;
    expect(unanswered).toBeLessThanOrEqual(11);
    expect(idle.filter((c) => c.received.startsWith('HTTP/1.1 408'))).toHaveLength(30 - unanswered);
  });

  it('keeps the built exporter scraping and polling under `ulimit -n 256` with 400 idle connections', async () => {
    const file = await writeConfigFile({
      polling: '  mergeQueueIntervalSeconds: 0.5',
      // The 400 come from one address: its cap is lifted, so server.maxConnections is what holds.
      server: '  maxConnections: 100\n  maxConnectionsPerAddress: 400',
    });
    const cli = startUnderFileLimit(256, file);
    const url = await cli.url;
    // 100 + 8 + 64 descriptors fit in 256: no warning.
    expect(cli.stdout()).not.toContain('open-file limit');

    const idle = await openIdleConnections(url, 400);
    // The exporter holds 100; each of the other 300 closed the one idle longest, before it runs
    // out. A scrape is served at once, perhaps before the first poll ended: scraped until it shows.
    await until(() => idle.filter((c) => c.closed).length >= 300, '300 connections closed');
    let text = '';
    while (!/^trunk_exporter_target_up\{[^}]*\} 1$/m.test(text)) {
      ({ text } = await scrapeUntilServed(url));
    }
    expect(cli.stdout()).not.toMatch(/EMFILE|too many open files/i);
  }, 30_000);

  it('warns at start when the open-file limit is below what the settings need', async () => {
    // The default server.maxConnections (512) does not fit in 256 descriptors.
    const file = await writeConfigFile({});
    const cli = startUnderFileLimit(256, file);
    await cli.url;
    const warning = cli
      .stdout()
      .split('\n')
      .filter((line) => line.includes('open-file limit'))
      .map((line) => JSON.parse(line) as { level: number; msg: string });
    expect(warning).toEqual([
      {
        ...warning[0],
        level: 40,
        msg:
          'the open-file limit (RLIMIT_NOFILE, ulimit -n) is 256, below the 584 that ' +
          'server.maxConnections (512) and trunk.maxConcurrentRequests (8) need with 64 to spare: ' +
          "raise it (ulimit -n, or the container runtime's nofile limit) or lower server.maxConnections",
      },
    ]);
  });
});

/**
 * A server of one queue holding 40 connections, 10 from one address, with `limits` besides; and the
 * most it held at once from 127.0.0.1.
 */
async function serveTenPerAddress(limits: Partial<ConnectionLimits> = {}) {
  const store = new SnapshotStore(600);
  store.setTargets([{ kind: 'merge_queue', repo: 'github.com/acme/web', branch: 'main' }]);
  const { app } = createTestHttpApp({ store });
  const running = await startHttpServer(app, '127.0.0.1', 0, undefined, {
    maxConnections: 40,
    maxConnectionsPerAddress: 10,
    ...limits,
  });
  cleanups.push(() => running.close());
  return { running, mostHeld: heldConnections(running, '127.0.0.1') };
}

describe('a reconnecting half-open flood from one address', () => {
  it('takes at most server.maxConnectionsPerAddress places: every scrape from another address is served', async () => {
    const { running, mostHeld } = await serveTenPerAddress({
      headersTimeoutMs: 300,
      requestTimeoutMs: 600,
      checkIntervalMs: 100,
    });

    // Sixty half-open connections from 127.0.0.1, each reopened as soon as it is closed: more than
    // maxConnections on their own.
    const flood = reconnectingFlood(running.url, 60);
    await until(() => flood.opened() >= 200, 'the flood to have reopened its connections');
    const openedBefore = flood.opened();
    const statuses: number[] = [];
    for (let scrape = 0; scrape < 20; scrape++) {
      statuses.push(await scrapeFrom(running.url, '127.0.0.2'));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const opened = flood.opened();
    flood.stop();

    expect(statuses).toEqual(Array<number>(20).fill(200));
    // The flood kept going all along (as fast as a busy machine lets it), and never held more than
    // its share.
    expect(opened).toBeGreaterThan(openedBefore);
    expect(mostHeld()).toBe(10);
  });

  it('serves every scrape from the flooding address itself, each in the place of a half-open connection of it', async () => {
    // configuration.md: more connections from one address take the places of that address's
    // connections that have waited longest on their clients.
    const { running, mostHeld } = await serveTenPerAddress();

    const flood = reconnectingFlood(running.url, 60);
    await until(() => flood.opened() >= 200, 'the flood to have reopened its connections');
    const statuses: number[] = [];
    for (let scrape = 0; scrape < 20; scrape++) {
      statuses.push(await scrapeFrom(running.url, '127.0.0.1'));
    }
    flood.stop();

    // Closed as they arrived, behind the flood's ten, the scrapes failed every time.
    expect(statuses).toEqual(Array<number>(20).fill(200));
    expect(mostHeld()).toBe(10);
  });

  it('is read from the config file', async () => {
    const { simulator } = await startFrozenSimulator();
    const subject = await startTestExporter(
      configYaml({
        apiUrl: simulator.baseUrl,
        targets: '  - repo: github.com/acme/web\n    branches: [main]',
        server: '  maxConnectionsPerAddress: 3',
      }),
    );
    const idle = await openIdleConnections(subject.exporter.url, 5);
    await until(() => idle.filter((c) => c.closed).length >= 2, 'two connections closed');
    const closed = idle.filter((c) => c.closed);
    // Closed as they arrived, unanswered: not shed with the 408 of a late request.
    expect(closed.map((c) => c.received)).toEqual(['', '']);
    expect(await scrapeFrom(subject.exporter.url, '127.0.0.2')).toBe(200);
  });
});

/** `GET /metrics` from the given local address on a connection of its own; its status, or 0 when it failed. */
function scrapeFrom(url: string, localAddress: string): Promise<number> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const scrape = request(
      { host: hostname, port, path: '/metrics', localAddress, agent: false, timeout: 2_000 },
      (response) => {
        response.resume();
        response.on('end', () => {
          resolve(response.statusCode ?? 0);
        });
      },
    );
    scrape.on('error', () => {
      resolve(0);
    });
    scrape.on('timeout', () => scrape.destroy());
    scrape.end();
  });
}

/**
 * `count` connections from 127.0.0.1 that send nothing, each reopened as soon as the server closes
 * it; counts how many were opened.
 */
function reconnectingFlood(url: string, count: number) {
  const { hostname, port } = new URL(url);
  let stopped = false;
  let opened = 0;
  const sockets = new Set<Socket>();
  const open = (): void => {
    if (stopped) return;
    opened++;
    const socket = connect({ host: hostname, port: Number(port), localAddress: '127.0.0.1' });
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => {
      sockets.delete(socket);
      setImmediate(open);
    });
  };
  for (let index = 0; index < count; index++) open();
  const stop = (): void => {
    stopped = true;
    for (const socket of sockets) socket.destroy();
  };
  cleanups.push(stop);
  return { opened: () => opened, stop };
}

/** The most connections from `address` the server held at once, as its own 'connection' events see them. */
function heldConnections(running: RunningHttpServer, address: string): () => number {
  const held = new Set<Socket>();
  let most = 0;
  running.server.on('connection', (socket: Socket) => {
    // Listeners that run first may have refused it already.
    if (socket.destroyed || !socket.remoteAddress?.endsWith(address)) return;
    held.add(socket);
    socket.once('close', () => held.delete(socket));
    // A connection whose place the newcomer took is destroyed already, its 'close' still to come.
    const open = [...held].filter((connection) => !connection.destroyed).length;
    most = Math.max(most, open);
  });
  return () => most;
}

/** A config file polling one queue of a fresh simulator, with these lines under the sections. */
async function writeConfigFile(lines: { polling?: string; server?: string }): Promise<string> {
  const { simulator } = await startFrozenSimulator();
  const directory = await mkdtemp(join(tmpdir(), 'trunk-exporter-fds-'));
  cleanups.push(() => rm(directory, { recursive: true, force: true }));
  const file = join(directory, 'config.yaml');
  await writeFile(
    file,
    configYaml({
      apiUrl: simulator.baseUrl,
      targets: '  - repo: github.com/acme/web\n    branches: [main]',
      ...lines,
    }),
  );
  return file;
}

/** The built command line on `file`, run by a shell that first sets `ulimit -n limit`. */
function startUnderFileLimit(limit: number, file: string): RunningCli {
  const cli = startExporterProcess('sh', [
    '-c',
    `ulimit -n ${limit} && exec "$0" "$@"`,
    process.execPath,
    CLI_BIN,
    '--config',
    file,
  ]);
  cleanups.push(async () => {
    cli.child.kill('SIGTERM');
    await cli.exit;
  });
  return cli;
}
