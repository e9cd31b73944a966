import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server, Socket } from 'node:net';
import { peerAddress } from './peerAddress.js';

/** One held connection, the requests on it not yet answered, and since when it has waited. */
interface HeldConnection {
  /** The TCP connection, closed to shed it. */
  readonly socket: Socket;
  /**
   * What its answers are written to: the TLS socket over it with TLS, whose unsent bytes the TCP
   * socket never holds; the TCP socket itself without.
   */
  answerSocket: Socket;
  /** The client's address (peerAddress). */
  readonly address: string;
  requestsInFlight: number;
  /**
   * Since when (ms) it has waited on its client: without a request in flight, since it came or
   * its last answer went; with one, since the request came or its unsent bytes last fell.
   */
  waitingSince: number;
  /** The socket's unsent bytes when last looked at. */
  unsentBytes: number;
  /** An answer on it refused the client's credentials or turned it away (REFUSED_STATUSES). */
  refused: boolean;
}

/**
 * Answers that refuse a client (wrong credentials; too many checks waiting): a connection that got
 * one goes before any other when a newcomer needs a place, its requests in flight or not, since a
 * flood of wrong passwords over kept connections keeps a request in flight on each of them.
 */
const REFUSED_STATUSES = new Set([401, 429]);

/**
 * Caps the connections the server holds at once (`server.maxConnections`). At the cap a newcomer
 * takes the place of the connection that has waited longest on its client: one without a request in
 * flight (that has not sent its request headers yet, or an idle keep-alive one), or one whose
 * answer its client leaves unread (bytes of it unsent, over TLS too); only when every held
 * connection has a request being worked on or read is the newcomer closed. Refusing newcomers would
 * let slowloris clients hold every place, each reopened as soon as it is shed, and clients that
 * send a request and never read the page (larger than the kernel's socket buffers) hold theirs
 * until the stall limit; a scraper sends its headers at once and reads its answer, so it is never
 * the one that waited longest. A connection that got a refusal (REFUSED_STATUSES) goes before all
 * of them. One client address holds at most `maxPerAddress` (`server.maxConnectionsPerAddress`) of
 * them, and its newcomer beyond takes the place of its own connection that waited longest, by the
 * same rule: a flood from one address then keeps to its share, and a scraper from that same address
 * (one host, a proxy) is still served, which closing the newcomer at the cap would not do.
 */
export class HeldConnections {
  #max: number;
  #maxPerAddress: number;
  /** By peer address and port (a TLS socket's are its TCP connection's). */
  readonly #held = new Map<string, HeldConnection>();
  /** How many of #held each client address has. */
  readonly #heldPerAddress = new Map<string, number>();

  constructor(max: number, maxPerAddress: number = max) {
    this.#max = max;
    this.#maxPerAddress = maxPerAddress;
  }

  /** Applies a new cap (on reload); connections already held stay. */
  setMax(max: number): void {
    this.#max = max;
  }

  /** Applies a new cap per address (on reload); connections already held stay. */
  setMaxPerAddress(maxPerAddress: number): void {
    this.#maxPerAddress = maxPerAddress;
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
    // Already refused by a listener that ran first.
    if (socket.destroyed) return;
    const address = peerAddress(socket);
    const room =
      (this.#heldPerAddress.get(address) ?? 0) >= this.#maxPerAddress
        ? this.#evictLongestWaiting(address)
        : this.#held.size < this.#max || this.#evictLongestWaiting();
    if (!room) {
      socket.destroy();
      return;
    }
    const key = connectionKey(socket);
    const connection: HeldConnection = {
      socket,
      address,
      answerSocket: socket,
      requestsInFlight: 0,
      waitingSince: Date.now(),
      unsentBytes: 0,
      refused: false,
    };
    this.#held.set(key, connection);
    this.#heldPerAddress.set(address, (this.#heldPerAddress.get(address) ?? 0) + 1);
    socket.once('close', () => {
      if (this.#held.get(key) === connection) this.#release(key, connection);
    });
  }

  #release(key: string, connection: HeldConnection): void {
    this.#held.delete(key);
    const left = (this.#heldPerAddress.get(connection.address) ?? 1) - 1;
    if (left > 0) this.#heldPerAddress.set(connection.address, left);
    else this.#heldPerAddress.delete(connection.address);
  }

  /**
   * Closes the held connection (of `address`, when given) that has waited longest on its client;
   * false when every one has a request being worked on. A page being read counts from when its
   * unsent bytes last fell, so however long a busy machine takes to send it, it is not the one
   * that waited longest while newcomers keep coming.
   */
  #evictLongestWaiting(address?: string): boolean {
    const now = Date.now();
    let longest: [string, HeldConnection] | undefined;
    for (const entry of this.#held) {
      const connection = entry[1];
      if (address !== undefined && connection.address !== address) continue;
      if (connection.requestsInFlight > 0 && !connection.refused) {
        const unsentBytes = unsentBytesOf(connection.answerSocket);
        if (unsentBytes < connection.unsentBytes) connection.waitingSince = now;
        connection.unsentBytes = unsentBytes;
        // Nothing unsent: its answer is still being worked on. Unsent bytes, however few, wait on
        // the client: a page handed over in pieces (over TLS) ends with its last piece unsent.
        if (unsentBytes === 0) continue;
      }
      if (longest === undefined || goesBefore(connection, longest[1])) longest = entry;
    }
    if (longest === undefined) return false;
    this.#release(...longest);
    longest[1].socket.destroy();
    return true;
  }

  #track(req: IncomingMessage, res: ServerResponse): void {
    const key = connectionKey(req.socket);
    const connection = this.#held.get(key);
    if (connection === undefined) return;
    connection.answerSocket = req.socket;
    connection.requestsInFlight++;
    connection.waitingSince = Date.now();
    connection.unsentBytes = unsentBytesOf(req.socket);
    res.once('close', () => {
      connection.requestsInFlight--;
      connection.waitingSince = Date.now();
      if (REFUSED_STATUSES.has(res.statusCode)) connection.refused = true;
    });
  }
}

/** Whether `a` gives its place to a newcomer before `b`: refused first, then the longest waiting. */
function goesBefore(a: HeldConnection, b: HeldConnection): boolean {
  if (a.refused !== b.refused) return a.refused;
  return a.waitingSince < b.waitingSince;
}

/**
 * The bytes of `socket`'s answers its client has not taken yet. A write's bytes leave its
 * writableLength only once the client has taken all of them, which for a page larger than the
 * kernel's socket buffers is long after it began reading; the handle's write queue (what Node.js's
 * own socket timeout watches) falls as it reads.
 */
function unsentBytesOf(socket: Socket): number {
  const handle = (socket as { _handle?: { writeQueueSize?: unknown } | null })._handle;
  const queued = typeof handle?.writeQueueSize === 'number' ? handle.writeQueueSize : 0;
  return socket.writableLength + queued;
}

function connectionKey(socket: Socket): string {
  return `${socket.remoteAddress ?? ''}:${String(socket.remotePort ?? '')}`;
}
