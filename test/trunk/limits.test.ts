import { afterEach, describe, expect, it } from 'vitest';
import { pullRequestResponse, queueResponse } from './fixtures.js';
import {
  REPO,
  cleanUp,
  makeClient,
  recordingObserver,
  sendJson,
  sendText,
  startApiServer,
} from './harness.js';

afterEach(cleanUp);

describe('TrunkClient global limits', () => {
  it('keeps at most maxConcurrentRequests in flight across calls', async () => {
    const server = await startApiServer((_req, res) => {
      setTimeout(() => {
        sendJson(res, 200, queueResponse());
      }, 80);
    });
    const { client } = makeClient(server.apiUrl, { maxConcurrentRequests: 2 });

    const calls = Array.from({ length: 8 }, (_, index) => client.getQueue(REPO, `b${index}`));
    await Promise.all(calls);

    expect(server.requests).toHaveLength(8);
    expect(server.maxInFlight()).toBe(2);
  });

  it('starts at most maxRequestsPerSecond requests in any second', async () => {
    const server = await startApiServer((_req, res) => {
      sendJson(res, 200, queueResponse());
    });
    // When each attempt started, on the client's clock: its end less its duration, which the
    // client measures from the limiter's grant. The server's arrival times would add however late
    // a busy machine hands each request over.
    const starts: number[] = [];
    const { client } = makeClient(server.apiUrl, {
      maxConcurrentRequests: 8,
      maxRequestsPerSecond: 10,
      observer: {
        ...recordingObserver(),
        requestFinished: (_endpoint, _code, seconds) => {
          starts.push(performance.now() - seconds * 1000);
        },
      },
    });

    await Promise.all(Array.from({ length: 14 }, () => client.getQueue(REPO, 'main')));

    expect(server.requests).toHaveLength(14);
    starts.sort((a, b) => a - b);
    // The limiter reserves the 11th start after any start a second later; each is seen when its
    // timer has fired, which a busy machine may delay, so half a second is held: a client without
    // the limit starts all 14 within milliseconds.
    for (let index = 0; index + 10 < starts.length; index += 1) {
      expect((starts[index + 10] ?? 0) - (starts[index] ?? 0)).toBeGreaterThanOrEqual(500);
    }
  });

  it('holds back every call of the client after a 429 with Retry-After', async () => {
    const server = await startApiServer((req, res, index) => {
      if (index === 0) sendText(res, 429, 'rate limited', { 'retry-after': '1' });
      else if (req.url === '/v1/getQueue') sendJson(res, 200, queueResponse());
      else sendJson(res, 200, pullRequestResponse());
    });
    const { client, observer } = makeClient(server.apiUrl);

    const queue = client.getQueue(REPO, 'main');
    // The 429 has been answered and seen by the client (however busy the machine is).
    while (!observer.codes().includes('429')) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const pr = await client.getSubmittedPullRequest(REPO, 'main', 1);
    await queue;

    expect(pr?.state).toBe('testing');
    const limitedAt = server.requests[0]?.receivedAt ?? 0;
    const prRequest = server.requests.find((request) => request.url.endsWith('PullRequest'));
    expect((prRequest?.receivedAt ?? 0) - limitedAt).toBeGreaterThanOrEqual(1000 - 5);
  });
});
