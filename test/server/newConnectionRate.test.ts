// New TLS connections per client address: each costs the server a handshake (a key exchange and a
// signature) on its one thread before any request, so a client opening them in a loop took the CPU
// from every other (docs/benchmarks.md, TLS handshake flood). The rate's bucket by hand, then a real
// flood of handshakes from 127.0.0.1 against the real server while a scraper on 127.0.0.2 is served.
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { connect as netConnect } from 'node:net';
import { join } from 'node:path';
import { connect as tlsConnect, TLSSocket } from 'node:tls';
import { Counter } from 'prom-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { registerConnectionMetrics } from '../../src/metrics/connectionMetrics.js';
import { createRegistry } from '../../src/metrics/registry.js';
import { Secret } from '../../src/secrets/secret.js';
import { startHttpServer, type RunningHttpServer } from '../../src/server/index.js';
import { MAX_RATE_ADDRESSES, NewConnectionRate } from '../../src/server/newConnectionRate.js';
import { SnapshotStore } from '../../src/snapshot/store.js';
import { createTestHttpApp } from '../support/httpApp.js';

const tlsDirectory = join(import.meta.dirname, '..', 'fixtures', 'tls');
const cert = readFileSync(join(tlsDirectory, 'server.crt'), 'utf8');
const key = readFileSync(join(tlsDirectory, 'server.key'), 'utf8');

describe('NewConnectionRate', () => {
  it('admits a burst of twice the rate, then one per 1/rate seconds, per address', () => {
    // configuration.md: "new TLS connections one client address may open a second, with a burst of
    // twice that".
    let now = 1_000_000;
    const rate = new NewConnectionRate(2, () => now);
    const first = ['a', 'a', 'a', 'a', 'a'].map((address) => rate.admits(address));
    expect(first).toEqual([true, true, true, true, false]);
    // Another address has its own bucket.
    expect(rate.admits('b')).toBe(true);
    now += 499;
    expect(rate.admits('a')).toBe(false);
    now += 1;
    expect(rate.admits('a')).toBe(true);
    expect(rate.admits('a')).toBe(false);
    // A long quiet spell refills to the burst, never beyond.
    now += 60_000;
    const later = ['a', 'a', 'a', 'a', 'a'].map((address) => rate.admits(address));
    expect(later).toEqual([true, true, true, true, false]);
  });

  it('remembers at most MAX_RATE_ADDRESSES addresses, forgetting the least recently seen', () => {
    const now = 0;
    const rate = new NewConnectionRate(1, () => now);
    expect(rate.admits('first')).toBe(true);
    expect(rate.admits('first')).toBe(true);
    expect(rate.admits('first')).toBe(false);
    for (let index = 0; index < MAX_RATE_ADDRESSES; index++) rate.admits(`10.0.${String(index)}`);
    expect(rate.addresses).toBe(MAX_RATE_ADDRESSES);
    // Forgotten: its next connection finds a full bucket.
    expect(rate.admits('first')).toBe(true);
    expect(rate.addresses).toBe(MAX_RATE_ADDRESSES);
  });
});

describe('a flood of TLS handshakes from one address', () => {
  let running: RunningHttpServer | undefined;
  afterEach(async () => {
    vi.useRealTimers();
    await running?.close();
    running = undefined;
  });

  async function startTlsServer(maxTlsConnectionsPerAddressPerSecond: number) {
    const store = new SnapshotStore(600);
    store.setTargets([{ kind: 'merge_queue', repo: 'github.com/acme/web', branch: 'main' }]);
    const { app } = createTestHttpApp({ store });
    const registry = createRegistry({ defaultMetrics: false });
    const observer = registerConnectionMetrics(registry, true);
    const tls = { certFile: 'server.crt', keyFile: 'server.key', cert, key: new Secret(key) };
    running = await startHttpServer(
      app,
      '127.0.0.1',
      0,
      tls,
      { maxTlsConnectionsPerAddressPerSecond },
      observer,
    );
    const port = Number(new URL(running.url).port);
    const counted = async (): Promise<number> => {
      const metric = registry.getSingleMetric('trunk_exporter_tls_connections_rate_limited_total');
      if (!(metric instanceof Counter)) throw new Error('no counter');
      return (await metric.get()).values[0]?.value ?? Number.NaN;
    };
    return { port, counted, server: running };
  }

  /** A full handshake on a new connection from `localAddress`: whether it completed. */
  function handshake(port: number, localAddress: string): Promise<boolean> {
    return new Promise((resolve) => {
      const tcp = netConnect({ host: '127.0.0.1', port, localAddress });
      tcp.on('error', () => undefined);
      const socket = tlsConnect({ socket: tcp, host: '127.0.0.1', ca: cert }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => {
        socket.destroy();
        resolve(false);
      });
    });
  }

  /** GET /metrics from `localAddress` over `agent`: its status, and whether its session was resumed. */
  function scrape(port: number, agent: Agent): Promise<{ status: number; resumed: boolean }> {
    return new Promise((resolve, reject) => {
      const outgoing = request(
        { host: '127.0.0.1', port, path: '/metrics', localAddress: '127.0.0.2', ca: cert, agent },
        (response) => {
          const socket = response.socket;
          response.resume();
          response.on('end', () => {
            resolve({
              status: response.statusCode ?? 0,
              resumed: socket instanceof TLSSocket && socket.isSessionReused(),
            });
          });
        },
      );
      outgoing.on('error', reject);
      outgoing.end();
    });
  }

  it('closes the flood beyond its burst before the handshake, counts it, and serves the scraper each time', async () => {
    // Only the clock is frozen: the bucket never refills, so the flood gets its burst and no more.
    vi.useFakeTimers({ toFake: ['Date'] });
    const { port, counted } = await startTlsServer(5);
    const scraper = new Agent({ keepAlive: false });
    const flood: Promise<boolean>[] = [];
    const scrapes: { status: number; resumed: boolean }[] = [];
    for (let round = 0; round < 5; round++) {
      for (let index = 0; index < 12; index++) flood.push(handshake(port, '127.0.0.1'));
      // A new connection each time, as a scraper whose keep-alive connection was closed.
      scrapes.push(await scrape(port, scraper));
    }
    const completed = await Promise.all(flood);
    scraper.destroy();

    // A burst of 2 × 5: ten handshakes of the 60, the other 50 closed unread and counted.
    expect(completed.filter(Boolean)).toHaveLength(10);
    expect(await counted()).toBe(50);
    expect(scrapes.map(({ status }) => status)).toEqual([200, 200, 200, 200, 200]);
  });

  it('applies a new rate on reload to the addresses it already counts', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { port, server } = await startTlsServer(1);
    const handshakes = async (count: number): Promise<boolean[]> => {
      const completed: boolean[] = [];
      for (let index = 0; index < count; index++)
        completed.push(await handshake(port, '127.0.0.1'));
      return completed;
    };
    // A burst of 2 × 1.
    expect(await handshakes(3)).toEqual([true, true, false]);

    server.setMaxTlsConnectionsPerAddressPerSecond(5);
    vi.setSystemTime(Date.now() + 1_000);

    // A second at 5 a second: five tokens (one at the old rate).
    expect(await handshakes(6)).toEqual([true, true, true, true, true, false]);
  });

  it("resumes a scraper's TLS session on its next connection (a session ticket)", async () => {
    const { port } = await startTlsServer(10);
    const scraper = new Agent({ keepAlive: false });
    const first = await scrape(port, scraper);
    const second = await scrape(port, scraper);
    scraper.destroy();

    expect(first).toEqual({ status: 200, resumed: false });
    expect(second).toEqual({ status: 200, resumed: true });
  });
});
