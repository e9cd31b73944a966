// `GET /v2/test-collections` is read as one page at the largest limit (`limit=100`, "newest
// first"); an answer longer than the limit it was asked for is none the definition allows, and
// must not grow the families past the newest 100.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import { readTestCollections } from '../../../src/poller/v2/v2TestCollectionsRead.js';
import type { V2TestCollectionsPage } from '../../../src/trunk/v2Client.js';

/** A logger whose lines the test reads. */
function capturedLogger() {
  let lines = '';
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines += chunk.toString();
      callback();
    },
  });
  return {
    logger: createLogger({ level: 'info', destination, secrets: () => [] }),
    lines: () => lines,
  };
}

describe('readTestCollections', () => {
  it('reads the newest 100 of a page that lists more than the limit, and says the rest are left out', async () => {
    const collections = Array.from({ length: 150 }, (_, index) => ({
      name: `Suite ${String(index)}`,
      testCaseCount: index,
      quarantineEnabled: false,
    }));
    const page: V2TestCollectionsPage = { collections, more: false };
    const { logger, lines } = capturedLogger();
    const read = await readTestCollections(
      { listTestCollections: () => Promise.resolve(page) },
      { now: () => 1_800_000_000, logger },
      {},
    );
    expect(read.collections).toHaveLength(100);
    expect(read.collections.at(-1)).toEqual({
      name: 'Suite 99',
      testCases: 99,
      quarantineEnabled: false,
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines()).toContain('more than 100 test collections');
  });
});
