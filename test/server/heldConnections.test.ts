// The cap on the connections the server holds: at the cap a newcomer takes the place of the one
// idle longest. Refusing newcomers let slowloris connections from a few addresses, each reopened as
// soon as it was shed, hold every place: 59 of 60 genuine scrapes were reset.
import { EventEmitter } from 'node:events';
import { request, type RequestListener, type ServerResponse } from 'node:http';
import { connect, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HeldConnections } from '../../src/server/heldConnections.js';
import { startHttpServer, type RunningHttpServer } from '../../src/server/index.js';
import { SnapshotStore } from '../../src/snapshot/store.js';
import { until } from '../faults/harness.js';
import { createTestHttpApp } from '../support/httpApp.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Long enough that only the cap, not the header timeout, frees a place during a test. */
const LIMITS = {
  maxConnections: 20,
  maxConnectionsPerAddress: 8,
  headersTimeoutMs: 60_000,
  requestTimeoutMs: 60_000,
};

async function start(app: RequestListener): Promise<RunningHttpServer> {
  const running = await startHttpServer(app, '127.0.0.1', 0, undefined, LIMITS);
  cleanups.push(() => {
    running.server.closeAllConnections();
    return running.close();
  });
  return running;
}

function exporterApp(): RequestListener {
  const store = new SnapshotStore(600);
  store.setTargets([{ kind: 'merge_queue', repo: 'github.com/acme/web', branch: 'main' }]);
  return createTestHttpApp({ store }).app;
}

/** The most connections the server held at once; one it closed on arrival or evicted is destroyed. */
function mostHeld(running: RunningHttpServer): () => number {
  const open = new Set<Socket>();
  let most = 0;
  running.server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    most = Math.max(most, [...open].filter((held) => !held.destroyed).length);
  });
  return () => most;
}

/**
 * `perAddress` connections from each of `addresses` that send half a request's headers and never
 * the rest, each reopened as soon as the server closes it.
 */
function slowlorisFlood(url: string, addresses: readonly string[], perAddress: number) {
  const { port } = new URL(url);
  let stopped = false;
  let opened = 0;
  const sockets = new Set<Socket>();
  const open = (localAddress: string): void => {
    if (stopped) return;
    opened++;
    const socket = connect({ host: '127.0.0.1', port: Number(port), localAddress });
    sockets.add(socket);
    socket.on('connect', () => socket.write('GET /metrics HTTP/1.1\r\nHost: x\r\nX-a: a'));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      sockets.delete(socket);
      setImmediate(open, localAddress);
    });
  };
  for (const address of addresses) for (let index = 0; index < perAddress; index++) open(address);
  const stop = (): void => {
    stopped = true;
    for (const socket of sockets) socket.destroy();
  };
  cleanups.push(stop);
  return { opened: () => opened, stop };
}

/** `GET path` from 127.0.0.1 on a connection of its own: the status, or 0 when it failed. */
function get(url: string, path: string): Promise<number> {
  const { port } = new URL(url);
  return new Promise((resolve) => {
    const outgoing = request(
      { host: '127.0.0.1', port, path, localAddress: '127.0.0.1', agent: false, timeout: 5_000 },
      (response) => {
        response.resume();
        response.on('end', () => {
          resolve(response.statusCode ?? 0);
        });
        // A page cut off by the server closing the connection never ends.
        response.on('error', () => {
          resolve(0);
        });
      },
    );
    outgoing.on('error', () => {
      resolve(0);
    });
    outgoing.on('timeout', () => outgoing.destroy());
    outgoing.end();
  });
}

describe('at server.maxConnections', () => {
  it('serves every genuine scrape while slowloris connections from several addresses hold every place', async () => {
    const running = await start(exporterApp());
    const most = mostHeld(running);
    // Three addresses at their cap of 8 would hold 24 places, more than the 20 there are.
    const flood = slowlorisFlood(running.url, ['127.0.0.2', '127.0.0.3', '127.0.0.4'], 8);
    await until(() => flood.opened() >= 100, 'the flood to have reopened its connections');

    const statuses: number[] = [];
    for (let scrape = 0; scrape < 20; scrape++) statuses.push(await get(running.url, '/metrics'));
    flood.stop();

    expect(statuses).toEqual(Array<number>(20).fill(200));
    expect(most()).toBe(20);
  });

  it('never closes a connection with a request in flight: a newcomer is closed instead', async () => {
    const waiting: ServerResponse[] = [];
    const running = await start((_req, res) => {
      waiting.push(res);
    });
    // 20 requests from 127.0.0.1 under a per-address cap of 8 would be refused: lifted.
    running.setMaxConnectionsPerAddress(100);
    const answers = Array.from({ length: 20 }, () => get(running.url, '/'));
    await until(() => waiting.length === 20, 'twenty requests in flight');

    const { port } = new URL(running.url);
    const newcomer = connect(Number(port), '127.0.0.1');
    newcomer.on('error', () => undefined);
    let newcomerClosed = false;
    // Either the newcomer is closed, or (the fault this pins) a request in flight lost its place.
    await Promise.race([
      new Promise((resolve) => newcomer.once('close', resolve)).then(() => (newcomerClosed = true)),
      ...answers,
    ]);

    for (const res of waiting) res.end('done\n');
    expect(await Promise.all(answers)).toEqual(Array<number>(20).fill(200));
    expect(newcomerClosed).toBe(true);
  });
});

describe('at server.maxConnections, with clients that stop reading', () => {
  /** Larger than what the kernel's socket buffers take on loopback, so a response that is not read stays unsent. */
  const PAGE = Buffer.alloc(32 * 1024 * 1024, 'x');
  const ADDRESSES = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];

  /**
   * `perAddress` connections from each of `addresses` that send a whole request and never read a
   * byte of the answer (so never learn that the server closed them), and with `everyMs` one more
   * from each address every `everyMs`, for as long as the test runs.
   */
  function nonReaders(
    url: string,
    addresses: readonly string[],
    perAddress: number,
    everyMs?: number,
  ): void {
    const { port } = new URL(url);
    const sockets: Socket[] = [];
    const open = (localAddress: string): void => {
      const socket = connect({ host: '127.0.0.1', port: Number(port), localAddress });
      socket.on('error', () => undefined);
      socket.on('connect', () => {
        socket.write('GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n');
        socket.pause();
      });
      sockets.push(socket);
    };
    for (const address of addresses) for (let index = 0; index < perAddress; index++) open(address);
    const more =
      everyMs === undefined
        ? undefined
        : setInterval(() => {
            for (const address of addresses) open(address);
            // Older ones than the newest three times the server's places were closed by the server
            // long before; each still holds megabytes of kernel buffers at both ends, and some
            // hundred of them put the machine's TCP memory under pressure, which stalls every
            // connection on it, a scrape's too.
            while (sockets.length > 3 * LIMITS.maxConnections) sockets.shift()?.destroy();
          }, everyMs);
    cleanups.push(() => {
      clearInterval(more);
      for (const socket of sockets) socket.destroy();
    });
  }

  /** A server answering PAGE, every place of it held by a non-reader from one of `ADDRESSES`. */
  async function startFullOfNonReaders(): Promise<RunningHttpServer> {
    let answering = 0;
    const running = await start((_req, res) => {
      answering++;
      res.end(PAGE);
    });
    // Three addresses at their cap of 8 would hold 24 places, more than the 20 there are.
    nonReaders(running.url, ADDRESSES, 8);
    await until(
      () => answering >= 20,
      'twenty pages being sent into clients that do not read them',
    );
    return running;
  }

  it('serves a genuine scrape while connections from several addresses hold every place without reading their pages', async () => {
    const running = await startFullOfNonReaders();

    const status = await get(running.url, '/metrics');

    // Without the fix the newcomer is closed as it arrives (0) for the 60 s the non-readers may stall.
    expect(status).toBe(200);
  });

  it('serves genuine scrapes one after another while non-readers keep arriving', async () => {
    const running = await startFullOfNonReaders();
    // One more non-reader from each address every 100 ms: each is a newcomer at the cap, and takes
    // the place of the connection whose page has waited unread longest.
    nonReaders(running.url, ADDRESSES, 0, 100);

    const statuses: number[] = [];
    for (let scrape = 0; scrape < 10; scrape++) statuses.push(await get(running.url, '/metrics'));

    // A scrape reads its page as it comes, so it is never the one whose page has waited longest,
    // however long it takes to read (a cut-off page is 0).
    expect(statuses).toEqual(Array<number>(10).fill(200));
    // Each scrape reads 32 MiB while 30 newcomers a second get as much: on a machine at load 10 on
    // 2 cores that took up to 6 s a scrape, so ten ran past the default 30 s.
  }, 120_000);
});

describe('which held connection a newcomer replaces', () => {
  // configuration.md (server.maxConnections): a newcomer takes the place of a connection whose
  // answer its client leaves unread, never of one whose answer is still being worked on.

  /** A socket as HeldConnections sees one: its peer, its unsent bytes, and whether it was closed. */
  class FakeSocket extends EventEmitter {
    destroyed = false;
    writableLength = 0;
    writableNeedDrain = false;
    readonly remoteAddress = '127.0.0.1';
    constructor(readonly remotePort: number) {
      super();
    }
    destroy(): void {
      this.destroyed = true;
      this.emit('close');
    }
  }

  it('replaces one whose last few answer bytes wait unread, below the buffer mark, and not one still being answered', () => {
    const server = new EventEmitter();
    new HeldConnections(2, 2).attach(server as unknown as Server);
    const connect = (port: number): FakeSocket => {
      const socket = new FakeSocket(port);
      server.emit('connection', socket);
      return socket;
    };
    const unread = connect(1);
    server.emit('request', { socket: unread }, new EventEmitter());
    const answering = connect(2);
    server.emit('request', { socket: answering }, new EventEmitter());
    // The last piece of a page handed over in pieces, unread: fewer bytes than the buffer's mark.
    unread.writableLength = 14_000;

    const newcomer = connect(3);

    expect([unread.destroyed, answering.destroyed, newcomer.destroyed]).toEqual([
      true,
      false,
      false,
    ]);
  });
});
