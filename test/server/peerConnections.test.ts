// The per-address cap on a real net server: which connections it holds and which it closes at once.
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { PeerConnectionCap } from '../../src/server/peerConnections.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

/** A server behind a cap of `max`, holding every connection it is given. */
async function cappedServer(max: number): Promise<{ server: Server; cap: PeerConnectionCap }> {
  const server = createServer(() => undefined);
  const cap = new PeerConnectionCap(max);
  cap.attach(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => {
    server.close();
  });
  return { server, cap };
}

interface Client {
  readonly socket: Socket;
  closed: boolean;
}

/** A connection from `localAddress`, once the server has either kept it or closed it (50 ms). */
async function connectFrom(server: Server, localAddress: string): Promise<Client> {
  const { port } = server.address() as AddressInfo;
  const socket = connect({ host: '127.0.0.1', port, localAddress });
  const client: Client = { socket, closed: false };
  socket.on('error', () => undefined);
  socket.on('close', () => (client.closed = true));
  cleanups.push(() => socket.destroy());
  await new Promise((resolve) => setTimeout(resolve, 50));
  return client;
}

describe('PeerConnectionCap', () => {
  it('holds up to the cap per address, frees a place when a connection ends, and follows a new cap', async () => {
    const { server, cap } = await cappedServer(2);
    const first = await connectFrom(server, '127.0.0.1');
    const second = await connectFrom(server, '127.0.0.1');
    const third = await connectFrom(server, '127.0.0.1');
    expect([first.closed, second.closed, third.closed]).toEqual([false, false, true]);
    // Another address has places of its own.
    const other = await connectFrom(server, '127.0.0.2');
    expect(other.closed).toBe(false);

    first.socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await connectFrom(server, '127.0.0.1')).closed).toBe(false);
    expect((await connectFrom(server, '127.0.0.1')).closed).toBe(true);

    cap.setMaxPerAddress(3);
    expect((await connectFrom(server, '127.0.0.1')).closed).toBe(false);
    expect((await connectFrom(server, '127.0.0.1')).closed).toBe(true);
  });
});
