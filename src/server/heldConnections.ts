import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server, Socket } from 'node:net';

/** One held connection and the requests on it not yet answered. */
interface HeldConnection {
  readonly socket: Socket;
  requestsInFlight: number;
}

/**
 * Caps the connections the server holds at once (`server.maxConnections`). At the cap a newcomer
 * takes the place of the connection that has waited longest without a request in flight (one that
 * has not sent its request headers yet, or an idle keep-alive one); only when every held
 * connection has a request in flight is the newcomer closed. Refusing newcomers would let
 * slowloris clients hold every place, each reopened as soon as it is shed; a scraper sends its
 * headers at once, so it is never the one that waited longest.
 */
export class HeldConnections {
  #max: number;
  /** By peer address and port (a TLS socket's are its TCP connection's), longest idle first. */
  readonly #held = new Map<string, HeldConnection>();

  constructor(max: number) {
    this.#max = max;
  }

  /** Applies a new cap (on reload); connections already held stay. */
  setMax(max: number): void {
    this.#max = max;
  }

  /**
   * Counts every TCP connection `server` accepts, before the HTTP (or TLS) layer reads from it,
   * and follows the requests on them. Attach it before any cap that refuses connections of its own.
   */
  attach(server: Server): void {
    server.prependListener('connection', (socket: Socket) => {
      this.#admit(socket);
    });
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      this.#track(req, res);
    });
  }

  #admit(socket: Socket): void {
    // Already refused by a listener that ran first, such as the per-address cap.
    if (socket.destroyed) return;
    if (this.#held.size >= this.#max && !this.#evictLongestIdle() && !this.#evictUnread()) {
      socket.destroy();
      return;
    }
    const key = connectionKey(socket);
    this.#held.set(key, { socket, requestsInFlight: 0 });
    socket.once('close', () => {
      if (this.#held.get(key)?.socket === socket) this.#held.delete(key);
    });
  }

  /** Closes the held connection longest without a request in flight; false when there is none. */
  #evictLongestIdle(): boolean {
    for (const [key, connection] of this.#held) {
      if (connection.requestsInFlight > 0) continue;
      this.#held.delete(key);
      connection.socket.destroy();
      return true;
    }
    return false;
  }

  /** Closes the connection held longest whose answer waits on its client to read; false when none. */
  #evictUnread(): boolean {
    for (const [key, connection] of this.#held) {
      if (!connection.socket.writableNeedDrain) continue;
      this.#held.delete(key);
      connection.socket.destroy();
      return true;
    }
    return false;
  }

  #track(req: IncomingMessage, res: ServerResponse): void {
    const key = connectionKey(req.socket);
    const connection = this.#held.get(key);
    if (connection === undefined) return;
    connection.requestsInFlight++;
    res.once('close', () => {
      connection.requestsInFlight--;
      // Idle from now: moved behind the connections that have been idle longer.
      if (this.#held.delete(key)) this.#held.set(key, connection);
    });
  }
}

function connectionKey(socket: Socket): string {
  return `${socket.remoteAddress ?? ''}:${String(socket.remotePort ?? '')}`;
}
