import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Secret } from '../../src/secrets/secret.js';
import { TrunkApiError } from '../../src/trunk/errors.js';
import { TrunkV2Client } from '../../src/trunk/v2Client.js';
import {
  V2_MAX_CURSOR_LENGTH,
  V2_MAX_EMPTY_PAGES_IN_A_ROW,
  V2PagingError,
} from '../../src/trunk/v2Paging.js';
import {
  TOKEN,
  cleanUp,
  makeClient,
  rejectionOf,
  sendJson,
  sendText,
  startApiServer,
} from './harness.js';
import { everyV2ListWalk } from './v2ListWalks.js';

const API_KEY = 'trunk_v2_k3y_SECRET_9a8b7c';
const QUEUE = { id: 'mq_7f3a', repo: 'github.com/acme/web', branch: 'main' };
/** A fixture of fixtures/v2/, parsed. */
function v2Fixture(name: string): unknown {
  return JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'v2', name), 'utf8'));
}

const queueFixture = v2Fixture('merge-queue-unknown-enums.json');

function v2Client(apiUrl: string, overrides: Parameters<typeof makeClient>[1] = {}) {
  const { client, observer } = makeClient(apiUrl, { apiKey: new Secret(API_KEY), ...overrides });
  return { v2: new TrunkV2Client(client), client, observer };
}

/** A walk of a queue's pull requests stopped, as the exporter counts it. */
const PAGING_STOPPED_PULL_REQUESTS = {
  endpoint: 'v2/merge-queues/{id}/pull-requests',
  kind: 'paging_stopped',
  count: 1,
};

function pullRequest(number: number): unknown {
  return {
    number,
    sha: `sha${number}`,
    title: `PR ${number}`,
    queueEntry: { state: 'testing', stateChangedAt: '2026-11-24T10:00:00Z', skipsTheLine: false },
  };
}

afterEach(cleanUp);

describe('TrunkV2Client', () => {
  it('reads with GET and the API key as a Bearer token, at /v2 under the host, never the v1 token', async () => {
    const server = await startApiServer((_req, res) => {
      sendJson(res, 200, { data: [queueFixture], nextCursor: null, hasMore: false });
    }, '');
    // A host given with the old /v1 suffix still reaches /v2 at the host.
    const { v2 } = v2Client(`${server.origin}/v1`);
    const queues = await v2.listMergeQueues();
    expect(queues.map((queue) => queue.id)).toEqual(['mq_7f3a']);
    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request?.method).toBe('GET');
    expect(request?.url).toBe('/v2/merge-queues?limit=100');
    expect(request?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request?.headers['x-api-token']).toBeUndefined();
    expect(request?.body).toBe('');
  });

  it.each([302, 307, 308])(
    'follows no %i to another origin: the key goes nowhere else, the read fails naming where it points',
    async (status) => {
      const elsewhere = await startApiServer(() => {
        throw new Error('a redirect was followed');
      }, '');
      const server = await startApiServer((_req, res) => {
        res.writeHead(status, { location: `${elsewhere.origin}/v2/merge-queues?key=${API_KEY}` });
        res.end();
      }, '');
      const { v2, observer } = v2Client(server.origin);

      const error = await rejectionOf(v2.listMergeQueues());

      expect(error).toMatchObject({ reason: 'http_status', status, attempts: 1 });
      expect((error as Error).message).toContain(
        `HTTP ${String(status)} to ${elsewhere.origin}/v2/merge-queues?key=<redacted> (not followed: check trunk.apiUrl)`,
      );
      expect((error as Error).message).not.toContain(API_KEY.slice(0, 8));
      expect(elsewhere.requests).toHaveLength(0);
      expect(observer.codes()).toEqual([String(status)]);
    },
  );

  it('walks every page by cursor, with the live states and limit=100 on each', async () => {
    const server = await startApiServer((req, res) => {
      const url = new URL(req.url ?? '', 'http://x');
      const cursor = url.searchParams.get('cursor');
      if (cursor === null)
        sendJson(res, 200, { data: [pullRequest(1)], nextCursor: 'c2', hasMore: true });
      else if (cursor === 'c2')
        sendJson(res, 200, { data: [pullRequest(2)], nextCursor: 'c3', hasMore: true });
      else sendJson(res, 200, { data: [pullRequest(3)], nextCursor: null, hasMore: false });
    }, '');
    const { v2 } = v2Client(server.origin);
    const rows = await v2.listQueuePullRequests(QUEUE, { states: ['notReady', 'testing'] });
    expect(rows.map((row) => row.number)).toEqual([1, 2, 3]);
    expect(server.requests.map((request) => request.url)).toEqual([
      '/v2/merge-queues/mq_7f3a/pull-requests?state=notReady%2Ctesting&limit=100',
      '/v2/merge-queues/mq_7f3a/pull-requests?state=notReady%2Ctesting&limit=100&cursor=c2',
      '/v2/merge-queues/mq_7f3a/pull-requests?state=notReady%2Ctesting&limit=100&cursor=c3',
    ]);
  });

  it('fails a walk whose page says hasMore without a nextCursor, rather than count it short', async () => {
    // hasMore: "True when another page is available"; nextCursor: "null on the last page".
    const server = await startApiServer((_req, res) => {
      sendJson(res, 200, { data: [pullRequest(1)], nextCursor: null, hasMore: true });
    }, '');
    const { v2, observer } = v2Client(server.origin);
    const error = await rejectionOf(v2.listQueuePullRequests(QUEUE, { states: ['pending'] }));
    expect(error).toBeInstanceOf(V2PagingError);
    expect(observer.anomalies).toEqual([PAGING_STOPPED_PULL_REQUESTS]);
    expect(String(error)).toContain(
      'the pull requests of github.com/acme/web main (GET /v2/merge-queues/{id}/pull-requests): page 1 says hasMore but gives no nextCursor',
    );
  });

  it('follows a nextCursor given beside hasMore: false to the rows behind it', async () => {
    const server = await startApiServer((req, res) => {
      const cursor = new URL(req.url ?? '/', 'http://x').searchParams.get('cursor');
      if (cursor === null)
        sendJson(res, 200, { data: [pullRequest(1)], nextCursor: 'c2', hasMore: false });
      else sendJson(res, 200, { data: [pullRequest(2)], nextCursor: null, hasMore: false });
    }, '');
    const { v2 } = v2Client(server.origin);
    const rows = await v2.listQueuePullRequests(QUEUE, { states: ['pending'] });
    expect(rows.map((row) => row.number)).toEqual([1, 2]);
  });

  it('stops a walk whose cursor repeats instead of looping', async () => {
    const server = await startApiServer((_req, res) => {
      sendJson(res, 200, { data: [pullRequest(1)], nextCursor: 'same', hasMore: true });
    }, '');
    const { v2, observer } = v2Client(server.origin);
    const error = await rejectionOf(v2.listQueuePullRequests(QUEUE, { states: ['pending'] }));
    expect(error).toBeInstanceOf(V2PagingError);
    expect(observer.anomalies).toEqual([PAGING_STOPPED_PULL_REQUESTS]);
    expect(String(error)).toContain(
      'the pull requests of github.com/acme/web main (GET /v2/merge-queues/{id}/pull-requests): a cursor repeated after 2 pages',
    );
    expect(server.requests).toHaveLength(2);
  });

  it('counts each walk stopped in paging_stopped under its own endpoint, the endpoint named in the message', async () => {
    // Every list walked page by page, each answering empty pages that repeat one cursor.
    const server = await startApiServer((_req, res) => {
      sendJson(res, 200, { data: [], nextCursor: 'same', hasMore: true });
    }, '');
    const { v2, observer } = v2Client(server.origin);
    const walks = everyV2ListWalk(v2);
    for (const { walk, named } of walks) {
      const error = await rejectionOf(walk());
      expect(error).toBeInstanceOf(V2PagingError);
      expect(String(error)).toContain(`${named}: a cursor repeated after 2 pages`);
    }
    expect(observer.anomalies).toEqual(
      walks.map(({ endpoint }) => ({ endpoint, kind: 'paging_stopped', count: 1 })),
    );
  });

  it("counts as invalid_field each queue and queue-entry label value over 200 characters, as API v1's are", async () => {
    // Cut where each becomes a label (v2Vocabulary.ts), as through API v1, where each is counted too.
    const long = 'x'.repeat(201);
    const queue = queueFixture as { mode: string; config: { mergeMethod: string } };
    const overlongQueue = { ...queue, mode: long, config: { ...queue.config, mergeMethod: long } };
    const row = {
      number: 1,
      queueEntry: {
        state: long,
        stateChangedAt: '2026-11-24T10:00:00Z',
        priorityName: long,
        readiness: { mergeabilityDetails: { reasons: [{ code: long }, { code: 'fine' }] } },
      },
    };
    const server = await startApiServer((req, res) => {
      if (req.url?.startsWith('/v2/merge-queues?') === true)
        sendJson(res, 200, { data: [overlongQueue], nextCursor: null, hasMore: false });
      else if (req.url?.includes('/pull-requests') === true)
        sendJson(res, 200, { data: [row, pullRequest(2)], nextCursor: null, hasMore: false });
      else sendJson(res, 200, overlongQueue);
    }, '');
    const { v2, observer } = v2Client(server.origin);
    await v2.listMergeQueues();
    await v2.getMergeQueue(QUEUE);
    await v2.listQueuePullRequests(QUEUE, { states: ['pending'] });
    expect(observer.anomalies).toEqual([
      { endpoint: 'v2/merge-queues', kind: 'invalid_field', count: 2 },
      { endpoint: 'v2/merge-queues/{id}', kind: 'invalid_field', count: 2 },
      { endpoint: 'v2/merge-queues/{id}/pull-requests', kind: 'invalid_field', count: 3 },
    ]);
  });

  it('stops a walk at a cursor longer than any cursor, instead of keeping one per page', async () => {
    // A walk keeps every cursor it met to tell a cycle: a list answering a cursor of megabytes a
    // page would hold gigabytes by its last page.
    const server = await startApiServer((_req, res) => {
      const cursor = `${String(server.requests.length)}-`.padEnd(V2_MAX_CURSOR_LENGTH + 1, 'z');
      sendJson(res, 200, { data: [pullRequest(1)], nextCursor: cursor, hasMore: true });
    }, '');
    const { v2, observer } = v2Client(server.origin);
    const error = await rejectionOf(v2.listQueuePullRequests(QUEUE, { states: ['pending'] }));
    expect(error).toBeInstanceOf(V2PagingError);
    expect(observer.anomalies).toEqual([PAGING_STOPPED_PULL_REQUESTS]);
    expect(String(error)).toContain(
      `the pull requests of github.com/acme/web main (GET /v2/merge-queues/{id}/pull-requests): page 1 gives a nextCursor of ${String(V2_MAX_CURSOR_LENGTH + 1)} characters`,
    );
    // The cursor is Trunk's data, of any length: the message says how long, never what.
    expect(String(error)).not.toContain('zzzz');
    expect(server.requests).toHaveLength(1);
  });

  it('follows empty pages that still have a next cursor to the rows behind them', async () => {
    const server = await startApiServer((req, res) => {
      const cursor = new URL(req.url ?? '/', 'http://x').searchParams.get('cursor');
      if (cursor === null) sendJson(res, 200, { data: [], nextCursor: 'e1', hasMore: true });
      else if (cursor === 'e1') sendJson(res, 200, { data: [], nextCursor: 'e2', hasMore: true });
      else sendJson(res, 200, { data: [pullRequest(7)], nextCursor: null, hasMore: false });
    }, '');
    const { v2 } = v2Client(server.origin);
    const rows = await v2.listQueuePullRequests(QUEUE, { states: ['pending'] });
    expect(rows.map((row) => row.number)).toEqual([7]);
    expect(server.requests).toHaveLength(3);
  });

  it('finds a repository at its provider URL behind an empty page with a cursor', async () => {
    // `GET /v2/repositories?providerUrl=`: "a genuine empty result" answers 404; this answer's first
    // page has no row and a cursor, its second acme/web.
    const pages = v2Fixture('repository-at-a-provider-url-behind-an-empty-page.json') as unknown[];
    const server = await startApiServer((req, res) => {
      const cursor = new URL(req.url ?? '/', 'http://x').searchParams.get('cursor');
      sendJson(res, 200, pages[cursor === null ? 0 : 1]);
    }, '');
    const { v2 } = v2Client(server.origin);
    expect(await v2.hasRepository('https://github.com/acme/web')).toBe(true);
    expect(server.requests).toHaveLength(2);
  });

  it('stops a walk of empty pages with ever new cursors after V2_MAX_EMPTY_PAGES_IN_A_ROW + 1 pages', async () => {
    let page = 0;
    const server = await startApiServer((_req, res) => {
      page += 1;
      sendJson(res, 200, { data: [], nextCursor: `empty-${page}`, hasMore: true });
    }, '');
    const { v2, observer } = v2Client(server.origin);
    const error = await rejectionOf(v2.listQueuePullRequests(QUEUE, { states: ['pending'] }));
    expect(error).toBeInstanceOf(V2PagingError);
    expect(observer.anomalies).toEqual([PAGING_STOPPED_PULL_REQUESTS]);
    expect(String(error)).toContain(
      `the pull requests of github.com/acme/web main (GET /v2/merge-queues/{id}/pull-requests): ${V2_MAX_EMPTY_PAGES_IN_A_ROW + 1} empty pages in a row`,
    );
    expect(server.requests).toHaveLength(V2_MAX_EMPTY_PAGES_IN_A_ROW + 1);
  });

  it('stops a walk over a window after 100 pages of rows, however consistent its cursors', async () => {
    let page = 0;
    const server = await startApiServer((_req, res) => {
      page += 1;
      sendJson(res, 200, { data: [pullRequest(page)], nextCursor: `page-${page}`, hasMore: true });
    }, '');
    const { v2, observer } = v2Client(server.origin);
    // A read of concluded entries (a window); the live entries stop at 50 (v2QueueListPages.test.ts).
    const error = await rejectionOf(
      v2.listQueuePullRequests(QUEUE, { concludedAfter: '2026-01-01T00:00:00.000Z' }),
    );
    expect(error).toBeInstanceOf(V2PagingError);
    expect(observer.anomalies).toEqual([PAGING_STOPPED_PULL_REQUESTS]);
    expect(String(error)).toContain(
      'the pull requests of github.com/acme/web main (GET /v2/merge-queues/{id}/pull-requests): more than 100 pages; stopped',
    );
    expect(server.requests).toHaveLength(100);
  });

  it('walks an organization-wide test list past 1,000 pages, and stops an endless one after 5,000', async () => {
    // 1,002 pages of one quarantined test each, then the end; then a list whose cursor never ends.
    let page = 0;
    const endless = { on: false };
    const server = await startApiServer((_req, res) => {
      page += 1;
      const row = {
        id: `t-${page}`,
        repoId: 'repo-1',
        quarantineState: 'quarantined',
        codeowners: [],
      };
      const last = !endless.on && page === 1002;
      sendJson(res, 200, { data: [row], nextCursor: last ? null : `page-${page}`, hasMore: !last });
    }, '');
    const { v2, observer } = v2Client(server.origin, { maxRequestsPerSecond: 1_000_000 });
    let rows = 0;
    await v2.listTests({ quarantineState: 'quarantined' }, 'quarantined tests', (tests) => {
      rows += tests.length;
    });
    expect(rows).toBe(1002);
    expect(server.requests).toHaveLength(1002);
    // A walk to its end stops nothing.
    expect(observer.anomalies).toEqual([]);

    page = 0;
    endless.on = true;
    const error = await rejectionOf(
      v2.listTests({ quarantineState: 'quarantined' }, 'quarantined tests', () => undefined),
    );
    expect(error).toBeInstanceOf(V2PagingError);
    expect(String(error)).toContain(
      'the list of quarantined tests (GET /v2/tests): more than 5000 pages; stopped',
    );
    expect(server.requests).toHaveLength(1002 + 5000);
    expect(observer.anomalies).toEqual([
      { endpoint: 'v2/tests', kind: 'paging_stopped', count: 1 },
    ]);
  }, 60_000);

  it('puts the error code of the envelope into the error, keeps the HTTP status, and never the key', async () => {
    const server = await startApiServer((_req, res) => {
      sendJson(res, 404, {
        error: { code: 'MERGE_QUEUE_NOT_FOUND', message: `no queue mq_7f3a (key ${API_KEY})` },
      });
    }, '');
    const { v2, observer } = v2Client(server.origin);
    const error = await rejectionOf(v2.listQueuePullRequests(QUEUE, { states: ['pending'] }));
    expect(error).toBeInstanceOf(TrunkApiError);
    expect(error).toMatchObject({ status: 404, code: 'MERGE_QUEUE_NOT_FOUND' });
    expect(String(error)).toContain(
      'HTTP 404 MERGE_QUEUE_NOT_FOUND: "no queue mq_7f3a (key <redacted>)"',
    );
    expect(String(error)).not.toContain(API_KEY);
    expect(observer.finished).toEqual([
      expect.objectContaining({ endpoint: 'v2/merge-queues/{id}/pull-requests', code: '404' }),
    ]);
  });

  it("keeps neither the key nor more than a label's length of an envelope's code in the error's code", async () => {
    // An edge that echoes the request into the envelope: error.code is a field of the error, apart
    // from its scrubbed message, and whatever reports the error may show it.
    const server = await startApiServer((req, res) => {
      const code = `BAD_AUTH ${req.headers.authorization ?? ''} ${'X'.repeat(10_000)}`;
      sendJson(res, 401, { error: { code, message: 'no' } });
    }, '');
    const { v2 } = v2Client(server.origin);
    const error = await rejectionOf(v2.listQueuePullRequests(QUEUE, { states: ['pending'] }));
    expect(error).toBeInstanceOf(TrunkApiError);
    const { code } = error as TrunkApiError;
    expect(code).toMatch(/^BAD_AUTH Bearer <redacted> X+…$/);
    expect(code?.length).toBe(200);
    expect(String(error)).not.toContain(API_KEY);
  });

  it('reads a 429 without a body by its status, and retries it', async () => {
    const server = await startApiServer((_req, res, index) => {
      if (index === 0) sendText(res, 429, '');
      else sendJson(res, 200, { data: [], nextCursor: null, hasMore: false });
    }, '');
    const { v2, observer } = v2Client(server.origin);
    const tests: unknown[] = [];
    await v2.listTests({ quarantineState: 'quarantined' }, 'quarantined tests', (rows) =>
      tests.push(...rows),
    );
    expect(tests).toEqual([]);
    expect(observer.codes()).toEqual(['429', '200']);
    expect(server.requests.map((request) => request.url)).toEqual([
      '/v2/tests?quarantineState=quarantined&limit=100',
      '/v2/tests?quarantineState=quarantined&limit=100',
    ]);
  });

  it('fails a test walk whose later page answers 404 rather than walking /v2/test-cases again, whose rows would count twice', async () => {
    const row = { repoId: 'repo-1', status: 'flaky', codeowners: [] };
    const server = await startApiServer((_req, res, index) => {
      if (index === 0) sendJson(res, 200, { data: [row], nextCursor: 'page-2', hasMore: true });
      else sendText(res, 404, '');
    }, '');
    const { v2 } = v2Client(server.origin);
    const tests: unknown[] = [];
    await expect(
      v2.listTests({ statuses: ['flaky'] }, 'flaky tests', (rows) => tests.push(...rows)),
    ).rejects.toThrow(/404/);
    expect(tests).toHaveLength(1);
    expect(server.requests.map((request) => request.url.split('?')[0])).toEqual([
      '/v2/tests',
      '/v2/tests',
    ]);
  });

  it('answers undefined for a queue id that is gone (404)', async () => {
    const server = await startApiServer((_req, res) => {
      sendJson(res, 404, { error: { code: 'MERGE_QUEUE_NOT_FOUND', message: 'gone' } });
    }, '');
    const { v2 } = v2Client(server.origin);
    expect(await v2.getMergeQueue(QUEUE)).toBeUndefined();
  });

  it('sends nothing when no API key is configured, and says which setting is missing', async () => {
    const server = await startApiServer((_req, res) => {
      sendJson(res, 200, { data: [], nextCursor: null });
    }, '');
    const { client } = makeClient(server.origin, { token: new Secret(TOKEN) });
    const error = await rejectionOf(new TrunkV2Client(client).listMergeQueues());
    expect(error).toMatchObject({ reason: 'no_credential' });
    expect(String(error)).toContain('API v2 needs trunk.apiKey, which is not set');
    expect(server.requests).toHaveLength(0);
  });

  it('reads testing results since an instant, at limit=100, following the cursor to the last page', async () => {
    const pages = v2Fixture('testing-results-row-listed-twice-across-pages.json') as unknown[];
    const server = await startApiServer((req, res) => {
      sendJson(res, 200, (req.url ?? '').includes('cursor=') ? pages[1] : pages[0]);
    }, '');
    const { v2 } = v2Client(server.origin);
    const rows = await v2.listTestingResults(QUEUE, '2026-11-24T09:00:00.000Z');

    // Rows as listed: telling a repeated attempt apart is the reader's (it knows a row's identity).
    expect(rows.map((row) => row.pullRequestNumber)).toEqual([41, 42, 42, 43]);
    expect(server.requests.map((request) => request.url)).toEqual([
      '/v2/merge-queues/mq_7f3a/testing-results?since=2026-11-24T09%3A00%3A00.000Z&limit=100',
      '/v2/merge-queues/mq_7f3a/testing-results?since=2026-11-24T09%3A00%3A00.000Z&limit=100&cursor=page-2',
    ]);
  });
});
