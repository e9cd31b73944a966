// /metrics as a scraper sees it: every spelling, format and encoding answered alike, behind basic
// auth and TLS, and a page sent whole to a slow client though a newer one replaced it.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { gunzipSync } from 'node:zlib';
import bcrypt from 'bcryptjs';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { Secret } from '../../src/secrets/secret.js';
import type { ServerTls } from '../../src/config/types.js';
import { BasicAuthVerifier, startHttpServer } from '../../src/server/index.js';
import type { ConnectionLimits, RunningHttpServer } from '../../src/server/index.js';
import { SnapshotStore } from '../../src/snapshot/store.js';
import type { Target } from '../../src/snapshot/types.js';
import { createTestHttpApp } from '../support/httpApp.js';

const USER = 'prometheus';
const PASSWORD = 'scrape: me';
const tlsDirectory = join(import.meta.dirname, '..', 'fixtures', 'tls');
const OPENMETRICS_ACCEPT = 'application/openmetrics-text;version=1.0.0;q=0.5,text/plain;q=0.3';

let running: RunningHttpServer | undefined;

afterEach(async () => {
  await running?.close();
  running = undefined;
});

async function startServer(options: { auth?: boolean; tls?: ServerTls } = {}): Promise<string> {
  const store = new SnapshotStore(600);
  store.setTargets([{ kind: 'merge_queue', repo: 'github.com/acme/web', branch: 'main' }]);
  const { app } = createTestHttpApp({
    store,
    ...(options.auth === true && {
      auth: new BasicAuthVerifier(new Map([[USER, bcrypt.hashSync(PASSWORD, 4)]])),
    }),
  });
  running = await startHttpServer(app, '127.0.0.1', 0, options.tls);
  return running.url;
}

interface RawAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** Decompressed when the answer was gzip. */
  readonly text: string;
}

/** A request that shows the headers and bytes as sent (fetch would decompress silently). */
function send(
  url: string,
  options: { method?: string; headers?: Record<string, string>; ca?: string } = {},
): Promise<RawAnswer> {
  const request = url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const outgoing = request(
      url,
      {
        method: options.method ?? 'GET',
        headers: options.headers ?? {},
        agent: false,
        ...(options.ca !== undefined && { ca: options.ca }),
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const bytes = Buffer.concat(chunks);
          const gzipped = response.headers['content-encoding'] === 'gzip' && bytes.length > 0;
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            text: (gzipped ? gunzipSync(bytes) : bytes).toString('utf8'),
          });
        });
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}

function basic(credentials: string): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(credentials).toString('base64')}` };
}

/** The headers that identify a response, without the ones that change by the second. */
function stableHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => name !== 'date'));
}

describe('/metrics', () => {
  it('answers every spelling of /metrics alike, in every format and encoding, GET and HEAD', async () => {
    const url = await startServer();
    const variants = [
      {},
      { 'accept-encoding': 'gzip' },
      { accept: OPENMETRICS_ACCEPT },
      { accept: OPENMETRICS_ACCEPT, 'accept-encoding': 'br, gzip;q=0.5' },
      { 'accept-encoding': 'gzip;q=0' },
    ];
    for (const headers of variants) {
      for (const method of ['GET', 'HEAD']) {
        const trailingSlash = await send(`${url}/metrics/`, { method, headers });
        for (const path of ['/metrics', '/metrics?debug=1']) {
          const answer = await send(`${url}${path}`, { method, headers });
          expect({ path, method, headers, status: answer.status }).toEqual({
            path,
            method,
            headers,
            status: 200,
          });
          expect(stableHeaders(answer.headers)).toEqual(stableHeaders(trailingSlash.headers));
          expect(answer.text).toBe(trailingSlash.text);
        }
        expect(trailingSlash.headers['x-content-type-options']).toBe('nosniff');
        expect(trailingSlash.headers.vary).toBe('Accept, Accept-Encoding');
        if (method === 'HEAD') expect(trailingSlash.text).toBe('');
        else expect(trailingSlash.text).toContain('trunk_exporter_build_info{');
      }
    }
  });

  it('answers each scrape in the format its own Accept header asks for, whatever the scrape before asked', async () => {
    const url = await startServer();
    const asked = [
      OPENMETRICS_ACCEPT,
      undefined,
      OPENMETRICS_ACCEPT,
      OPENMETRICS_ACCEPT,
      'text/plain',
    ];
    const contentTypes = [];
    for (const accept of asked) {
      const answer = await send(`${url}/metrics`, {
        headers: accept === undefined ? {} : { accept },
      });
      contentTypes.push(answer.headers['content-type']?.split(';')[0]);
    }
    expect(contentTypes).toEqual([
      'application/openmetrics-text',
      'text/plain',
      'application/openmetrics-text',
      'application/openmetrics-text',
      'text/plain',
    ]);
  });

  it('answers other methods on /metrics 405 with Allow', async () => {
    const url = await startServer();
    const answer = await send(`${url}/metrics`, { method: 'POST' });
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe('GET, HEAD');
  });

  it('asks for basic auth on every spelling of /metrics, and serves the right credentials', async () => {
    const url = await startServer({ auth: true });
    for (const path of ['/metrics', '/metrics?x=1', '/metrics/']) {
      for (const method of ['GET', 'HEAD']) {
        for (const headers of [{}, basic(`${USER}:wrong`), basic(`nobody:${PASSWORD}`)]) {
          const denied = await send(`${url}${path}`, { method, headers });
          expect({ path, method, headers, status: denied.status }).toEqual({
            path,
            method,
            headers,
            status: 401,
          });
          expect(denied.headers['www-authenticate']).toBe(
            'Basic realm="trunk-exporter", charset="UTF-8"',
          );
          expect(denied.headers['x-content-type-options']).toBe('nosniff');
          expect(denied.text).toBe(method === 'HEAD' ? '' : 'unauthorized\n');
        }
        const allowed = await send(`${url}${path}`, {
          method,
          headers: { ...basic(`${USER}:${PASSWORD}`), 'accept-encoding': 'gzip' },
        });
        expect({ path, method, status: allowed.status }).toEqual({ path, method, status: 200 });
        expect(allowed.headers['content-encoding']).toBe('gzip');
      }
    }
  });

  it('is served over TLS only, with basic auth', async () => {
    const cert = readFileSync(join(tlsDirectory, 'server.crt'), 'utf8');
    const key = readFileSync(join(tlsDirectory, 'server.key'), 'utf8');
    const url = await startServer({
      auth: true,
      tls: { certFile: 'server.crt', keyFile: 'server.key', cert, key: new Secret(key) },
    });
    expect(url).toMatch(/^https:/);
    expect((await send(`${url}/metrics`, { ca: cert })).status).toBe(401);
    const scraped = await send(`${url}/metrics`, {
      ca: cert,
      headers: basic(`${USER}:${PASSWORD}`),
    });
    expect(scraped.status).toBe(200);
    expect(scraped.text).toContain('trunk_exporter_build_info{');
    await expect(send(`${url.replace('https:', 'http:')}/metrics`)).rejects.toThrow();
  });
});

/**
 * A store of `count` polled merge queues, each named with `nameBytes` random bytes in hex: a page
 * larger than the kernel's socket buffers of a client that does not read, which gzip cannot shrink.
 */
function storeOfLongNames(
  count: number,
  nameBytes: number,
): { store: SnapshotStore; targets: Target[] } {
  const store = new SnapshotStore(600);
  const targets: Target[] = Array.from({ length: count }, (_unused, index) => ({
    kind: 'merge_queue',
    repo: `github.com/acme/${String(index).padStart(2, '0')}-${randomBytes(nameBytes).toString('hex')}`,
    branch: 'main',
  }));
  store.setTargets(targets);
  // A target shows once polled: a failed poll gives it its health series.
  for (const target of targets) store.recordFailure(target, 'connection refused', 0.1);
  return { store, targets };
}

describe('/metrics pages replaced while being sent', () => {
  // A client that reads slowly still has most of the old page in the exporter's socket buffers
  // when the next change replaces it: it must get that page whole.
  // The page is made large (long repository names) so that it cannot all sit in the kernel's
  // socket buffers of a client that does not read. Over TLS, where the page is handed over as its
  // client reads it, the next describe reads a page whole too.

  /** Starts a request and pauses its answer as soon as the headers are in. */
  function pausedGet(url: string, headers: Record<string, string>): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const outgoing = httpRequest(`${url}/metrics`, { headers, agent: false }, (response) => {
        response.pause();
        resolve(response);
      });
      outgoing.on('error', reject);
      outgoing.end();
    });
  }

  function readAll(response: IncomingMessage): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        resolve(Buffer.concat(chunks));
      });
      response.on('error', reject);
      response.resume();
    });
  }

  it.each([{}, { 'accept-encoding': 'gzip' }])(
    'gives a slow client the whole page it asked for, though a newer one replaced it (%o)',
    async (headers) => {
      const { store, targets } = storeOfLongNames(24, 400_000);
      const { app } = createTestHttpApp({ store });
      running = await startHttpServer(app, '127.0.0.1', 0, undefined);
      const { url } = running;

      const before = await send(`${url}/metrics`, { headers });
      expect(before.text.length).toBeGreaterThan(16_000_000);
      const slow = await pausedGet(url, headers);
      // Give the exporter time to fill the socket buffers and stall on the rest.
      await new Promise((resolve) => setTimeout(resolve, 200));

      // A target dropped from the config: the next scrape renders a page without it.
      store.setTargets(targets.slice(1));
      const after = await send(`${url}/metrics`, { headers });
      expect(after.text).not.toBe(before.text);

      const bytes = await readAll(slow);
      const text = (
        slow.headers['content-encoding'] === 'gzip' ? gunzipSync(bytes) : bytes
      ).toString();
      expect(bytes.length).toBe(Number(slow.headers['content-length']));
      expect(text).toBe(before.text);
    },
  );
});

describe('/metrics over TLS to clients that stop reading', () => {
  // TLS encrypts what it is handed into memory of its own, which waits there until the client reads
  // it: a page handed over whole is a copy of it per such client. operations.md (Hostile clients):
  // over TLS a page is encrypted as its client reads it, 16 KiB at a time.
  const NON_READERS = 16;

  interface NonReader {
    readonly socket: TLSSocket;
    /** Everything received, headers included; grows again once the socket is resumed. */
    readonly received: Buffer[];
  }

  /** Sends GET /metrics over TLS and stops reading once the first bytes of the answer are in. */
  function nonReader(url: string, ca: string): Promise<NonReader> {
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
      const socket = tlsConnect({ host: hostname, port: Number(port), ca }, () => {
        socket.write(`GET /metrics HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`);
      });
      const received: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => received.push(chunk));
      socket.once('data', () => {
        socket.pause();
        resolve({ socket, received });
      });
      socket.on('error', reject);
    });
  }

  /** A TLS server of an 8 MB page, with `limits`; its URL and certificate. */
  async function startTlsServer(
    limits: Partial<ConnectionLimits> = {},
  ): Promise<{ url: string; cert: string }> {
    const cert = readFileSync(join(tlsDirectory, 'server.crt'), 'utf8');
    const key = readFileSync(join(tlsDirectory, 'server.key'), 'utf8');
    const { store } = storeOfLongNames(16, 250_000);
    const { app } = createTestHttpApp({ store });
    const tls = { certFile: 'server.crt', keyFile: 'server.key', cert, key: new Secret(key) };
    running = await startHttpServer(app, '127.0.0.1', 0, tls, limits);
    return { url: running.url, cert };
  }

  it("gives a genuine scrape from the non-readers' own address the place of one of them at its cap", async () => {
    // configuration.md: at server.maxConnectionsPerAddress a new connection takes the place of that
    // address's connection that has waited longest on its client, one whose answer its client
    // leaves unread among them.
    const { url, cert } = await startTlsServer({ maxConnectionsPerAddress: 8 });
    const nonReaders: NonReader[] = [];
    for (let index = 0; index < 8; index++) nonReaders.push(await nonReader(url, cert));
    // Left open, they would outlive this file in its worker (files share it): another file's
    // check that no socket is left would see them.
    onTestFinished(() => {
      for (const { socket } of nonReaders) socket.destroy();
    });

    const scrape = await send(`${url}/metrics`, {
      ca: cert,
      headers: { 'accept-encoding': 'gzip', accept: OPENMETRICS_ACCEPT },
    });

    // The TCP sockets under TLS hold none of the unsent bytes, so every non-reader looked busy
    // and the scrape's connection was closed as it arrived.
    expect(scrape.status).toBe(200);
  });

  it('holds far less than a page per client, serves a genuine scrape meanwhile, and sends each its page whole', async () => {
    const { url, cert } = await startTlsServer();

    const page = await send(`${url}/metrics`, { ca: cert });
    const pageBytes = Buffer.byteLength(page.text);
    expect(pageBytes).toBeGreaterThan(8_000_000);
    const rssBefore = process.memoryUsage.rss();
    const nonReaders: NonReader[] = [];
    for (let index = 0; index < NON_READERS; index++) nonReaders.push(await nonReader(url, cert));
    const rssHeld = process.memoryUsage.rss() - rssBefore;

    const scrape = await send(`${url}/metrics`, {
      ca: cert,
      headers: { 'accept-encoding': 'gzip', accept: OPENMETRICS_ACCEPT },
    });
    expect(scrape.status).toBe(200);
    expect(scrape.text).toContain('trunk_exporter_target_up{');
    // Handed over whole, each page is encrypted whole: a copy of it per client.
    expect(rssHeld).toBeLessThan((NON_READERS * pageBytes) / 3);

    const [first, ...others] = nonReaders;
    for (const other of others) other.socket.destroy();
    const whole = await new Promise<string>((resolve) => {
      first?.socket.on('data', () => {
        const answer = Buffer.concat(first.received).toString('utf8');
        const bodyStart = answer.indexOf('\r\n\r\n') + 4;
        if (Buffer.byteLength(answer.slice(bodyStart)) >= pageBytes) {
          first.socket.destroy();
          resolve(answer.slice(bodyStart));
        }
      });
      first?.socket.resume();
    });
    expect(whole).toBe(page.text);
  });
});
