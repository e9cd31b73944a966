import type * as Http from 'node:http';
import type { RequestListener, Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { Server as TlsServer } from 'node:https';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type { ServerTls } from '../config/types.js';
import type { ConnectionObserver } from '../metrics/connectionMetrics.js';
import { HeldConnections } from './heldConnections.js';
import { NewConnectionRate } from './newConnectionRate.js';
import { limitPipelinedRequests } from './pipelinedRequests.js';

// Required rather than imported: an ES import reads every export of node:http, and three of them
// (WebSocket, CloseEvent, MessageEvent) load Node.js's own copy of undici on first read, memory the
// exporter has no use for (docs/benchmarks.md, Page per merge queue).
const { createServer } = createRequire(import.meta.url)('node:http') as typeof Http;

/**
 * How long close() lets in-flight scrapes finish before it cuts their connections: a scrape renders
 * from memory in milliseconds, and shutdown as a whole must end within 5 s.
 */
const CLOSE_GRACE_MS = 2_000;

const UNSPECIFIED_ADDRESSES = new Set(['0.0.0.0', '::']);

/**
 * How the listener sheds connections that hold a file descriptor without asking for anything: a
 * scraper sends its request headers at once, so a connection that has not within a few seconds
 * (a half-open or slowloris one) is answered 408 and closed, and at `maxConnections` a newcomer
 * takes the place of the connection idle longest (HeldConnections), and at its address's cap
 * the one of that address idle longest. Node.js's own defaults keep idle connections long enough,
 * and without limit, for them to exhaust the file descriptors and fail every scrape.
 */
export interface ConnectionLimits {
  /** Connections held at once (`server.maxConnections`). */
  readonly maxConnections: number;
  /** Connections held at once from one client address (`server.maxConnectionsPerAddress`). */
  readonly maxConnectionsPerAddress: number;
  /**
   * New TLS connections per second from one client address, with a burst of twice that
   * (`server.maxTlsConnectionsPerAddressPerSecond`, NewConnectionRate); without TLS, none.
   */
  readonly maxTlsConnectionsPerAddressPerSecond: number;
  /** From the connection (or the previous request) to the end of the request headers. */
  readonly headersTimeoutMs: number;
  /** From the connection to the end of the whole request; a scrape has no body. */
  readonly requestTimeoutMs: number;
  /** How often the two timeouts are checked; a connection is shed at most this much later. */
  readonly checkIntervalMs: number;
  /**
   * How long a connection may go with nothing read from it or written to it while it holds a
   * request: a client that never reads its page would otherwise keep its place for ever, and a
   * connection with a request in flight is never the one a newcomer replaces.
   */
  readonly stalledMs: number;
}

/** The metrics listener's limits; `maxConnections` is the config's default. */
export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  maxConnections: 512,
  maxConnectionsPerAddress: 64,
  maxTlsConnectionsPerAddressPerSecond: 50,
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
  checkIntervalMs: 1_000,
  stalledMs: 60_000,
};

/**
 * The whole-request timeout for a webhook body deadline of `bodyTimeoutSeconds`: the request's
 * headers, then its body, and a check interval to spare, so that the endpoint's own 408 (counted
 * as `timeout`) always comes first; never below the default.
 */
export function requestTimeoutMsFor(bodyTimeoutSeconds: number): number {
  const { headersTimeoutMs, checkIntervalMs, requestTimeoutMs } = DEFAULT_CONNECTION_LIMITS;
  return Math.max(requestTimeoutMs, headersTimeoutMs + bodyTimeoutSeconds * 1000 + checkIntervalMs);
}

export interface RunningHttpServer {
  server: Server | TlsServer;
  /** Base URL of the bound socket, e.g. `http://127.0.0.1:9740` (`https://` with TLS). */
  url: string;
  /** Serves new TLS connections with this certificate and key (on reload); false without TLS. */
  updateTls(tls: ServerTls): boolean;
  /** Applies a new `server.maxConnections` (on reload); connections already held stay. */
  setMaxConnections(maxConnections: number): void;
  /** Applies a new `server.maxConnectionsPerAddress` (on reload); connections already held stay. */
  setMaxConnectionsPerAddress(maxConnectionsPerAddress: number): void;
  /** Applies a new `server.maxTlsConnectionsPerAddressPerSecond` (on reload). */
  setMaxTlsConnectionsPerAddressPerSecond(perSecond: number): void;
  /** Applies a new whole-request timeout (on reload: `webhooks.bodyTimeoutSeconds` changed). */
  setRequestTimeout(requestTimeoutMs: number): void;
  /** Stops accepting connections and resolves once every connection is closed. */
  close(): Promise<void>;
}

/**
 * Listens on address:port (port 0 picks a free one), over HTTPS when `tls` is given, and resolves
 * once the socket is bound. `observer` hears of the connections refused for their rate.
 */
export function startHttpServer(
  app: RequestListener,
  address: string,
  port: number,
  tls?: ServerTls,
  limits: Partial<ConnectionLimits> = {},
  observer?: ConnectionObserver,
): Promise<RunningHttpServer> {
  const {
    maxConnections,
    maxConnectionsPerAddress,
    maxTlsConnectionsPerAddressPerSecond,
    headersTimeoutMs,
    requestTimeoutMs,
    checkIntervalMs,
    stalledMs,
  } = { ...DEFAULT_CONNECTION_LIMITS, ...limits };
  const timeouts = {
    headersTimeout: headersTimeoutMs,
    requestTimeout: requestTimeoutMs,
    connectionsCheckingInterval: checkIntervalMs,
  };
  const listener = limitPipelinedRequests(app);
  const server =
    tls === undefined
      ? createServer(timeouts, listener)
      : // A TLS client that never finishes its handshake is not an HTTP connection yet: the
        // handshake has its own timeout (120 s by default).
        createTlsServer(
          {
            ...timeouts,
            handshakeTimeout: headersTimeoutMs,
            cert: tls.cert,
            key: tls.key.reveal(),
          },
          listener,
        );
  // Node.js destroys a socket idle this long (no 'timeout' listener): a page sent into a client
  // that stopped reading stalls once the kernel's buffers are full, and goes then.
  server.timeout = stalledMs;
  // Not server.maxConnections: Node.js would close a newcomer at the cap before anyone could make
  // room for it.
  const held = new HeldConnections(maxConnections, maxConnectionsPerAddress);
  held.attach(server);
  // Only over TLS, where a new connection costs a handshake: over plain HTTP one costs little more
  // than the request it carries, which the other limits bound.
  const tlsRate = new NewConnectionRate(maxTlsConnectionsPerAddressPerSecond);
  if (tls !== undefined) {
    tlsRate.attach(server, () => {
      observer?.tlsConnectionRateLimited();
    });
  }
  return new Promise((resolve, reject) => {
    const onError = (error: Error): void => {
      reject(error);
    };
    server.once('error', onError);
    server.listen(port, address, () => {
      server.off('error', onError);
      const bound = server.address() as AddressInfo;
      // A wildcard bind is reachable on loopback; print that rather than an address no browser opens.
      const address = UNSPECIFIED_ADDRESSES.has(bound.address) ? '127.0.0.1' : bound.address;
      const host = address.includes(':') ? `[${address}]` : address;
      resolve({
        server,
        url: `${tls === undefined ? 'http' : 'https'}://${host}:${bound.port}`,
        updateTls(next) {
          if (!('setSecureContext' in server)) return false;
          server.setSecureContext({ cert: next.cert, key: next.key.reveal() });
          return true;
        },
        setMaxConnections(next) {
          held.setMax(next);
        },
        setMaxConnectionsPerAddress(next) {
          held.setMaxPerAddress(next);
        },
        setMaxTlsConnectionsPerAddressPerSecond(next) {
          tlsRate.setPerSecond(next);
        },
        setRequestTimeout(next) {
          // Read by Node.js at each check of the connections, so it holds for those already open.
          server.requestTimeout = next;
        },
        close: () => closeServer(server),
      });
    });
  });
}

function closeServer(server: Server | TlsServer): Promise<void> {
  return new Promise((resolve, reject) => {
    // close() drops idle keep-alive connections itself (Node >= 19); a scrape still in flight gets
    // CLOSE_GRACE_MS to finish before its connection is cut, so shutdown cannot hang on a client.
    const forceClose = setTimeout(() => {
      server.closeAllConnections();
    }, CLOSE_GRACE_MS);
    forceClose.unref();
    server.close((error) => {
      clearTimeout(forceClose);
      if (error) reject(error);
      else resolve();
    });
  });
}
