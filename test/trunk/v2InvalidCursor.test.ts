// A v2 list walk whose later page Trunk answers `400 INVALID_CURSOR`: "Cursors are opaque,
// forward-only and tied to the endpoint and filters that made them; a bad cursor is `400
// INVALID_CURSOR`" (trunk-api-v2.md). Page 1 is answered and gives a cursor; page 2, asked with it,
// is refused (fixtures/v2/invalid-cursor-answer-quoting-the-cursor.json, whose message quotes the
// cursor). The walk stopped early: one `paging_stopped`, beside the 400 every answer counts.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { Secret } from '../../src/secrets/secret.js';
import { TrunkApiError } from '../../src/trunk/errors.js';
import { TrunkV2Client } from '../../src/trunk/v2Client.js';
import { V2PagingError } from '../../src/trunk/v2Paging.js';
import {
  cleanUp,
  makeClient,
  rejectionOf,
  sendJson,
  startApiServer,
  type Handler,
} from './harness.js';
import { everyV2ListWalk } from './v2ListWalks.js';

afterEach(cleanUp);

const QUEUE = { id: 'mq_7f3a', repo: 'github.com/acme/web', branch: 'main' };
const LIVE = { states: ['pending'] };
/** The cursor page 1 gives, which the refusal quotes. */
const CURSOR = 'eyJhZnRlciI6InByLTEiLCJ0dGwiOjYwfQ';
const refusal: unknown = JSON.parse(
  readFileSync(
    new URL('fixtures/v2/invalid-cursor-answer-quoting-the-cursor.json', import.meta.url),
    'utf8',
  ),
);

function v2Client(origin: string) {
  const { client, observer } = makeClient(origin, {
    token: undefined,
    apiKey: new Secret('trunk_v2_invalid-cursor-key'),
  });
  return { v2: new TrunkV2Client(client), observer };
}

function pullRequest(number: number): unknown {
  return {
    number,
    queueEntry: { state: 'pending', stateChangedAt: '2026-11-24T10:00:00Z' },
  };
}

/** Page 1 (no cursor) with `rows` and CURSOR; any page asked with a cursor refused. */
function refusedAtPage2(rows: readonly unknown[]): Handler {
  return (req, res) => {
    const cursor = new URL(req.url ?? '/', 'http://x').searchParams.get('cursor');
    if (cursor === null) sendJson(res, 200, { data: rows, nextCursor: CURSOR, hasMore: true });
    else sendJson(res, 400, refusal, { 'x-request-id': 'req-cursor-2' });
  };
}

describe('a v2 walk whose cursor Trunk refuses', () => {
  it('stops at that page: one paging_stopped, one HTTP 400, the read failed naming the list, its endpoint and the page', async () => {
    const server = await startApiServer(refusedAtPage2([pullRequest(1)]), '');
    const { v2, observer } = v2Client(server.origin);
    const error = await rejectionOf(v2.listQueuePullRequests(QUEUE, LIVE));

    expect(error).toBeInstanceOf(TrunkApiError);
    // Not a paging the exporter distrusts: a read over a window asks for it again.
    expect(error).not.toBeInstanceOf(V2PagingError);
    expect(error).toMatchObject({ status: 400, code: 'INVALID_CURSOR', requestId: 'req-cursor-2' });
    expect(observer.anomalies).toEqual([
      { endpoint: 'v2/merge-queues/{id}/pull-requests', kind: 'paging_stopped', count: 1 },
    ]);
    expect(observer.codes()).toEqual(['200', '400']);
    expect(String(error)).toContain(
      'the pull requests of github.com/acme/web main (GET /v2/merge-queues/{id}/pull-requests): Trunk refused the cursor of page 2 (HTTP 400 INVALID_CURSOR); stopped (request id req-cursor-2, 1 attempt)',
    );
    // The cursor is Trunk's data: the message says which page, never what its cursor was.
    expect(String(error)).not.toContain(CURSOR);
    // Neither retried (a 400 would be again) nor walked again from page 1.
    expect(server.requests.map((request) => request.url)).toEqual([
      '/v2/merge-queues/mq_7f3a/pull-requests?state=pending&limit=100',
      `/v2/merge-queues/mq_7f3a/pull-requests?state=pending&limit=100&cursor=${CURSOR}`,
    ]);
  });

  it('counts it under the endpoint of each list walked page by page', async () => {
    const server = await startApiServer(refusedAtPage2([]), '');
    const { v2, observer } = v2Client(server.origin);
    const walks = everyV2ListWalk(v2);
    for (const { walk, named } of walks) {
      const error = await rejectionOf(walk());
      expect(String(error)).toContain(
        `${named}: Trunk refused the cursor of page 2 (HTTP 400 INVALID_CURSOR); stopped`,
      );
    }
    expect(observer.anomalies).toEqual(
      walks.map(({ endpoint }) => ({ endpoint, kind: 'paging_stopped', count: 1 })),
    );
    expect(observer.codes()).toEqual(walks.flatMap(() => ['200', '400']));
  });

  it('is no stopped walk on the first page, which sends no cursor: the 400 is counted, no paging_stopped', async () => {
    const server = await startApiServer((_req, res) => {
      sendJson(res, 400, refusal);
    }, '');
    const { v2, observer } = v2Client(server.origin);
    const error = await rejectionOf(v2.listQueuePullRequests(QUEUE, LIVE));
    expect(error).toMatchObject({ status: 400, code: 'INVALID_CURSOR' });
    expect(String(error)).not.toContain('refused the cursor');
    expect(observer.anomalies).toEqual([]);
    expect(observer.codes()).toEqual(['400']);
  });

  it('is no stopped walk when a later page is refused for another reason (VALIDATION_FAILED)', async () => {
    const server = await startApiServer((req, res) => {
      if (req.url?.includes('cursor=') !== true) {
        sendJson(res, 200, { data: [pullRequest(1)], nextCursor: CURSOR, hasMore: true });
      } else {
        sendJson(res, 400, { error: { code: 'VALIDATION_FAILED', message: 'state is unknown' } });
      }
    }, '');
    const { v2, observer } = v2Client(server.origin);
    const error = await rejectionOf(v2.listQueuePullRequests(QUEUE, LIVE));
    expect(error).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    expect(observer.anomalies).toEqual([]);
    expect(observer.codes()).toEqual(['200', '400']);
  });
});
