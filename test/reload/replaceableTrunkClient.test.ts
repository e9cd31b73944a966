import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { Secret } from '../../src/secrets/secret.js';
import type { ExporterConfig } from '../../src/config/types.js';
import { ReplaceableTrunkClient } from '../../src/reload/replaceableTrunkClient.js';
import { TrunkApiError } from '../../src/trunk/errors.js';
import { TrunkV2Client } from '../../src/trunk/v2Client.js';
import { queueResponse } from '../trunk/fixtures.js';
import {
  REPO,
  cleanUp,
  makeClient,
  rejectionOf,
  sendJson,
  sendText,
  startApiServer,
} from '../trunk/harness.js';

afterEach(cleanUp);

/** A fake API that holds its first answer until the test releases it, and answers later ones at once. */
async function startHoldingApi() {
  let held: ServerResponse | undefined;
  let arrived: () => void = () => undefined;
  const firstArrived = new Promise<void>((resolve) => (arrived = resolve));
  const server = await startApiServer((_req, res, index) => {
    if (index === 0) {
      held = res;
      arrived();
    } else {
      sendJson(res, 200, queueResponse());
    }
  });
  const release = () => {
    if (held) sendJson(held, 200, queueResponse());
  };
  return { server, firstArrived, release };
}

function settings(apiUrl: string, token: string): ExporterConfig['trunk'] {
  return {
    apiUrl,
    token: new Secret(token),
    orgUrlSlug: undefined,
    timeoutSeconds: 5,
    maxConcurrentRequests: 4,
    maxRequestsPerSecond: 1000,
  };
}

describe('ReplaceableTrunkClient', () => {
  it('lets the replaced client finish its call in flight, then closes it', async () => {
    const { server, firstArrived, release } = await startHoldingApi();
    const built: string[] = [];
    const replaceable = new ReplaceableTrunkClient(
      (trunk) => {
        built.push(trunk.token?.reveal() ?? '');
        return makeClient(trunk.apiUrl, { token: trunk.token }).client;
      },
      settings(server.apiUrl, 'old-token'),
    );
    const previous = replaceable.current;
    const inFlight = previous.getQueue(REPO, 'main');
    await firstArrived;

    replaceable.replace(settings(server.apiUrl, 'new-token'));
    expect(replaceable.current).not.toBe(previous);
    release();
    expect((await inFlight).state).toBe('running');
    await replaceable.current.getQueue(REPO, 'main');
    expect(server.requests.map((request) => request.headers['x-api-token'])).toEqual([
      'old-token',
      'new-token',
    ]);
    expect(built).toEqual(['old-token', 'new-token']);
    // Retired: once its call is done the old client is closed, so a new call ends at once.
    await expect
      .poll(
        async () => ((await rejectionOf(previous.getQueue(REPO, 'main'))) as TrunkApiError).reason,
      )
      .toBe('aborted');
  });

  it("close() aborts a retiring client's call in flight too", async () => {
    const { server, firstArrived } = await startHoldingApi();
    const replaceable = new ReplaceableTrunkClient(
      (trunk) => makeClient(trunk.apiUrl, { token: trunk.token }).client,
      settings(server.apiUrl, 'old-token'),
    );
    const inFlight = replaceable.current.getQueue(REPO, 'main');
    await firstArrived;
    replaceable.replace(settings(server.apiUrl, 'new-token'));
    const rejection = rejectionOf(inFlight);
    await replaceable.close();
    const error = await rejection;
    expect(error).toBeInstanceOf(TrunkApiError);
    expect((error as TrunkApiError).reason).toBe('aborted');
  });

  it("carries a 429's pause over to the new client: Trunk's limit is per organization", async () => {
    const server = await startApiServer((_req, res, index) => {
      if (index === 0) sendJson(res, 429, { message: 'slow down' }, { 'retry-after': '60' });
      else sendJson(res, 200, queueResponse());
    });
    const replaceable = new ReplaceableTrunkClient(
      (trunk) => makeClient(trunk.apiUrl, { token: trunk.token, retry: { maxAttempts: 1 } }).client,
      settings(server.apiUrl, 'old-token'),
    );
    const limited = (await rejectionOf(
      replaceable.current.getQueue(REPO, 'main'),
    )) as TrunkApiError;
    expect(limited.status).toBe(429);

    replaceable.replace(settings(server.apiUrl, 'new-token'));
    const deadlineMs = Date.now() + 5_000;
    const error = await rejectionOf(replaceable.current.getQueue(REPO, 'main', { deadlineMs }));
    expect((error as TrunkApiError).reason).toBe('rate_limited');
    expect(server.requests).toHaveLength(1);
  });

  it("carries the queue-entry history's own 429 pause over too, and holds back only that read", async () => {
    // trunk-api-v2.md: the history is limited "5 per second per key, separately"; a new key in the
    // same organization is no reason to ask it again before Retry-After.
    const server = await startApiServer((req, res) => {
      if (req.url?.startsWith('/v2/queue-entry-history')) {
        sendText(res, 429, 'Too Many Requests', { 'retry-after': '60' });
      } else sendJson(res, 200, { data: [], hasMore: false, nextCursor: null });
    }, '');
    const replaceable = new ReplaceableTrunkClient(
      (trunk) =>
        makeClient(trunk.apiUrl, {
          token: undefined,
          apiKey: trunk.apiKey,
          retry: { maxAttempts: 1 },
        }).client,
      {
        ...settings(server.origin, 'unused'),
        token: undefined,
        apiKey: new Secret('trunk_v2_old'),
      },
    );
    const soon = (): { deadlineMs: number } => ({ deadlineMs: Date.now() + 2000 });
    const history = (): Promise<unknown> =>
      new TrunkV2Client(replaceable.current).listQueueEntryHistory(
        ['0b6f3c1e-7d42-4a51-9f0e-2c8d5b7a1e93'],
        soon(),
      );
    expect(await rejectionOf(history())).toMatchObject({ status: 429 });

    replaceable.replace({
      ...settings(server.origin, 'unused'),
      token: undefined,
      apiKey: new Secret('trunk_v2_new'),
    });
    expect(await rejectionOf(history())).toMatchObject({ reason: 'rate_limited', attempts: 0 });
    expect(await new TrunkV2Client(replaceable.current).listMergeQueues(soon())).toEqual([]);
    expect(server.requests.map((request) => request.url.split('?')[0])).toEqual([
      '/v2/queue-entry-history',
      '/v2/merge-queues',
    ]);
  });

  it('does not carry a pause over to another API URL', async () => {
    const limiting = await startApiServer((_req, res) => {
      sendJson(res, 429, { message: 'slow down' }, { 'retry-after': '60' });
    });
    const other = await startApiServer((_req, res) => {
      sendJson(res, 200, queueResponse());
    });
    const replaceable = new ReplaceableTrunkClient(
      (trunk) => makeClient(trunk.apiUrl, { token: trunk.token, retry: { maxAttempts: 1 } }).client,
      settings(limiting.apiUrl, 'token'),
    );
    await rejectionOf(replaceable.current.getQueue(REPO, 'main'));
    replaceable.replace(settings(other.apiUrl, 'token'));
    const deadlineMs = Date.now() + 5_000;
    expect((await replaceable.current.getQueue(REPO, 'main', { deadlineMs })).state).toBe(
      'running',
    );
  });
});
