import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { Secret } from '../../src/secrets/secret.js';
import { TrunkTransport } from '../../src/trunk/transport.js';
import type { ApiRequest, CallTarget } from '../../src/trunk/transport.js';
import { TOKEN, cleanUp, recordingObserver, sendJson, startApiServer } from './harness.js';

const V1_REQUEST: ApiRequest = { api: 'v1', path: 'getQueue', body: '{}' };
const TARGET: CallTarget = {
  endpoint: 'getQueue',
  repo: 'github.com/acme/web',
  branch: 'main',
};

function makeTransport(
  apiUrl: string,
  timeoutMs: number,
  maxConcurrentRequests = 4,
  observer = recordingObserver(),
): TrunkTransport {
  return new TrunkTransport({
    apiUrl,
    token: new Secret(TOKEN),
    timeoutMs,
    maxConcurrentRequests,
    maxRequestsPerSecond: 1000,
    maxResponseBytes: 1024 * 1024,
    observer,
    userAgent: 'trunk-exporter/test',
  });
}

afterEach(cleanUp);

describe('TrunkTransport', () => {
  it("leaves no listener on the caller's signal once an attempt is over", async () => {
    const poll = new AbortController();
    let listenersWhileInFlight: number | undefined;
    const server = await startApiServer((_req, res, index) => {
      // The second request never gets an answer and times out; while the server holds it, the
      // attempt is in flight (its timeout leaves a busy machine a second to get it here).
      if (index === 0) sendJson(res, 200, { ok: true });
      else listenersWhileInFlight = getEventListeners(poll.signal, 'abort').length;
    });
    const transport = makeTransport(server.apiUrl, 1000);

    const answered = transport.send(TARGET, V1_REQUEST, poll.signal, 1);
    const outcome = await answered;
    expect(outcome).toMatchObject({ kind: 'response', status: 200 });
    expect(getEventListeners(poll.signal, 'abort')).toHaveLength(0);

    const timedOut = transport.send(TARGET, V1_REQUEST, poll.signal, 1);
    expect(await timedOut).toMatchObject({ kind: 'failure', reason: 'timeout' });
    // While the attempt was in flight it listened, so that aborting the poll would end it.
    expect(listenersWhileInFlight).toBe(1);
    expect(getEventListeners(poll.signal, 'abort')).toHaveLength(0);
    await transport.close();
  });

  it('ends an attempt in flight when the caller aborts, as aborted rather than a timeout', async () => {
    const server = await startApiServer(() => {
      // Never answer.
    });
    const observer = recordingObserver();
    const transport = makeTransport(server.apiUrl, 60_000, 4, observer);
    const poll = new AbortController();
    const attempt = transport.send(TARGET, V1_REQUEST, poll.signal, 1);
    await expect.poll(() => server.requests.length).toBe(1);
    poll.abort(new Error('poll stopped'));

    // Long before the attempt's own timeout (a minute) could end it.
    let timer: NodeJS.Timeout | undefined;
    const stillRunning = new Promise((resolve) => {
      timer = setTimeout(resolve, 20_000, 'still running');
    });
    const ended = await Promise.race([attempt.catch((error: unknown) => error), stillRunning]);
    clearTimeout(timer);
    expect(ended).toMatchObject({ reason: 'aborted', attempts: 1 });
    expect(getEventListeners(poll.signal, 'abort')).toHaveLength(0);
    // The server got the request, and Trunk counts it against the organization's limit.
    expect(observer.codes()).toEqual(['aborted']);
    await transport.close();
  });

  it('counts no request for an attempt its caller gave up before it was sent', async () => {
    const server = await startApiServer((_req, res) => {
      sendJson(res, 200, { ok: true });
    });
    const observer = recordingObserver();
    const transport = makeTransport(server.apiUrl, 60_000, 4, observer);
    const poll = new AbortController();
    poll.abort(new Error('poll stopped'));

    await expect(transport.send(TARGET, V1_REQUEST, poll.signal, 1)).rejects.toMatchObject({
      reason: 'aborted',
    });
    expect(server.requests).toHaveLength(0);
    expect(observer.codes()).toEqual([]);
    await transport.close();
  });

  it("fails a queued attempt unsent when another call's 429 pauses requests past its start-by time", async () => {
    const server = await startApiServer((_req, res, index) => {
      if (index === 0) {
        res.writeHead(429, { 'Content-Type': 'text/plain', 'Retry-After': '3' });
        res.end('Too Many Requests');
      } else sendJson(res, 200, { ok: true });
    });
    // One connection: the second call queues behind the first, which the 429 answers.
    const transport = makeTransport(server.apiUrl, 5_000, 1);
    const poll = new AbortController();
    const limited = transport.send(TARGET, V1_REQUEST, poll.signal, 1);
    const queued = transport.send(TARGET, V1_REQUEST, poll.signal, 1, Date.now() + 500);

    expect(await limited).toMatchObject({ kind: 'response', status: 429 });
    const error: unknown = await queued.catch((rejection: unknown) => rejection);
    expect(error).toMatchObject({ reason: 'rate_limited', attempts: 0 });
    expect(String(error)).toContain("not sent: Trunk's Retry-After holds every request until");
    expect(server.requests).toHaveLength(1);
    await transport.close();
  });
});
