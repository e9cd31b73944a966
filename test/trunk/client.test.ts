import { inspect } from 'node:util';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { TrunkApiError } from '../../src/trunk/errors.js';
import { queueResponse, pullRequestResponse, quarantinePageResponse } from './fixtures.js';
import {
  REPO,
  TOKEN,
  capturingLogger,
  cleanUp,
  makeClient,
  rejectionOf,
  sendJson,
  sendText,
  startApiServer,
} from './harness.js';

afterEach(cleanUp);

describe('TrunkClient requests', () => {
  it('posts getQueue to {base}/getQueue with the documented body and headers', async () => {
    const server = await startApiServer((_req, res) => {
      sendJson(res, 200, queueResponse());
    });
    const { client, observer } = makeClient(server.apiUrl, { version: '1.2.3' });

    const queue = await client.getQueue({ ...REPO, extra: 'never sent' } as typeof REPO, 'main');

    expect(queue.state).toBe('running');
    expect(queue.enqueuedPullRequests.map((pr) => pr.prNumber)).toEqual([11, 12, 13]);
    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/v1/getQueue');
    expect(JSON.parse(request?.body ?? '')).toEqual({
      repo: { host: 'github.com', owner: 'acme', name: 'web' },
      targetBranch: 'main',
    });
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['x-api-token']).toBe(TOKEN);
    expect(request?.headers['user-agent']).toBe('trunk-exporter/1.2.3');
    expect(observer.finished).toEqual([
      { endpoint: 'getQueue', code: '200', seconds: expect.any(Number) as number },
    ]);
    expect(observer.mismatches).toEqual([]);
  });

  it('posts getSubmittedPullRequest with repo, pr.number and targetBranch', async () => {
    const server = await startApiServer((_req, res) => {
      sendJson(res, 200, pullRequestResponse());
    });
    const { client } = makeClient(server.apiUrl);

    const pr = await client.getSubmittedPullRequest(REPO, 'release/1.x', 2147483647);

    expect(pr?.state).toBe('testing');
    expect(pr?.readiness?.gitHubMergeability).toBe('mergeable');
    expect(server.requests[0]?.url).toBe('/v1/getSubmittedPullRequest');
    expect(JSON.parse(server.requests[0]?.body ?? '')).toEqual({
      repo: { host: 'github.com', owner: 'acme', name: 'web' },
      pr: { number: 2147483647 },
      targetBranch: 'release/1.x',
    });
    expect(server.requests[0]?.headers['x-api-token']).toBe(TOKEN);
  });

  it('posts list-quarantined-tests with org_url_slug and page_query', async () => {
    const server = await startApiServer((_req, res) => {
      sendJson(res, 200, quarantinePageResponse());
    });
    const { client } = makeClient(server.apiUrl);

    const page = await client.listQuarantinedTests(REPO, 'acme-org', {
      pageSize: 50,
      pageToken: 'tok-page-2',
    });

    expect(page.quarantined_tests[0]?.test_case_id).toBe('tc-1');
    expect(page.quarantined_tests[0]?.codeowners).toEqual(['@acme/frontend']);
    expect(page.page.next_page_token).toBe('');
    expect(server.requests[0]?.url).toBe('/v1/flaky-tests/list-quarantined-tests');
    expect(JSON.parse(server.requests[0]?.body ?? '')).toEqual({
      repo: { host: 'github.com', owner: 'acme', name: 'web' },
      org_url_slug: 'acme-org',
      page_query: { page_size: 50, page_token: 'tok-page-2' },
    });
  });

  it('keeps a path prefix of the base URL and tolerates a trailing slash', async () => {
    const server = await startApiServer((_req, res) => {
      sendJson(res, 200, queueResponse());
    }, '/proxy/trunk/v1/');
    const { client } = makeClient(server.apiUrl);

    await client.getQueue(REPO, 'main');

    expect(server.requests[0]?.url).toBe('/proxy/trunk/v1/getQueue');
  });
});

describe('TrunkClient responses', () => {
  it('accepts unknown enum values and extra fields on every endpoint', async () => {
    const server = await startApiServer((req, res) => {
      if (req.url === '/v1/getQueue') {
        const queue = queueResponse();
        const prs = queue['enqueuedPullRequests'] as Record<string, unknown>[];
        sendJson(res, 200, {
          ...queue,
          state: 'frozen_by_admin',
          mode: 'turbo',
          mergeMethod: 'fast_forward',
          brandNewSetting: { nested: true },
          enqueuedPullRequests: prs.map((pr) => ({ ...pr, state: 'awaiting_review', x: 1 })),
        });
      } else if (req.url === '/v1/getSubmittedPullRequest') {
        sendJson(res, 200, {
          ...pullRequestResponse(),
          state: 'parked',
          priorityName: 'critical',
          timeline: [{ event: 'submitted' }],
        });
      } else {
        const page = quarantinePageResponse();
        const tests = page['quarantined_tests'] as Record<string, unknown>[];
        sendJson(res, 200, {
          ...page,
          quarantined_tests: tests.map((test) => ({ ...test, status: 'ZOMBIE', score: 0.3 })),
          generated_at: 'now',
        });
      }
    });
    const { client, observer } = makeClient(server.apiUrl);

    const queue = await client.getQueue(REPO, 'main');
    const pr = await client.getSubmittedPullRequest(REPO, 'main', 7);
    const page = await client.listQuarantinedTests(REPO, 'acme', { pageSize: 10, pageToken: '' });

    expect(queue.state).toBe('frozen_by_admin');
    expect(queue.mode).toBe('turbo');
    expect(queue.enqueuedPullRequests[0]?.state).toBe('awaiting_review');
    expect(pr?.state).toBe('parked');
    expect(page.quarantined_tests[0]?.test_case_id).toBe('tc-1');
    expect(observer.mismatches).toEqual([]);
  });

  it('returns undefined for a pull request the API answers 404 for', async () => {
    const server = await startApiServer((_req, res) => {
      sendText(res, 404, 'pull request not found');
    });
    const { client, observer } = makeClient(server.apiUrl);

    await expect(client.getSubmittedPullRequest(REPO, 'main', 42)).resolves.toBeUndefined();
    expect(server.requests).toHaveLength(1);
    expect(observer.codes()).toEqual(['404']);
  });

  it('fails getQueue on 404 with reason http_status and no retry', async () => {
    const server = await startApiServer((_req, res) => {
      sendText(res, 404, 'no merge queue for this branch', { 'x-request-id': 'req-404' });
    });
    const { client } = makeClient(server.apiUrl);

    const error = await rejectionOf(client.getQueue(REPO, 'nope'));

    expect(error).toBeInstanceOf(TrunkApiError);
    expect(error).toMatchObject({ reason: 'http_status', status: 404, attempts: 1 });
    expect(server.requests).toHaveLength(1);
  });

  it.each([400, 401, 403])('does not retry HTTP %i and reports its context', async (status) => {
    const server = await startApiServer((_req, res) => {
      sendText(res, status, 'Unauthorized: check your token\n', { 'x-request-id': 'req-abc' });
    });
    const { client, observer } = makeClient(server.apiUrl);

    const error = await rejectionOf(client.getQueue(REPO, 'main'));

    expect(server.requests).toHaveLength(1);
    expect(observer.codes()).toEqual([String(status)]);
    expect(error).toBeInstanceOf(TrunkApiError);
    expect(error).toMatchObject({
      endpoint: 'getQueue',
      repo: 'github.com/acme/web',
      branch: 'main',
      reason: 'http_status',
      status,
      requestId: 'req-abc',
      attempts: 1,
    });
    const message = (error as Error).message;
    expect(message).toContain('getQueue');
    expect(message).toContain('github.com/acme/web');
    expect(message).toContain('branch main');
    expect(message).toContain(`HTTP ${status}`);
    expect(message).toContain('req-abc');
    expect(message).toContain('1 attempt');
    expect(message).toContain('"Unauthorized: check your token"');
    expect(message).not.toContain('\n');
  });

  it('reports a 200 that is not JSON as schema_mismatch without retrying', async () => {
    const server = await startApiServer((_req, res) => {
      sendText(res, 200, '{"state": "running", ');
    });
    const { client, observer } = makeClient(server.apiUrl);

    const error = await rejectionOf(client.getQueue(REPO, 'main'));

    expect(error).toMatchObject({ reason: 'schema_mismatch', status: 200, attempts: 1 });
    expect((error as Error).message).toContain('not JSON');
    expect(observer.mismatches).toEqual(['getQueue']);
    expect(observer.codes()).toEqual(['200']);
    expect(server.requests).toHaveLength(1);
  });

  it('keeps neither the token nor more than 128 characters of a request id in the error', async () => {
    // The server sets x-request-id: an edge echoing the request puts the token in it, and the
    // error's message is what the landing page shows.
    const server = await startApiServer((req, res) => {
      const id = `req-${String(req.headers['x-api-token'])}-${'r'.repeat(10_000)}`;
      sendText(res, 503, 'down', { 'x-request-id': id });
    });
    const { client } = makeClient(server.apiUrl, { retry: { maxAttempts: 1 } });

    const error = await rejectionOf(client.getQueue(REPO, 'main'));

    expect(error).toBeInstanceOf(TrunkApiError);
    const { requestId, message } = error as TrunkApiError;
    expect(requestId).toMatch(/^req-<redacted>-r+…$/);
    expect(requestId).toHaveLength(128);
    expect(message).toContain(`(request id ${String(requestId)}, 1 attempt)`);
    expect(message).not.toContain(TOKEN);
  });

  it('names a Content-Encoding it did not ask for when the body is not JSON', async () => {
    // An edge that compresses whatever the client asked: the body read as text is only noise.
    const server = await startApiServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync(JSON.stringify(queueResponse())));
    });
    const { client, observer } = makeClient(server.apiUrl);

    const error = await rejectionOf(client.getQueue(REPO, 'main'));

    expect(error).toMatchObject({ reason: 'schema_mismatch', status: 200, attempts: 1 });
    expect((error as Error).message).toContain(
      'response is not JSON (its Content-Encoding is gzip, which the exporter does not ask for and does not decode): "',
    );
    expect(observer.mismatches).toEqual(['getQueue']);
    expect(server.requests[0]?.headers['accept-encoding']).toBeUndefined();
  });

  it('names the Content-Encoding of an error page it cannot read, instead of quoting its bytes', async () => {
    // An edge's 502 page, gzipped whatever the client asked: read as text it is only noise.
    const page = '<html><title>502 Bad Gateway</title></html>';
    const server = await startApiServer((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
      res.end(gzipSync(page));
    });
    const { client, observer } = makeClient(server.apiUrl, { retry: { maxAttempts: 1 } });

    const error = await rejectionOf(client.getQueue(REPO, 'main'));

    expect(error).toMatchObject({ reason: 'http_status', status: 502, attempts: 1 });
    expect((error as Error).message).toBe(
      'Trunk API getQueue for github.com/acme/web branch main failed: HTTP 502 (its Content-Encoding is gzip, which the exporter does not ask for and does not decode) (1 attempt)',
    );
    expect(observer.codes()).toEqual(['502']);
  });

  it('names where a redirect points, follows none, and sends the token nowhere else', async () => {
    // An apiUrl on http:// (or an old host) is answered 301 to where the API lives: without the
    // Location the line said only "HTTP 301", which names nothing to fix.
    const elsewhere = await startApiServer(() => {
      throw new Error('a redirect was followed');
    });
    const server = await startApiServer((_req, res) => {
      res.writeHead(301, { location: `${elsewhere.origin}/v1/getQueue?echo=${TOKEN}` });
      res.end();
    });
    const { client, observer } = makeClient(server.apiUrl);

    const error = await rejectionOf(client.getQueue(REPO, 'main'));

    expect(error).toMatchObject({ reason: 'http_status', status: 301, attempts: 1 });
    expect((error as Error).message).toContain(
      `HTTP 301 to ${elsewhere.origin}/v1/getQueue?echo=<redacted> (not followed: check trunk.apiUrl)`,
    );
    expect((error as Error).message).not.toContain(TOKEN.slice(0, 8));
    expect(elsewhere.requests).toHaveLength(0);
    expect(observer.codes()).toEqual(['301']);
  });

  it('names every Content-Encoding when the answer sends the header more than once', async () => {
    // RFC 9110 lets a list header come as several lines (an edge adding its own encoding): the
    // answer then holds them as a list, and the message must still be the schema mismatch.
    const server = await startApiServer((_req, res) => {
      res.writeHead(200, [
        ['content-type', 'application/json'],
        ['content-encoding', 'gzip'],
        ['content-encoding', 'br'],
      ]);
      res.end(gzipSync(JSON.stringify(queueResponse())));
    });
    const { client, observer } = makeClient(server.apiUrl);

    const error = await rejectionOf(client.getQueue(REPO, 'main'));

    expect(error).toBeInstanceOf(TrunkApiError);
    expect(error).toMatchObject({ reason: 'schema_mismatch', status: 200, attempts: 1 });
    expect((error as Error).message).toContain(
      'response is not JSON (its Content-Encoding is gzip, br, which the exporter does not ask for and does not decode): "',
    );
    expect(observer.mismatches).toEqual(['getQueue']);
  });

  it('does not retry an answer whose headers are larger than the client reads', async () => {
    // The same server sends the same headers again: each retry would cost a call and fail alike.
    const server = await startApiServer((_req, res) => {
      res.setHeader('x-padding', 'a'.repeat(100_000));
      sendJson(res, 200, queueResponse());
    });
    const { client } = makeClient(server.apiUrl);

    const error = await rejectionOf(client.getQueue(REPO, 'main'));

    expect(error).toMatchObject({ reason: 'network_error', attempts: 1 });
    expect((error as Error).message).toContain('UND_ERR_HEADERS_OVERFLOW');
    expect(server.requests).toHaveLength(1);
  });

  it('names the first failing paths when a field has the wrong type', async () => {
    // The queue's state is what it is counted by: of another type, the answer is not the queue's.
    // (A setting of another type costs only itself: tolerantResponses.test.ts.)
    const server = await startApiServer((_req, res) => {
      const queue = queueResponse();
      sendJson(res, 200, { ...queue, state: 3 });
    });
    const { client, observer } = makeClient(server.apiUrl);

    const error = await rejectionOf(client.getQueue(REPO, 'main'));

    expect(error).toMatchObject({ reason: 'schema_mismatch', attempts: 1 });
    expect((error as Error).message).toContain('state: expected string, received number');
    expect(observer.mismatches).toEqual(['getQueue']);
    expect(server.requests).toHaveLength(1);
  });

  it('names a required setting that is absent', async () => {
    // trunk-api-v1.md 2.5: "All fields below are required in the response".
    const server = await startApiServer((_req, res) => {
      const queue = Object.entries(queueResponse()).filter(([name]) => name !== 'concurrency');
      sendJson(res, 200, Object.fromEntries(queue));
    });
    const { client, observer } = makeClient(server.apiUrl);

    const error = await rejectionOf(client.getQueue(REPO, 'main'));

    expect(error).toMatchObject({ reason: 'schema_mismatch', attempts: 1 });
    expect((error as Error).message).toContain(
      'response does not match the schema: concurrency: expected number, received undefined',
    );
    expect(observer.mismatches).toEqual(['getQueue']);
  });

  it('never puts the token in an error message, stack or log line', async () => {
    const echo = `Invalid token ${TOKEN} for org acme`;
    const server = await startApiServer((_req, res, index) => {
      if (index < 2) sendText(res, 503, `<html><title>${TOKEN}</title>${echo}</html>`);
      else if (index === 2) sendText(res, 401, echo);
      else sendText(res, 200, `not json ${TOKEN}`);
    });
    const { logger, lines } = capturingLogger();
    const { client } = makeClient(server.apiUrl, { logger });

    const unauthorized = await rejectionOf(client.getQueue(REPO, 'main'));
    const mismatch = await rejectionOf(client.getQueue(REPO, 'main'));

    expect(unauthorized).toMatchObject({ status: 401, attempts: 3 });
    expect(mismatch).toMatchObject({ reason: 'schema_mismatch' });
    expect(lines.length).toBeGreaterThanOrEqual(2); // the two retries of the 503s
    expect(lines.join('')).toContain('Invalid token <redacted> for org acme');
    for (const error of [unauthorized, mismatch]) {
      expect((error as Error).message).not.toContain(TOKEN);
      expect((error as Error).stack).not.toContain(TOKEN);
      expect(inspect(error, { depth: 5 })).not.toContain(TOKEN);
      expect(JSON.stringify(error)).not.toContain(TOKEN);
    }
    for (const line of lines) expect(line).not.toContain(TOKEN);
  });
});
