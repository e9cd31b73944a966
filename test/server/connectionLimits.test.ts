// The listener's connection limits: the defaults the exporter serves with, the TLS handshake's own
// timeout, and reading the open-file limit that the limits must fit in.
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Secret } from '../../src/secrets/secret.js';
import { startHttpServer, type RunningHttpServer } from '../../src/server/index.js';
import { DEFAULT_CONNECTION_LIMITS } from '../../src/server/httpServer.js';
import {
  descriptorsNeeded,
  parseOpenFileLimit,
  readOpenFileLimit,
} from '../../src/server/openFileLimit.js';
import { SnapshotStore } from '../../src/snapshot/store.js';
import { createTestHttpApp } from '../support/httpApp.js';

const tlsDirectory = join(import.meta.dirname, '..', 'fixtures', 'tls');

let running: RunningHttpServer | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

function testApp() {
  const store = new SnapshotStore(600);
  store.setTargets([{ kind: 'merge_queue', repo: 'github.com/acme/web', branch: 'main' }]);
  return createTestHttpApp({ store }).app;
}

describe('startHttpServer', () => {
  it('sheds a connection without its request headers after 5 s by default', async () => {
    running = await startHttpServer(testApp(), '127.0.0.1', 0);
    const { server } = running;
    expect({
      headersTimeout: server.headersTimeout,
      requestTimeout: server.requestTimeout,
    }).toEqual({ headersTimeout: 5_000, requestTimeout: 10_000 });
    // Node.js's own cap would close a newcomer before HeldConnections could make room for it.
    expect(server.maxConnections).toBeUndefined();
    expect(DEFAULT_CONNECTION_LIMITS.maxConnections).toBe(512);
  });

  it('closes a connection that stops reading its answer, once nothing has moved on it for stalledMs', async () => {
    // An answer far larger than the kernel's socket buffers: writing it stalls when no one reads.
    const page = Buffer.alloc(64 * 1024 * 1024, 'a');
    running = await startHttpServer(
      (_request, response) => {
        response.end(page);
      },
      '127.0.0.1',
      0,
      undefined,
      { stalledMs: 300 },
    );
    expect(DEFAULT_CONNECTION_LIMITS.stalledMs).toBe(60_000);
    const { port } = new URL(running.url);
    const socket = connect(Number(port), '127.0.0.1');
    socket.on('error', () => {});
    socket.pause();
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    const { server } = running;
    const held = () =>
      new Promise<number>((resolve, reject) => {
        server.getConnections((error, count) => {
          if (error) reject(error);
          else resolve(count);
        });
      });
    // The client reads nothing, so only the server can end it: poll its count of connections,
    // held once the answer has begun.
    let count = await held();
    for (let waited = 0; count === 0 && waited < 2_000; waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      count = await held();
    }
    expect(count).toBe(1);
    for (let waited = 0; count > 0 && waited < 5_000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      count = await held();
    }
    socket.destroy();
    expect(count).toBe(0);
  });

  it('sheds a TLS connection that never starts its handshake after headersTimeout', async () => {
    running = await startHttpServer(
      testApp(),
      '127.0.0.1',
      0,
      {
        certFile: 'server.crt',
        keyFile: 'server.key',
        cert: readFileSync(join(tlsDirectory, 'server.crt'), 'utf8'),
        key: new Secret(readFileSync(join(tlsDirectory, 'server.key'), 'utf8')),
      },
      { headersTimeoutMs: 300, requestTimeoutMs: 600, checkIntervalMs: 100 },
    );
    const { port } = new URL(running.url);
    const socket = connect(Number(port), '127.0.0.1');
    socket.on('error', () => {});
    // Closed by the server well before Node.js's default handshake timeout of 120 s.
    await new Promise<void>((resolve) =>
      socket.once('close', () => {
        resolve();
      }),
    );
    expect(socket.bytesRead).toBe(0);
  });
});

describe('the open-file limit', () => {
  it('is the soft limit of the "Max open files" row', () => {
    const limits = [
      'Limit                     Soft Limit           Hard Limit           Units     ',
      'Max processes             127473               127473               processes ',
      'Max open files            1024                 524288               files     ',
      'Max locked memory         8388608              8388608              bytes     ',
    ].join('\n');
    expect(parseOpenFileLimit(limits)).toBe(1024);
    expect(parseOpenFileLimit(limits.replace('1024 ', 'unlimited '))).toBe(Infinity);
    expect(parseOpenFileLimit('Max processes 10 10 processes')).toBeUndefined();
  });

  it('is read from /proc/self/limits, and unknown without it', () => {
    if (process.platform === 'linux') expect(readOpenFileLimit()).toBeGreaterThan(0);
    expect(readOpenFileLimit('/nonexistent/limits')).toBeUndefined();
  });

  it('must fit the server connections, the Trunk connections and 64 more', () => {
    expect(descriptorsNeeded({ maxConnections: 512, maxConcurrentRequests: 4 })).toBe(580);
  });
});
