import type { Server, Socket } from 'node:net';
import { peerAddress } from './peerAddress.js';

/**
 * Addresses whose rate is remembered at once; past it the one seen least recently is forgotten (its
 * next connection finds a full bucket). A bucket is a few dozen bytes, so the table stays well
 * under a megabyte whatever the clients.
 */
export const MAX_RATE_ADDRESSES = 4_096;

/** One address's bucket: tokens left when last counted, and when (ms). */
interface Bucket {
  tokens: number;
  countedAt: number;
}

/**
 * New connections per client address per second, as a token bucket per address that holds twice
 * the rate (a burst of two seconds' worth) and refills at the rate. Over TLS each new connection
 * costs the server a key exchange and a signature on its one thread before any request or basic
 * auth, so a client that opens connections in a loop (full handshakes, or a ClientHello and
 * nothing more) took the CPU from every other; a scraper keeps its connection, or resumes its
 * session, and opens a few a minute.
 */
export class NewConnectionRate {
  #perSecond: number;
  readonly #now: () => number;
  /** By address, the one seen least recently first (a Map keeps insertion order). */
  readonly #buckets = new Map<string, Bucket>();

  constructor(perSecond: number, now: () => number = Date.now) {
    this.#perSecond = perSecond;
    this.#now = now;
  }

  /** Applies a new rate (on reload); the buckets keep their tokens, up to the new burst. */
  setPerSecond(perSecond: number): void {
    this.#perSecond = perSecond;
  }

  /** Whether a new connection from `address` is within its rate; it takes a token if so. */
  admits(address: string): boolean {
    const now = this.#now();
    const burst = 2 * this.#perSecond;
    const bucket = this.#buckets.get(address);
    let tokens = burst;
    if (bucket !== undefined) {
      const refilled = ((now - bucket.countedAt) / 1000) * this.#perSecond;
      tokens = Math.min(burst, bucket.tokens + Math.max(0, refilled));
      this.#buckets.delete(address);
    } else if (this.#buckets.size >= MAX_RATE_ADDRESSES) {
      const leastRecent = this.#buckets.keys().next();
      if (leastRecent.done !== true) this.#buckets.delete(leastRecent.value);
    }
    const admitted = tokens >= 1;
    this.#buckets.set(address, { tokens: admitted ? tokens - 1 : tokens, countedAt: now });
    return admitted;
  }

  /** How many addresses it remembers now. */
  get addresses(): number {
    return this.#buckets.size;
  }

  /**
   * Closes each TCP connection `server` accepts beyond its address's rate, before any listener
   * after it (the TLS layer, HeldConnections) works on it, and calls `refused` for each. Attach it
   * last: it goes in front of the listeners already there.
   */
  attach(server: Server, refused: () => void): void {
    server.prependListener('connection', (socket: Socket) => {
      if (socket.destroyed || this.admits(peerAddress(socket))) return;
      socket.destroy();
      refused();
    });
  }
}
