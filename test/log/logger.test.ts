// The log's destination closed by its reader (standard output whose reader went away, such as a
// log collector that restarted): writing to it fails with EPIPE or ECONNRESET, and the exporter
// must keep running with its lines dropped. A real socket whose peer has closed stands for the pipe.
import { once } from 'node:events';
import { createConnection, createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.js';

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** A connected socket whose peer has closed and gone. */
async function socketWithPeerGone(): Promise<Socket> {
  const server = createServer((peer) => {
    peer.destroy();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  closers.push(() => server.close());
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  const socket = createConnection(address.port, '127.0.0.1');
  closers.push(() => socket.destroy());
  await once(socket, 'connect');
  await once(socket, 'end');
  return socket;
}

describe('createLogger', () => {
  it('drops lines it cannot write once its destination has closed, and goes on logging', async () => {
    const destination = await socketWithPeerGone();
    const logger = createLogger({ level: 'info', secrets: () => [], destination });
    const failures: unknown[] = [];
    const onUncaught = (error: unknown): void => {
      failures.push(error);
    };
    process.on('uncaughtException', onUncaught);
    closers.push(() => process.off('uncaughtException', onUncaught));
    // The first write reaches a socket whose peer closed (answered with a reset); the later ones
    // meet it broken.
    for (let line = 0; line < 20; line++) {
      logger.info({ line }, 'a line nobody reads');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(destination.destroyed).toBe(true);
    expect(failures).toEqual([]);
    expect(() => {
      logger.info('still logging');
    }).not.toThrow();
  });
});
