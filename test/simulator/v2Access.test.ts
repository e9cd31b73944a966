// Who may read v2 and how: the Bearer API key (and never the v1 token), a read-only key refused
// every write, the rate limiter's bare 429, faults on v2 calls, and requests counted by method.
import { describe, expect, it, vi } from 'vitest';
import { edgeError, FaultPlan } from '../../src/simulator/faults.js';
import { createIncidentCycle } from '../../src/simulator/incidents.js';
import { createSimulatorWorld, DEFAULT_SIMULATOR_START_TIME } from '../../src/simulator/world.js';
import { post, TEST_TOKEN, WEB } from './harness.js';
import { errorOf, getPage, startV2Simulator, TEST_API_KEY, v2Request } from './v2Harness.js';

describe('v2 credentials', () => {
  it('wants the API key as a Bearer token: 401 AUTHENTICATION_REQUIRED or INVALID_TOKEN', async () => {
    const simulator = await startV2Simulator();
    const missing = await v2Request(simulator, '/v2/merge-queues', { key: null });
    expect(missing.status).toBe(401);
    expect(errorOf(missing)?.code).toBe('AUTHENTICATION_REQUIRED');
    const v1Header = await v2Request(simulator, '/v2/merge-queues', {
      key: null,
      headers: { 'x-api-token': TEST_TOKEN },
    });
    expect(errorOf(v1Header)?.code).toBe('AUTHENTICATION_REQUIRED');
    for (const key of ['trunk_v2_wrong', TEST_TOKEN]) {
      const wrong = await v2Request(simulator, '/v2/merge-queues', { key });
      expect(wrong.status).toBe(401);
      expect(errorOf(wrong)?.code).toBe('INVALID_TOKEN');
      expect(wrong.text).not.toContain(TEST_API_KEY);
    }
    expect((await v2Request(simulator, '/v2/merge-queues')).status).toBe(200);
  });

  it('does not take the API key on v1, nor the v1 token on v2', async () => {
    const simulator = await startV2Simulator();
    const body = { repo: WEB, targetBranch: 'main' };
    expect((await post(simulator, '/getQueue', body, { token: TEST_API_KEY })).status).toBe(401);
    expect((await post(simulator, '/getQueue', body)).status).toBe(200);
    await expect(startV2Simulator({ apiKey: TEST_TOKEN })).rejects.toThrow(/different/);
  });

  it("answers a bare 401 without an envelope when told to, as Trunk's edge does", async () => {
    const edge = await startV2Simulator({ flavour: 'live', bareUnauthorized: true });
    const reply = await v2Request(edge, '/v2/tests', { key: 'trunk_v2_wrong' });
    expect(reply.status).toBe(401);
    expect(reply.json).toBeUndefined();
    expect(reply.headers.get('x-request-id')).toMatch(/^sim-/);
    // The live flavour alone answers as the published definition says: every 4xx has the envelope.
    const live = await startV2Simulator({ flavour: 'live' });
    const enveloped = await v2Request(live, '/v2/tests', { key: 'trunk_v2_wrong' });
    expect(errorOf(enveloped)?.code).toBe('INVALID_TOKEN');
  });

  it('refuses every method but GET with 403 INSUFFICIENT_PERMISSIONS and counts them all', async () => {
    const simulator = await startV2Simulator();
    const [queue] = (
      (await v2Request(simulator, '/v2/merge-queues')).json as { data: { id: string }[] }
    ).data;
    const path = `/v2/merge-queues/${String(queue?.id)}`;
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const reply = await v2Request(simulator, path, { method });
      expect(reply.status, method).toBe(403);
      expect(errorOf(reply)?.code).toBe('INSUFFICIENT_PERMISSIONS');
    }
    expect((await v2Request(simulator, path)).status).toBe(200);
    await post(simulator, '/getQueue', { repo: WEB, targetBranch: 'main' });
    expect(simulator.requestCountsByMethod()).toEqual({
      'GET /v2/merge-queues': 1,
      'POST /v2/merge-queues/{id}': 1,
      'PUT /v2/merge-queues/{id}': 1,
      'PATCH /v2/merge-queues/{id}': 1,
      'DELETE /v2/merge-queues/{id}': 1,
      'GET /v2/merge-queues/{id}': 1,
      'POST /v1/getQueue': 1,
    });
    expect(simulator.requestCounts()).toEqual({
      '/v2/merge-queues': 1,
      '/v2/merge-queues/{id}': 5,
      '/v1/getQueue': 1,
    });
    simulator.resetRequestCounts();
    expect(simulator.requestCountsByMethod()).toEqual({});
  });

  it('answers 404 NOT_FOUND for a path it does not serve', async () => {
    const simulator = await startV2Simulator();
    const reply = await v2Request(simulator, '/v2/pull-requests/123');
    expect(reply.status).toBe(404);
    expect(errorOf(reply)?.code).toBe('NOT_FOUND');
    expect(simulator.requestCounts()).toEqual({ '/v2/pull-requests/123': 1 });
  });
});

describe('v2 limits and faults', () => {
  it('answers 429 with no body once the organization budget is spent', async () => {
    // Only the budget's clock is frozen: the HTTP exchange runs on real timers.
    vi.useFakeTimers({ toFake: ['performance'] });
    try {
      const simulator = await startV2Simulator({ v2RequestsPerSecond: 3 });
      const statuses = async (count: number) => {
        const seen: number[] = [];
        for (let i = 0; i < count; i++) {
          const reply = await v2Request(simulator, '/v2/merge-queues');
          seen.push(reply.status);
          if (reply.status === 429) {
            expect(reply.text).toBe('');
            expect(reply.headers.get('retry-after')).toBeNull();
          }
        }
        return seen;
      };
      expect(await statuses(5)).toEqual([200, 200, 200, 429, 429]);
      vi.advanceTimersByTime(700);
      expect(await statuses(3)).toEqual([200, 200, 429]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('applies faults to v2 calls by endpoint and by the repository of the id', async () => {
    const faults = new FaultPlan();
    const simulator = await startV2Simulator({ faults });
    const queues = (
      (await v2Request(simulator, '/v2/merge-queues')).json as {
        data: { id: string; repositoryUrl: string }[];
      }
    ).data;
    const web = queues.find((queue) => queue.repositoryUrl.endsWith('/acme/web'));
    const api = queues.find((queue) => queue.repositoryUrl.endsWith('/acme/api'));
    faults.inject('v2/merge-queues/{id}/pull-requests', edgeError(503, 'text'), {
      repo: 'github.com/acme/web',
      times: 2,
    });
    const pulls = (id: string | undefined) =>
      v2Request(simulator, `/v2/merge-queues/${String(id)}/pull-requests`);
    expect((await pulls(api?.id)).status).toBe(200);
    const failed = await pulls(web?.id);
    expect(failed.status).toBe(503);
    expect(failed.text).toContain('503 Service Unavailable');
    expect((await pulls(web?.id)).status).toBe(503);
    expect((await pulls(web?.id)).status).toBe(200);
    expect(faults.calls().map((call) => [call.endpoint, call.repo, call.fault])).toEqual([
      ['v2/merge-queues', '', undefined],
      ['v2/merge-queues/{id}/pull-requests', 'github.com/acme/api', undefined],
      ['v2/merge-queues/{id}/pull-requests', 'github.com/acme/web', 'status'],
      ['v2/merge-queues/{id}/pull-requests', 'github.com/acme/web', 'status'],
      ['v2/merge-queues/{id}/pull-requests', 'github.com/acme/web', undefined],
    ]);
  });

  it("answers the demo's scripted outage to v2 calls about the repository it hits", async () => {
    const origin = DEFAULT_SIMULATOR_START_TIME;
    const incidents = createIncidentCycle(origin);
    const outage = incidents.incidents.find((incident) => incident.kind === 'api_outage');
    if (outage === undefined) throw new Error('no outage in the cycle');
    const world = createSimulatorWorld({ seed: 16, startTime: origin, script: incidents });
    const simulator = await startV2Simulator({ world, faults: incidents });
    const queues = (await getPage(simulator, '/v2/merge-queues')).data;
    const status = async (repo: string) => {
      const queue = queues.find((row) => String(row.repositoryUrl).endsWith(repo));
      return (await v2Request(simulator, `/v2/merge-queues/${String(queue?.id)}/pull-requests`))
        .status;
    };
    expect(await status(outage.repo.replace('github.com', ''))).toBe(200);
    world.advance(origin + outage.startsAfterSeconds + 5);
    expect(await status(outage.repo.replace('github.com', ''))).toBe(503);
    expect(await status('/acme/web')).toBe(200);
    expect((await v2Request(simulator, '/v2/merge-queues')).status).toBe(200);
    world.advance(origin + outage.startsAfterSeconds + outage.lastsSeconds + 5);
    expect(await status(outage.repo.replace('github.com', ''))).toBe(200);
  });
});
