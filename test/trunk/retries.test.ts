import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { TrunkApiError } from '../../src/trunk/errors.js';
import { pullRequestResponse, queueResponse } from './fixtures.js';
import {
  REPO,
  cleanUp,
  makeClient,
  rejectionOf,
  sendJson,
  sendText,
  startApiServer,
} from './harness.js';

afterEach(cleanUp);

/** Timers may fire a millisecond or two early when measured with Date.now(). */
const CLOCK_SLACK_MS = 5;

function gapsMs(receivedAt: readonly number[]): number[] {
  return receivedAt.slice(1).map((time, index) => time - (receivedAt[index] ?? 0));
}

describe('TrunkClient retries after 429', () => {
  it('waits the Retry-After delta-seconds before retrying', async () => {
    const server = await startApiServer((_req, res, index) => {
      if (index === 0) sendText(res, 429, 'Too Many Requests', { 'retry-after': '1' });
      else sendJson(res, 200, queueResponse());
    });
    const { client, observer } = makeClient(server.apiUrl);

    await client.getQueue(REPO, 'main');

    expect(observer.codes()).toEqual(['429', '200']);
    const [gap] = gapsMs(server.requests.map((request) => request.receivedAt));
    expect(gap).toBeGreaterThanOrEqual(1000 - CLOCK_SLACK_MS);
  });

  it('waits until the Retry-After HTTP-date before retrying', async () => {
    let retryAt = 0;
    const server = await startApiServer((_req, res, index) => {
      if (index === 0) {
        // HTTP-dates have whole seconds: this lands 0.5..1.5 s ahead.
        const date = new Date(Date.now() + 1500);
        retryAt = Date.parse(date.toUTCString());
        sendText(res, 429, 'slow down', { 'retry-after': date.toUTCString() });
      } else sendJson(res, 200, queueResponse());
    });
    const { client } = makeClient(server.apiUrl);

    await client.getQueue(REPO, 'main');

    const retried = server.requests[1]?.receivedAt ?? 0;
    expect(retried).toBeGreaterThanOrEqual(retryAt - CLOCK_SLACK_MS);
    expect(retried - (server.requests[0]?.receivedAt ?? 0)).toBeGreaterThanOrEqual(400);
  });

  it('backs off exponentially with full jitter when Retry-After is missing', async () => {
    const server = await startApiServer((_req, res, index) => {
      if (index < 2) sendText(res, 429, '');
      else sendJson(res, 200, queueResponse());
    });
    // random 0.05 of min(max, 2000 * 2^(n-1)): 100 ms, then 200 ms; without the jitter, 2 s.
    const { client, observer } = makeClient(server.apiUrl, {
      retry: { maxAttempts: 4, baseDelayMs: 2000, maxDelayMs: 10_000 },
      random: () => 0.05,
    });

    await client.getQueue(REPO, 'main');

    expect(observer.codes()).toEqual(['429', '429', '200']);
    const [first, second] = gapsMs(server.requests.map((request) => request.receivedAt));
    expect(first).toBeGreaterThanOrEqual(100 - CLOCK_SLACK_MS);
    // Half the unjittered 2 s: room for a busy machine's late timers.
    expect(first).toBeLessThan(1000);
    expect(second).toBeGreaterThanOrEqual(200 - CLOCK_SLACK_MS);
  });

  it.each([
    ['429', '0', 429],
    ['429', 'an HTTP-date in the past', 429],
    ['503', '0', 503],
  ] as const)(
    'backs off in a storm of %s answers whose Retry-After is %s, as without it',
    async (_name, form, status) => {
      // Retry-After is a least wait: a 0, or a date a server behind our clock gives, asks for none,
      // and retrying at once after each answer is the storm Trunk's backoff is there to avoid.
      const retryAfter = form === '0' ? '0' : new Date(Date.now() - 60_000).toUTCString();
      const server = await startApiServer((_req, res) => {
        sendText(res, status, 'slow down', { 'retry-after': retryAfter });
      });
      // random 0.5 of min(max, 200 * 2^(n-1)): 100 ms, then 200 ms.
      const { client, observer } = makeClient(server.apiUrl, {
        retry: { maxAttempts: 3, baseDelayMs: 200, maxDelayMs: 10_000 },
      });

      const error = await rejectionOf(client.getQueue(REPO, 'main'));

      expect(error).toMatchObject({ reason: 'http_status', status, attempts: 3 });
      expect(observer.codes()).toEqual([String(status), String(status), String(status)]);
      const [first, second] = gapsMs(server.requests.map((request) => request.receivedAt));
      expect(first).toBeGreaterThanOrEqual(100 - CLOCK_SLACK_MS);
      expect(second).toBeGreaterThanOrEqual(200 - CLOCK_SLACK_MS);
    },
  );
});

describe('TrunkClient retries on server errors', () => {
  const bodies: Record<number, [string, string]> = {
    500: ['text/plain', 'internal error'],
    502: [
      'text/html',
      '<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>',
    ],
    503: ['text/html', '<!DOCTYPE html><html><body><h1>503 Service Unavailable</h1></body></html>'],
    504: ['text/plain', 'upstream request timeout'],
  };

  it.each([500, 502, 503, 504])('retries HTTP %i and then succeeds', async (status) => {
    const [contentType, text] = bodies[status] ?? ['text/plain', ''];
    const server = await startApiServer((_req, res, index) => {
      if (index < 2) sendText(res, status, text, { 'content-type': contentType });
      else sendJson(res, 200, pullRequestResponse());
    });
    const { client, observer } = makeClient(server.apiUrl);

    const pr = await client.getSubmittedPullRequest(REPO, 'main', 5);

    expect(pr?.state).toBe('testing');
    expect(observer.codes()).toEqual([String(status), String(status), '200']);
  });

  it('gives up after maxAttempts with the last status and an excerpt of the body', async () => {
    const server = await startApiServer((_req, res, index) => {
      sendText(res, 503, bodies[503]?.[1] ?? '', {
        'content-type': 'text/html',
        'x-request-id': `req-${index}`,
      });
    });
    const { client, observer } = makeClient(server.apiUrl);

    const error = await rejectionOf(client.getQueue(REPO, 'main'));

    expect(server.requests).toHaveLength(4);
    expect(observer.codes()).toEqual(['503', '503', '503', '503']);
    expect(error).toBeInstanceOf(TrunkApiError);
    expect(error).toMatchObject({
      reason: 'http_status',
      status: 503,
      attempts: 4,
      requestId: 'req-3',
    });
    expect((error as Error).message).toContain('HTTP 503: "503 Service Unavailable"');
    expect((error as Error).message).toContain('4 attempts');
  });
});

describe('TrunkClient transport failures', () => {
  it('times out a server that accepts and never answers, then retries', async () => {
    const server = await startApiServer(() => {
      // Never answer.
    });
    const { client, observer } = makeClient(server.apiUrl, {
      timeoutSeconds: 0.3,
      retry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 10 },
    });
    const started = Date.now();

    const error = await rejectionOf(client.getQueue(REPO, 'main'));

    expect(error).toMatchObject({ reason: 'timeout', status: undefined, attempts: 2 });
    expect((error as Error).message).toContain('timed out after 0.3s');
    expect(observer.codes()).toEqual(['timeout', 'timeout']);
    expect(server.requests).toHaveLength(2);
    // Two attempts of 0.3 s: ten times the timeout would take 6 s, undici's own 300 s.
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('times out a body that stalls after the headers', async () => {
    const server = await startApiServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"state": "running",');
    });
    const { client, observer } = makeClient(server.apiUrl, {
      timeoutSeconds: 0.3,
      retry: { maxAttempts: 1 },
    });

    const error = await rejectionOf(client.getQueue(REPO, 'main'));

    expect(error).toMatchObject({ reason: 'timeout', attempts: 1 });
    expect(observer.codes()).toEqual(['timeout']);
  });

  it('times out a body that trickles in too slowly overall', async () => {
    const server = await startApiServer((_req, res) => {
      // Each byte comes well within undici's bodyTimeout; only the per-attempt limit ends it.
      res.writeHead(200, { 'content-type': 'application/json' });
      const timer = setInterval(() => res.write(' '), 50);
      res.on('close', () => {
        clearInterval(timer);
      });
    });
    const { client, observer } = makeClient(server.apiUrl, {
      timeoutSeconds: 0.3,
      retry: { maxAttempts: 1 },
    });
    const started = Date.now();

    const error = await rejectionOf(client.getQueue(REPO, 'main'));

    expect(error).toMatchObject({ reason: 'timeout', attempts: 1 });
    expect(observer.codes()).toEqual(['timeout']);
    // One attempt of 0.3 s: ten times the timeout would take 3 s; without it, the trickle never ends.
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('retries after the connection is reset before the response', async () => {
    const server = await startApiServer((req, res, index) => {
      if (index === 0) req.socket.destroy();
      else sendJson(res, 200, queueResponse());
    });
    const { client, observer } = makeClient(server.apiUrl);

    const queue = await client.getQueue(REPO, 'main');

    expect(queue.state).toBe('running');
    expect(observer.codes()).toEqual(['network_error', '200']);
  });

  it('retries after a response is cut mid-body', async () => {
    const server = await startApiServer((req, res, index) => {
      if (index === 0) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '5000' });
        res.write('{"state": "running", "branch": "ma', () => req.socket.destroy());
      } else sendJson(res, 200, queueResponse());
    });
    const { client, observer } = makeClient(server.apiUrl);

    await client.getQueue(REPO, 'main');

    expect(observer.codes()).toEqual(['network_error', '200']);
    expect(observer.mismatches).toEqual([]);
  });

  it('takes a connection closed after an informational answer (103) for a network error, and retries', async () => {
    // RFC 9110 15.2: a 1xx is interim, the final answer is still to come; "HTTP 103" named no fault.
    const server = await startApiServer((req, res, index) => {
      if (index === 0) {
        res.writeEarlyHints({ link: '</style.css>; rel=preload' });
        setTimeout(() => req.socket.destroy(), 20);
      } else sendJson(res, 200, queueResponse());
    });
    const { client, observer } = makeClient(server.apiUrl);

    const queue = await client.getQueue(REPO, 'main');

    expect(queue.state).toBe('running');
    expect(observer.codes()).toEqual(['network_error', '200']);
  });

  it('times out an answer that sends an informational status (102) and nothing more', async () => {
    const server = await startApiServer((_req, res) => {
      res.writeProcessing();
    });
    const { client, observer } = makeClient(server.apiUrl, {
      timeoutSeconds: 0.3,
      retry: { maxAttempts: 1 },
    });

    const error = await rejectionOf(client.getQueue(REPO, 'main'));

    expect(error).toMatchObject({ reason: 'timeout', status: undefined, attempts: 1 });
    expect((error as Error).message).toContain('timed out after 0.3s');
    expect(observer.codes()).toEqual(['timeout']);
  });

  it('names an informational answer 100 Continue it did not ask for (no Expect header) as a network error, and retries', async () => {
    // RFC 9110 10.1.1: a client that sends no `Expect: 100-continue` is not owed a 100; undici drops
    // the connection at one.
    const server = await startApiServer((req, res) => {
      expect(req.headers.expect).toBeUndefined();
      res.writeContinue();
      setTimeout(() => {
        sendJson(res, 200, queueResponse());
      }, 20);
    });
    const { client, observer } = makeClient(server.apiUrl, {
      retry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 10 },
    });

    const error = await rejectionOf(client.getQueue(REPO, 'main'));

    expect(error).toMatchObject({ reason: 'network_error', status: undefined, attempts: 2 });
    expect((error as Error).message).toContain('answered 100 Continue, which was not asked for');
    expect(observer.codes()).toEqual(['network_error', 'network_error']);
  });

  it('fails with network_error after maxAttempts when the connection is refused', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) =>
      probe.close(() => {
        resolve();
      }),
    );
    const { client, observer } = makeClient(`http://127.0.0.1:${port}/v1`, {
      retry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 10 },
    });

    const error = await rejectionOf(client.getQueue(REPO, 'main'));

    expect(error).toMatchObject({ reason: 'network_error', attempts: 2 });
    expect((error as Error).message).toContain('ECONNREFUSED');
    expect(observer.codes()).toEqual(['network_error', 'network_error']);
  });
});

describe('TrunkClient deadline and abort', () => {
  it('does not start a retry whose wait would end after deadlineMs', async () => {
    const server = await startApiServer((_req, res) => {
      sendText(res, 503, 'maintenance', { 'retry-after': '60' });
    });
    const { client } = makeClient(server.apiUrl);
    const started = Date.now();

    const error = await rejectionOf(
      client.getQueue(REPO, 'main', { deadlineMs: started + 20_000 }),
    );

    expect(error).toMatchObject({ reason: 'http_status', status: 503, attempts: 1 });
    // At once: waiting until the deadline before giving up would take 20 s.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(server.requests).toHaveLength(1);
  });

  it('still retries when the wait ends before deadlineMs', async () => {
    const server = await startApiServer((_req, res, index) => {
      if (index === 0) sendText(res, 500, 'oops');
      else sendJson(res, 200, queueResponse());
    });
    const { client } = makeClient(server.apiUrl);

    await client.getQueue(REPO, 'main', { deadlineMs: Date.now() + 2000 });

    expect(server.requests).toHaveLength(2);
  });

  it('ends an in-flight request on abort with reason aborted and no retry', async () => {
    const server = await startApiServer(() => {
      // Never answer.
    });
    const { client, observer } = makeClient(server.apiUrl);
    const controller = new AbortController();
    setTimeout(() => {
      controller.abort();
    }, 50);

    const error = await rejectionOf(client.getQueue(REPO, 'main', { signal: controller.signal }));

    expect(error).toMatchObject({ reason: 'aborted', attempts: 1 });
    expect(server.requests).toHaveLength(1);
    // Sent, so counted: Trunk counts it against the organization's limit.
    expect(observer.codes()).toEqual(['aborted']);
  });

  it('ends a retry wait on abort', async () => {
    const server = await startApiServer((_req, res) => {
      sendText(res, 429, '', { 'retry-after': '20' });
    });
    const { client } = makeClient(server.apiUrl);
    const controller = new AbortController();
    setTimeout(() => {
      controller.abort();
    }, 100);
    const started = Date.now();

    const error = await rejectionOf(client.getQueue(REPO, 'main', { signal: controller.signal }));

    expect(error).toMatchObject({ reason: 'aborted', attempts: 1 });
    // Ended with the abort: a wait that ignored it would take the Retry-After's 20 s.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(server.requests).toHaveLength(1);
  });

  it('sends nothing when the signal is already aborted', async () => {
    const server = await startApiServer((_req, res) => {
      sendJson(res, 200, queueResponse());
    });
    const { client } = makeClient(server.apiUrl);

    const error = await rejectionOf(client.getQueue(REPO, 'main', { signal: AbortSignal.abort() }));

    expect(error).toMatchObject({ reason: 'aborted', attempts: 0 });
    expect(server.requests).toHaveLength(0);
  });

  it('ends pending calls when the client is closed', async () => {
    const server = await startApiServer(() => {
      // Never answer.
    });
    const { client } = makeClient(server.apiUrl);
    const pending = rejectionOf(client.getQueue(REPO, 'main'));
    await new Promise((resolve) => setTimeout(resolve, 50));

    await client.close();

    expect(await pending).toMatchObject({ reason: 'aborted' });
  });
});
