import { createServer } from 'node:http';
import type { RequestListener, Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { Server as TlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { ServerTls } from '../config/types.js';

/**
 * How long close() lets in-flight scrapes finish before it cuts their connections: a scrape renders
 * from memory in milliseconds, and shutdown as a whole must end within 5 s.
 */
const CLOSE_GRACE_MS = 2_000;

const UNSPECIFIED_ADDRESSES = new Set(['0.0.0.0', '::']);

export interface RunningHttpServer {
  server: Server | TlsServer;
  /** Base URL of the bound socket, e.g. `http://127.0.0.1:9740` (`https://` with TLS). */
  url: string;
  /** Serves new TLS connections with this certificate and key (on reload); false without TLS. */
  updateTls(tls: ServerTls): boolean;
  /** Stops accepting connections and resolves once every connection is closed. */
  close(): Promise<void>;
}

/**
 * Listens on address:port (port 0 picks a free one), over HTTPS when `tls` is given, and resolves
 * once the socket is bound.
 */
export function startHttpServer(
  app: RequestListener,
  address: string,
  port: number,
  tls?: ServerTls,
): Promise<RunningHttpServer> {
  const server =
    tls === undefined
      ? createServer(app)
      : createTlsServer({ cert: tls.cert, key: tls.key.reveal() }, app);
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
