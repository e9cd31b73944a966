// Shared test plumbing: a real node:http server standing in for Trunk, and a client wired to it
// with a recording observer. No undici mocks: every test goes over a real socket.
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { Secret } from '../../src/secrets/secret.js';
import { createLogger, silentLogger } from '../../src/log/logger.js';
import type { Logger } from '../../src/log/logger.js';
import { TrunkClient } from '../../src/trunk/client.js';
import type { TrunkClientOptions } from '../../src/trunk/client.js';
import type { ApiAnomalyKind, ApiCallObserver } from '../../src/trunk/observer.js';
import type { Endpoint, RepoRef } from '../../src/trunk/schemas.js';

export const TOKEN = 'tok_live_9f8e7d6c5b4a_SECRET';
export const REPO: RepoRef = { host: 'github.com', owner: 'acme', name: 'web' };

/** A request as the fake API saw it. */
export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** Date.now() when the request line arrived. */
  readonly receivedAt: number;
}

/** Answers request number `index` (0-based); may leave `res` hanging or destroy the socket. */
export type Handler = (
  req: IncomingMessage,
  res: ServerResponse,
  index: number,
  recorded: RecordedRequest,
) => void | Promise<void>;

/** A running fake API. */
export interface ApiServer {
  /** Base URL ending in /v1, like the real one. */
  readonly apiUrl: string;
  readonly origin: string;
  readonly requests: RecordedRequest[];
  /** Highest number of requests the server held open at once. */
  readonly maxInFlight: () => number;
  readonly close: () => Promise<void>;
}

const cleanups: (() => Promise<void>)[] = [];

/** Closes every server and client created since the last call; call from afterEach. */
export async function cleanUp(): Promise<void> {
  const pending = cleanups.splice(0).reverse();
  for (const cleanup of pending) await cleanup();
}

/** Starts a fake API on 127.0.0.1, port 0; the body is read before the handler runs. */
export async function startApiServer(handler: Handler, pathPrefix = '/v1'): Promise<ApiServer> {
  const requests: RecordedRequest[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const server = createServer((req, res) => {
    const receivedAt = Date.now();
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.on('close', () => {
      inFlight -= 1;
    });
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt,
      };
      requests.push(recorded);
      void Promise.resolve(handler(req, res, requests.length - 1, recorded)).catch(
        (error: unknown) => {
          res.destroy(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  const close = async (): Promise<void> => {
    server.closeAllConnections();
    await new Promise<void>((resolve) =>
      server.close(() => {
        resolve();
      }),
    );
  };
  cleanups.push(close);
  return {
    apiUrl: `${origin}${pathPrefix}`,
    origin,
    requests,
    maxInFlight: () => maxInFlight,
    close,
  };
}

/** Sends `body` as JSON with the given status and headers. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** Sends a plain-text or HTML error body the way Trunk and its edge do. */
export function sendText(
  res: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers });
  res.end(text);
}

/** An observer that keeps every call for assertions. */
export interface RecordingObserver extends ApiCallObserver {
  readonly finished: { endpoint: Endpoint; code: string; seconds: number }[];
  readonly mismatches: Endpoint[];
  readonly anomalies: { endpoint: Endpoint; kind: ApiAnomalyKind; count: number }[];
  readonly codes: () => string[];
}

/** Creates an empty RecordingObserver. */
export function recordingObserver(): RecordingObserver {
  const finished: RecordingObserver['finished'] = [];
  const mismatches: Endpoint[] = [];
  const anomalies: RecordingObserver['anomalies'] = [];
  return {
    finished,
    mismatches,
    anomalies,
    codes: () => finished.map((entry) => entry.code),
    requestFinished: (endpoint, code, seconds) => {
      finished.push({ endpoint, code, seconds });
    },
    schemaMismatch: (endpoint) => {
      mismatches.push(endpoint);
    },
    anomaly: (endpoint, kind, count) => {
      anomalies.push({ endpoint, kind, count });
    },
  };
}

/** A debug logger whose lines land in `lines`; it does NOT scrub, so leaks show up. */
export function capturingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      lines.push(chunk.toString());
      callback();
    },
  });
  const logger = createLogger({ level: 'debug', secrets: () => [], destination });
  return { logger, lines };
}

/** A client for `apiUrl` with fast test defaults; closed by cleanUp(). */
export function makeClient(
  apiUrl: string,
  overrides: Partial<TrunkClientOptions> = {},
): { client: TrunkClient; observer: RecordingObserver } {
  const observer = recordingObserver();
  const client = new TrunkClient({
    apiUrl,
    token: new Secret(TOKEN),
    timeoutSeconds: 2,
    maxConcurrentRequests: 4,
    maxRequestsPerSecond: 1000,
    observer,
    logger: silentLogger(),
    retry: { maxAttempts: 4, baseDelayMs: 10, maxDelayMs: 100 },
    random: () => 0.5,
    ...overrides,
  });
  cleanups.push(() => client.close());
  return { client, observer };
}

/** The rejection of `promise`, failing the test if it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}
