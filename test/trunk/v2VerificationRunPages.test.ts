// `GET /v2/merge-queues/{id}/verification-runs` answered by a real local server whose cursor never
// ends. A failed read is made again at every poll, so the walk's bound is what such an upstream
// costs per poll: a read reaches back a day at most, a few thousand runs, so 50 pages of 100.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { Secret } from '../../src/secrets/secret.js';
import { TrunkV2Client } from '../../src/trunk/v2Client.js';
import { V2PagingError } from '../../src/trunk/v2Paging.js';
import { run } from '../support/verificationRunRows.js';
import { cleanUp, makeClient, sendJson, startApiServer } from './harness.js';

afterEach(cleanUp);

const QUEUE = { id: 'mq_7f3a', repo: 'github.com/acme/web', branch: 'main' };

describe('verification-run pages', () => {
  it('stops a walk whose cursor never ends after 50 pages', async () => {
    let calls = 0;
    const server = await startApiServer((_req: IncomingMessage, res: ServerResponse) => {
      calls += 1;
      // One run a page, each new, each page with a new cursor.
      const row = run({
        id: `run-${String(calls)}`,
        status: 'succeeded',
        createdAt: 1_767_261_600 - calls,
        updatedAt: 1_767_261_600,
        tested: [calls],
      });
      sendJson(res, 200, { data: [row], nextCursor: `cursor-${String(calls)}`, hasMore: true });
    }, '');
    const { client } = makeClient(server.origin, {
      token: undefined,
      apiKey: new Secret('trunk_v2_run-pages-key'),
    });
    const v2 = new TrunkV2Client(client);
    await expect(v2.listVerificationRuns(QUEUE, '2026-01-01T00:00:00.000Z')).rejects.toThrow(
      V2PagingError,
    );
    expect(calls).toBe(50);
  });
});
