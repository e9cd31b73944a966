// Reading files named in the configuration: only regular files, bounded in size and in time.
import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import { mkdtemp, open, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRegularFile } from '../../src/config/settingFiles.js';

describe('readRegularFile', () => {
  it('gives up after its timeout when the file system does not answer', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'trunk-exporter-files-'));
    const file = join(directory, 'token');
    await writeFile(file, 'token');
    // A stuck mount, played by libuv's thread pool: each thread blocked in a plain open() of a
    // FIFO with no writer, so the read below waits behind them as it would on a dead NFS server.
    const threads = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
    const fifos = Array.from({ length: threads }, (_, index) => join(directory, `fifo-${index}`));
    for (const fifo of fifos) execFileSync('mkfifo', [fifo]);
    const blocked = fifos.map((fifo) => open(fifo, 'r'));
    try {
      // Only the timeout gives this answer: without it the read would wait as long as the FIFOs.
      expect(await readRegularFile(file, 1024, 200)).toEqual({ reason: 'not read within 0.2 s' });
    } finally {
      // A writer for each FIFO releases its thread.
      const writers = fifos.map((fifo) =>
        openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK),
      );
      for (const handle of await Promise.all(blocked)) await handle.close();
      for (const writer of writers) closeSync(writer);
    }
    expect(await readRegularFile(file, 1024, 200)).toEqual({ text: 'token' });
  });

  it('reads a file of exactly the limit and refuses one byte more', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'trunk-exporter-files-'));
    const file = join(directory, 'cert.pem');
    await writeFile(file, 'x'.repeat(100));
    expect(await readRegularFile(file, 100)).toEqual({ text: 'x'.repeat(100) });
    expect(await readRegularFile(file, 99)).toEqual({ reason: 'larger than 99 bytes' });
  });
});
