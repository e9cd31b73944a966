// Wrong passwords against a real server with basic auth: every failed check used to run bcrypt, so
// a flood of them took the CPU from the scraper. Now a repeated wrong password is hashed once, one
// comparison runs at a time (in a worker thread) with four more from the address in line, and the
// rest get 429 unhashed, while a scraper whose credentials were checked before keeps getting its page.
import { Agent, get as httpGet } from 'node:http';
import bcrypt from 'bcryptjs';
import { afterEach, describe, expect, it } from 'vitest';
import { BasicAuthVerifier, startHttpServer } from '../../src/server/index.js';
import type { RunningHttpServer } from '../../src/server/index.js';
import { SnapshotStore } from '../../src/snapshot/store.js';
import { createTestHttpApp } from '../support/httpApp.js';
import { until } from './harness.js';

const USER = 'prometheus';
const PASSWORD = 'right-password';
// The lowest cost bcrypt takes: the limits do not depend on the cost, and the comparisons run on
// the test's own thread, beside the flood, where cost 8 took 250 ms each on a busy machine.
const HASH = bcrypt.hashSync(PASSWORD, 4);

let running: RunningHttpServer | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

/**
 * A real server whose verifier counts the bcrypt comparisons it starts, and can hold them; each
 * takes `comparisonMs` more, as a costlier hash would.
 */
async function startServer(comparisonMs = 0, maxConnectionsPerAddress = 512) {
  const store = new SnapshotStore(600);
  store.setTargets([{ kind: 'merge_queue', repo: 'github.com/acme/web', branch: 'main' }]);
  const compared: string[] = [];
  let held: Promise<void> | undefined;
  const auth = new BasicAuthVerifier(new Map([[USER, HASH]]), {
    compare: async (password, hash) => {
      compared.push(password);
      await held;
      if (comparisonMs > 0) await new Promise((resolve) => setTimeout(resolve, comparisonMs));
      return bcrypt.compare(password, hash);
    },
  });
  const { app } = createTestHttpApp({ store, auth });
  // The hundred clients of the flood all come from 127.0.0.1 here.
  running = await startHttpServer(app, '127.0.0.1', 0, undefined, { maxConnectionsPerAddress });
  /** Holds every comparison that starts from now on until the returned function is called. */
  const holdComparisons = (): (() => void) => {
    let release: () => void = () => {};
    held = new Promise<void>((resolve) => (release = resolve));
    return release;
  };
  return { url: running.url, compared, holdComparisons };
}

function get(url: string, password: string, username = USER): Promise<Response> {
  const credentials = Buffer.from(`${username}:${password}`).toString('base64');
  return fetch(url, { headers: { authorization: `Basic ${credentials}` } });
}

/** The status of a GET of `url`/healthz with USER and `password`; 0 when the request fails. */
function healthzStatus(
  url: string,
  password: string,
  options: { localAddress?: string; agent: Agent | false },
): Promise<number> {
  return new Promise((resolve) => {
    const credentials = Buffer.from(`${USER}:${password}`).toString('base64');
    const request = httpGet(
      `${url}/healthz`,
      { ...options, headers: { authorization: `Basic ${credentials}` } },
      (response) => {
        response.resume();
        response.on('end', () => {
          resolve(response.statusCode ?? 0);
        });
      },
    );
    request.on('error', () => {
      resolve(0);
    });
  });
}

describe('a flood of wrong passwords', () => {
  it('hashes a repeated wrong password once, for every endpoint and every username', async () => {
    const { url, compared } = await startServer();
    for (let attempt = 0; attempt < 20; attempt++) {
      for (const [path, username] of [
        ['/metrics', USER],
        ['/healthz', USER],
        ['/metrics', 'nobody'],
      ] as const) {
        const response = await get(`${url}${path}`, 'stale-password', username);
        expect(response.status).toBe(401);
        expect(response.headers.get('www-authenticate')).toMatch(/^Basic /);
        await response.arrayBuffer();
      }
    }
    // The one timing the costliest hash at start, then one for the known username; none for the
    // unknown one (its refusal waits on a timer), not 60.
    expect(compared).toEqual(['', 'stale-password']);
  });

  it('runs at most five comparisons from one address; the rest get 429 unhashed while a known scraper gets its page', async () => {
    const { url, compared, holdComparisons } = await startServer();
    // The scraper's credentials were checked once before the flood (after the comparison that
    // times the costliest hash); it runs bcrypt no more.
    expect((await get(`${url}/metrics`, PASSWORD)).status).toBe(200);
    expect(compared).toEqual(['', PASSWORD]);

    const release = holdComparisons();
    const answered: number[] = [];
    const flood = Array.from({ length: 100 }, async (_, index) => {
      const response = await get(
        `${url}${index % 2 === 0 ? '/metrics' : '/healthz'}`,
        `guess ${index}`,
      );
      if (response.status === 429) expect(response.headers.get('retry-after')).toBe('1');
      await response.arrayBuffer();
      answered.push(response.status);
      return response.status;
    });
    await until(() => answered.length >= 95, '95 answers while five checks are held');
    expect(answered).toEqual(Array<number>(95).fill(429));
    // One comparison runs; four wait in line for their turn without having started.
    expect(compared).toHaveLength(3);
    for (let scrape = 0; scrape < 3; scrape++) {
      const page = await get(`${url}/metrics`, PASSWORD);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('trunk_exporter_build_info');
    }

    release();
    const statuses = await Promise.all(flood);
    expect(statuses.filter((status) => status === 401)).toHaveLength(5);
    expect(compared).toHaveLength(7);
    // With the flood over, every slot is free again: a new wrong password is checked, not refused.
    expect((await get(`${url}/healthz`, 'one more guess')).status).toBe(401);
    expect(compared).toHaveLength(8);
  });

  it('checks a new scraper while wrong passwords come from more addresses than there are places in line', async () => {
    // 50 ms a comparison, as a cost-10 hash takes about.
    const { url, compared } = await startServer(50);
    /** The status of a GET of /healthz from the loopback address `from`. */
    const ask = (from: string, password: string): Promise<number> =>
      healthzStatus(url, password, { localAddress: from, agent: false });
    // 40 addresses, more than the 32 places, each sending a new wrong password as soon as the
    // last is answered: every place is taken, each by a line of one, as a new scraper's would be.
    let flooding = true;
    let guesses = 0;
    const flood = Array.from({ length: 40 }, async (_, index) => {
      while (flooding) await ask(`127.0.3.${String(index + 1)}`, `guess ${String(guesses++)}`);
    });
    await until(() => compared.length > 45, 'every flooding address checked and refused');

    const scrapes: number[] = [];
    while (scrapes.length < 10 && !scrapes.includes(200)) {
      scrapes.push(await ask('127.0.4.1', PASSWORD));
    }
    flooding = false;
    await Promise.all(flood);

    // Without telling the addresses apart, each flooding newcomer took the place of the waiter
    // first in the ring, which the scraper's check became in its turn: 429 every time.
    expect(scrapes).toContain(200);
  });

  it('checks a new scraper while wrong passwords come over kept connections from its own address', async () => {
    // operations.md: a connection on which a check was refused waits in a line of its own, apart
    // from its address's other connections.
    const { url, compared } = await startServer(20);
    const flooder = new Agent({ keepAlive: true, maxSockets: 20 });
    /** The status of a GET of /healthz from 127.0.0.1 through `agent` (false: a connection of its own). */
    const ask = (agent: Agent | false, password: string): Promise<number> =>
      healthzStatus(url, password, { agent });
    // 20 kept connections, each sending a new wrong password as soon as the last is answered.
    let flooding = true;
    let guesses = 0;
    const refusedBusy: number[] = [];
    const flood = Array.from({ length: 20 }, async () => {
      while (flooding) {
        const status = await ask(flooder, `guess ${String(guesses++)}`);
        if (status === 429) refusedBusy.push(status);
      }
    });
    await until(
      () => compared.length > 10 && refusedBusy.length > 100,
      'the flood checked and refused busy',
    );

    const scrapes: number[] = [];
    while (scrapes.length < 10 && !scrapes.includes(200)) {
      scrapes.push(await ask(false, PASSWORD));
    }
    flooding = false;
    await Promise.all(flood);
    flooder.destroy();

    // In one line with the flood's, the four places were taken again as soon as one came free:
    // 429 every time.
    expect(scrapes).toContain(200);
  });

  it('answers a new scraper while wrong passwords keep a request in flight on every connection its address may hold', async () => {
    // configuration.md (server.maxConnectionsPerAddress): a connection that got a 401 or 429 gives
    // its place to a newcomer first, its requests in flight or not.
    const { url, holdComparisons } = await startServer(0, 8);
    const release = holdComparisons();
    const flooder = new Agent({ keepAlive: true, maxSockets: 8 });
    let flooding = true;
    let guesses = 0;
    // One comparison held, four waiting for it in the address's line; the other three connections
    // are refused busy and wait in the line of refused connections: all eight have a request in
    // flight that nothing answers while the comparison is held.
    const flood = Array.from({ length: 8 }, async () => {
      while (flooding) await healthzStatus(url, `guess ${String(guesses++)}`, { agent: flooder });
    });
    await until(() => guesses >= 11, 'three refused connections asking again');

    const first = await healthzStatus(url, PASSWORD, { agent: false });
    flooding = false;
    release();
    await Promise.all(flood);
    flooder.destroy();

    // With every place's request in flight, the scrape's connection was closed as it arrived (0).
    expect([200, 429]).toContain(first);
    expect(await healthzStatus(url, PASSWORD, { agent: false })).toBe(200);
  });
});
