// `GET /v2/test-collections` is read as one page at the largest limit (`limit=100`, "newest
// first"); an answer longer than the limit it was asked for is none the definition allows, and
// must not grow the families past the newest 100.
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import { readTestCollections } from '../../../src/poller/v2/v2TestCollectionsRead.js';
import { Secret } from '../../../src/secrets/secret.js';
import { TrunkV2Client } from '../../../src/trunk/v2Client.js';
import { cleanUp, makeClient, sendJson, startApiServer } from '../../trunk/harness.js';

afterEach(cleanUp);

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
    // 150 collections in one page answered to `limit=100`, newest first, through the real client.
    const data = Array.from({ length: 150 }, (_, index) => ({
      id: `c0ffee00-0000-4000-8000-${String(index).padStart(12, '0')}`,
      name: `Suite ${String(index)}`,
      description: null,
      testCaseCount: index,
      quarantineEnabled: false,
      autoQuarantineEnabled: false,
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
    }));
    const server = await startApiServer((_req, res) => {
      sendJson(res, 200, { data, nextCursor: null, hasMore: false });
    }, '');
    const { client } = makeClient(server.origin, {
      token: undefined,
      apiKey: new Secret('trunk_v2_collections-key'),
    });
    const { logger, lines } = capturedLogger();
    const read = await readTestCollections(
      new TrunkV2Client(client),
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
