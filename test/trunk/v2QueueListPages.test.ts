// A queue's lists answered by a real local server whose cursor never ends, 100 rows a page. Each
// walk keeps its rows until it ends. The live entries are read on every poll of every queue, and a
// queue of thousands of entries is none Trunk has: 50 pages (5,000 entries). A list over a window
// (testing results here) stops at 100 pages (10,000 rows), rather than 1,000 (100,000 rows).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { Secret } from '../../src/secrets/secret.js';
import { TrunkV2Client } from '../../src/trunk/v2Client.js';
import { V2PagingError } from '../../src/trunk/v2Paging.js';
import { entryRow, testingResult } from '../support/queueEntryRows.js';
import { cleanUp, makeClient, sendJson, startApiServer } from './harness.js';

afterEach(cleanUp);

const QUEUE = { id: 'mq_7f3a', repo: 'github.com/acme/web', branch: 'main' };
const LIVE = { states: ['notReady', 'pending', 'testing', 'testsPassed', 'pendingFailure'] };

async function endlessEntries(): Promise<{ v2: TrunkV2Client; calls: () => number }> {
  let calls = 0;
  const server = await startApiServer((_req: IncomingMessage, res: ServerResponse) => {
    calls += 1;
    const data = Array.from({ length: 100 }, (_, index) =>
      entryRow(calls * 100 + index, 'pending', 1_767_261_600),
    );
    sendJson(res, 200, { data, nextCursor: `cursor-${String(calls)}`, hasMore: true });
  }, '');
  const { client } = makeClient(server.origin, {
    token: undefined,
    apiKey: new Secret('trunk_v2_live-pages-key'),
  });
  return { v2: new TrunkV2Client(client), calls: () => calls };
}

describe("pages of a queue's lists", () => {
  it('stops a walk of the live entries whose cursor never ends after 50 pages', async () => {
    const { v2, calls } = await endlessEntries();
    await expect(v2.listQueuePullRequests(QUEUE, LIVE)).rejects.toThrow(V2PagingError);
    expect(calls()).toBe(50);
  });

  it('stops a walk of the testing results whose cursor never ends after 100 pages', async () => {
    let calls = 0;
    const server = await startApiServer((_req: IncomingMessage, res: ServerResponse) => {
      calls += 1;
      const data = Array.from({ length: 100 }, (_, index) =>
        testingResult(calls * 100 + index, 1_767_261_600, 'passed', 'merged'),
      );
      sendJson(res, 200, { data, nextCursor: `cursor-${String(calls)}`, hasMore: true });
    }, '');
    const { client } = makeClient(server.origin, {
      token: undefined,
      apiKey: new Secret('trunk_v2_live-pages-key'),
    });
    const v2 = new TrunkV2Client(client);
    await expect(v2.listTestingResults(QUEUE, '2026-01-01T00:00:00.000Z')).rejects.toThrow(
      V2PagingError,
    );
    expect(calls).toBe(100);
  });
});
