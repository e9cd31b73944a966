// The per-address cap on a real net server: which connections it holds and which it closes.
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HeldConnections } from '../../src/server/heldConnections.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

/** A server behind a cap of `max` per address, holding every connection it is given. */
async function cappedServer(max: number): Promise<{ server: Server; cap: HeldConnections }> {
  const server = createServer(() => undefined);
  const cap = new HeldConnections(100, max);
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

describe('the cap per address (server.maxConnectionsPerAddress)', () => {
  // configuration.md: more connections from one address take the places of that address's
  // connections that have waited longest on their clients; another address has places of its own.
  it("gives a newcomer beyond its address's cap the place of that address's connection idle longest, and follows a new cap", async () => {
    const { server, cap } = await cappedServer(2);
    const first = await connectFrom(server, '127.0.0.1');
    const second = await connectFrom(server, '127.0.0.1');
    const third = await connectFrom(server, '127.0.0.1');
    expect([first.closed, second.closed, third.closed]).toEqual([true, false, false]);
    // Another address has places of its own.
    const other = await connectFrom(server, '127.0.0.2');
    expect([second.closed, third.closed, other.closed]).toEqual([false, false, false]);

    third.socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const fourth = await connectFrom(server, '127.0.0.1');
    expect([second.closed, fourth.closed]).toEqual([false, false]);

    cap.setMaxPerAddress(3);
    const fifth = await connectFrom(server, '127.0.0.1');
    expect([second.closed, fourth.closed, fifth.closed]).toEqual([false, false, false]);
    const sixth = await connectFrom(server, '127.0.0.1');
    expect([second.closed, fourth.closed, fifth.closed, sixth.closed]).toEqual([
      true,
      false,
      false,
      false,
    ]);
    expect(other.closed).toBe(false);
  });
});
