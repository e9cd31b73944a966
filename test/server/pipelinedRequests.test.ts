// Connections that pipeline requests and never read the answers. With nothing to stop them, 2,000
// GETs on each of 512 connections made the exporter answer 1,000,000 requests through Express
// (4 GB, unreachable for a minute). Now a connection that sends more than MAX_PIPELINED_REQUESTS
// in one burst is closed, and the rest of its read never becomes a request.
import type { RequestListener } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningHttpServer } from '../../src/server/index.js';
import { MAX_PIPELINED_REQUESTS } from '../../src/server/pipelinedRequests.js';
import { SnapshotStore } from '../../src/snapshot/store.js';
import { until } from '../faults/harness.js';
import { createTestHttpApp } from '../support/httpApp.js';

const HEALTHZ = 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The exporter's server over a fresh store; counts the requests its app was given. */
async function startCountingServer(): Promise<{
  running: RunningHttpServer;
  answered: () => number;
}> {
  const store = new SnapshotStore(600);
  store.setTargets([{ kind: 'merge_queue', repo: 'github.com/acme/web', branch: 'main' }]);
  const { app } = createTestHttpApp({ store });
  let answered = 0;
  const counting: RequestListener = (req, res) => {
    answered++;
    app(req, res);
  };
  const running = await startHttpServer(counting, '127.0.0.1', 0);
  cleanups.push(() => running.close());
  return { running, answered: () => answered };
}

interface PipeliningClient {
  readonly socket: Socket;
  received: string;
  closed: boolean;
}

/** A connection that writes `count` GETs /healthz at once; it reads only when `read` is true. */
function pipeline(url: string, count: number, read: boolean): Promise<PipeliningClient> {
  const { port } = new URL(url);
  const socket = connect(Number(port), '127.0.0.1');
  const client: PipeliningClient = { socket, received: '', closed: false };
  socket.on('error', () => undefined);
  socket.on('close', () => (client.closed = true));
  socket.on('data', (chunk: Buffer) => (client.received += chunk.toString()));
  cleanups.push(() => {
    socket.destroy();
  });
  return new Promise((resolve) => {
    socket.once('connect', () => {
      if (!read) socket.pause();
      socket.write(HEALTHZ.repeat(count));
      resolve(client);
    });
  });
}

function answers(client: PipeliningClient): number {
  return client.received.split('HTTP/1.1 200 OK').length - 1;
}

describe('pipelined requests', () => {
  it(`answers a client that pipelines ${MAX_PIPELINED_REQUESTS} requests and reads them`, async () => {
    const { running } = await startCountingServer();
    const client = await pipeline(running.url, MAX_PIPELINED_REQUESTS, true);
    await until(() => answers(client) === MAX_PIPELINED_REQUESTS, 'every answer');
    expect(client.closed).toBe(false);
  });

  it('closes connections that pipeline 2,000 requests unread, hands on no more of them, and serves a genuine client', async () => {
    const { running, answered } = await startCountingServer();
    // Every request Node.js hands on, before the app: the part of a read that reaches a listener.
    let handedOn = 0;
    running.server.prependListener('request', () => handedOn++);

    const hostile = await Promise.all(
      Array.from({ length: 32 }, () => pipeline(running.url, 2_000, false)),
    );
    await until(
      () => hostile.every((client) => client.closed),
      'every pipelining connection closed',
    );

    // At most the burst each connection may send reached the app; the rest of each read
    // (about 1,900 requests in one 64 KiB read) never became a request and its response.
    expect(answered()).toBeLessThanOrEqual(32 * MAX_PIPELINED_REQUESTS);
    expect(handedOn).toBeLessThanOrEqual(32 * (MAX_PIPELINED_REQUESTS + 1));
    const response = await fetch(`${running.url}/healthz`);
    expect([response.status, await response.text()]).toEqual([200, 'ok\n']);
  });
});
