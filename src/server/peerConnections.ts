import type { Server } from 'node:net';
import type { Socket } from 'node:net';

/**
 * Caps the connections one client address holds at once. `server.maxConnections` bounds them all,
 * so a single address reopening half-open connections as fast as they are shed would otherwise
 * take every place and every other client's connection would be closed as it arrives; with a cap
 * per address the others keep room. A connection beyond its address's cap is destroyed at once.
 */
export class PeerConnectionCap {
  #maxPerAddress: number;
  readonly #held = new Map<string, number>();

  constructor(maxPerAddress: number) {
    this.#maxPerAddress = maxPerAddress;
  }

  /** Applies a new cap (on reload); connections already held stay. */
  setMaxPerAddress(maxPerAddress: number): void {
    this.#maxPerAddress = maxPerAddress;
  }

  /** Counts every connection `server` accepts, before the HTTP (or TLS) layer reads from it. */
  attach(server: Server): void {
    server.prependListener('connection', (socket: Socket) => {
      this.#admit(socket);
    });
  }

  #admit(socket: Socket): void {
    const address = peerAddress(socket);
    const held = this.#held.get(address) ?? 0;
    if (held >= this.#maxPerAddress) {
      socket.destroy();
      return;
    }
    this.#held.set(address, held + 1);
    socket.once('close', () => {
      const left = (this.#held.get(address) ?? 1) - 1;
      if (left > 0) this.#held.set(address, left);
      else this.#held.delete(address);
    });
  }
}

/** The client's address, an IPv4 client on a dual-stack socket written as IPv4. */
export function peerAddress(socket: Socket): string {
  const address = socket.remoteAddress ?? '';
  return address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
}
