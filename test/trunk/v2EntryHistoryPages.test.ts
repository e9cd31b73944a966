// `GET /v2/queue-entry-history` answered by a real local server the way a broken or hostile one
// might page it. The definition: "Returns up to 50 pull requests' complete queue-entry timelines in
// one response", "`limit` counts pull requests, not transitions": one page answers for every id
// asked, so a read follows a cursor only until each id has its group, never for ids not asked.
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { Secret } from '../../src/secrets/secret.js';
import { TrunkV2Client } from '../../src/trunk/v2Client.js';
import { cleanUp, makeClient, sendJson, startApiServer } from './harness.js';

afterEach(cleanUp);

const A = '6f1d2c3b-4a59-4e6f-8a7b-9c0d1e2f3a4b';
const B = '7a2e3d4c-5b60-4f71-9b8c-0d1e2f3a4b5c';
const transition = (state: string, changedAt: string, reason: string | null) => ({
  state,
  changedAt,
  reason,
});
const testingA = transition('testing', '2026-07-28T11:10:00.000Z', null);
const failedA = transition('failed', '2026-07-28T11:20:00.000Z', 'TEST_RUN_TIMEOUT');

/** The pages of a fixture of test/trunk/fixtures/v2/ holding a read's pages in cursor order. */
function pagesAt(name: string): unknown[] {
  return JSON.parse(
    readFileSync(join(import.meta.dirname, 'fixtures', 'v2', name), 'utf8'),
  ) as unknown[];
}

/** A v2 client of a server answering the n-th call (from 0) with `page(n)`. */
async function historyServer(page: (call: number) => unknown) {
  let calls = 0;
  const server = await startApiServer((_req: IncomingMessage, res: ServerResponse) => {
    sendJson(res, 200, page(calls));
    calls += 1;
  }, '');
  const { client, observer } = makeClient(server.origin, {
    token: undefined,
    apiKey: new Secret('trunk_v2_history-pages-key'),
  });
  return { v2: new TrunkV2Client(client), observer, calls: () => calls };
}

describe('queue-entry history pages', () => {
  it('joins a group listed on two pages into one timeline, each transition once', async () => {
    const { v2, calls } = await historyServer((call) =>
      call === 0
        ? { data: [{ pullRequestId: A, transitions: [testingA] }], nextCursor: 'c1', hasMore: true }
        : {
            data: [
              { pullRequestId: A, transitions: [testingA, failedA] },
              { pullRequestId: B, transitions: [] },
            ],
            nextCursor: null,
            hasMore: false,
          },
    );
    const groups = await v2.listQueueEntryHistory([A, B]);
    expect(
      groups.map((group) => [group.pullRequestId, group.transitions.map(({ state }) => state)]),
    ).toEqual([
      [A, ['testing', 'failed']],
      [B, []],
    ]);
    expect(calls()).toBe(2);
  });

  it('follows empty pages with a cursor to the groups behind them, as every walk follows them', async () => {
    // Two pages with no group, each with a next cursor ("Opaque cursor for the next page, or null
    // on the last page"): the timelines of A (tested, then failed on a timeout) and B (never
    // enqueued: "an empty group") are on the third.
    const pages = pagesAt('queue-entry-history-behind-two-empty-pages.json');
    const { v2, observer, calls } = await historyServer((call) => pages[call]);
    const groups = await v2.listQueueEntryHistory([A, B]);
    expect(
      groups.map((group) => [
        group.pullRequestId,
        group.transitions.map(({ state, reason }) => [state, reason ?? null]),
      ]),
    ).toEqual([
      [
        A,
        [
          ['testing', null],
          ['failed', 'TEST_RUN_TIMEOUT'],
        ],
      ],
      [B, []],
    ]);
    expect(calls()).toBe(3);
    expect(observer.anomalies).toEqual([]);
  });

  it('stops once every id asked has its group, whatever cursor comes with it', async () => {
    const { v2, calls } = await historyServer(() => ({
      data: [{ pullRequestId: A, transitions: [testingA, failedA] }],
      nextCursor: 'again-and-again',
      hasMore: true,
    }));
    const groups = await v2.listQueueEntryHistory([A]);
    expect(groups.map((group) => group.pullRequestId)).toEqual([A]);
    expect(calls()).toBe(1);
  });

  it('leaves out groups of ids not asked, and follows a cursor at most one page per id asked', async () => {
    // Each page: 50 groups nobody asked for, and a new cursor.
    const { v2, calls } = await historyServer((call) => ({
      data: Array.from({ length: 50 }, (_, index) => ({
        pullRequestId: `00000000-0000-4000-8000-${String(call * 50 + index).padStart(12, '0')}`,
        transitions: [testingA],
      })),
      nextCursor: `cursor-${String(call)}`,
      hasMore: true,
    }));
    await expect(v2.listQueueEntryHistory([A, B])).rejects.toThrow(/more than 2 pages/);
    expect(calls()).toBe(2);
  });
});

describe('queue-entry history calls', () => {
  // "`GET /v2/pull-requests…` (single-PR reads, history, estimate): 5 per second per key".
  it('start one at a time, each at least 200 ms after the one before was answered, the pages of one read and the reads after it alike', async () => {
    const starts: number[] = [];
    const server = await startApiServer((_req: IncomingMessage, res: ServerResponse) => {
      starts.push(performance.now());
      // The first page answers for A and goes on; the second for B.
      const second = starts.length % 2 === 0;
      sendJson(res, 200, {
        data: [{ pullRequestId: second ? B : A, transitions: [testingA] }],
        nextCursor: second ? null : 'c1',
        hasMore: !second,
      });
    }, '');
    const { client } = makeClient(server.origin, {
      token: undefined,
      apiKey: new Secret('trunk_v2_history-spacing-key'),
    });
    const v2 = new TrunkV2Client(client);
    await v2.listQueueEntryHistory([A, B]);
    await v2.listQueueEntryHistory([A, B]);
    expect(starts).toHaveLength(4);
    // Each starts 200 ms after the one before was answered, so is received at least that long after it.
    const gaps = starts.slice(1).map((at, index) => at - (starts[index] ?? 0));
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(200);
  });

  // The same limit holds for a call Trunk failed: its retry is a request under the same key.
  it('keep 200 ms between a failed attempt and its retry, however short the backoff', async () => {
    const starts: number[] = [];
    const server = await startApiServer((_req: IncomingMessage, res: ServerResponse) => {
      starts.push(performance.now());
      // Two 500s (retried by the client), then the page.
      if (starts.length <= 2) {
        sendJson(res, 500, { error: { code: 'INTERNAL_ERROR', message: 'try again' } });
        return;
      }
      sendJson(res, 200, {
        data: [{ pullRequestId: A, transitions: [testingA] }],
        nextCursor: null,
        hasMore: false,
      });
    }, '');
    const { client } = makeClient(server.origin, {
      token: undefined,
      apiKey: new Secret('trunk_v2_history-retry-key'),
      retry: { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 4 },
    });
    await new TrunkV2Client(client).listQueueEntryHistory([A]);
    expect(starts).toHaveLength(3);
    const gaps = starts.slice(1).map((at, index) => at - (starts[index] ?? 0));
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(200);
  });
});
