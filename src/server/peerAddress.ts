import type { Socket } from 'node:net';

/** The client's address, an IPv4 client on a dual-stack socket written as IPv4. */
export function peerAddress(socket: Socket): string {
  const address = socket.remoteAddress ?? '';
  return address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
}
