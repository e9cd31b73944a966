// GET /v2/merge-queues and /v2/merge-queues/{id}: every queue of the world, the same queues v1's
// getQueue shows, with v2's names and camelCase values.
import { describe, expect, it } from 'vitest';
import { mergeQueueSchema } from '../../src/trunk/schemas.js';
import type { RunningSimulator } from '../../src/simulator/server.js';
import { post } from './harness.js';
import { errorOf, getOne, getPage, startV2Simulator, v2Request, walk } from './v2Harness.js';

const V1_TO_V2_STATE: Record<string, string> = {
  running: 'running',
  paused: 'paused',
  draining: 'draining',
  switching_modes: 'switchingModes',
};

async function v1Queue(simulator: RunningSimulator, repositoryUrl: string, branch: string) {
  const url = new URL(repositoryUrl);
  const [owner, name] = url.pathname.slice(1).split('/');
  const host = url.host;
  const reply = await post(simulator, '/getQueue', {
    repo: { host, owner, name },
    targetBranch: branch,
  });
  expect(reply.status, reply.text).toBe(200);
  return mergeQueueSchema.parse(reply.json);
}

describe('GET /v2/merge-queues', () => {
  it('lists every queue of the world once, as v1 shows the same queue', async () => {
    const simulator = await startV2Simulator({ seed: 5 });
    const now = simulator.world.now();
    simulator.world.mergeQueues[1]?.model.holdState('draining', now, now + 600);
    const { rows } = await walk(simulator, '/v2/merge-queues?limit=2');
    const names = rows.map((row) => `${String(row.repositoryUrl)}@${String(row.targetBranch)}`);
    expect(names).toEqual([
      'https://github.com/acme/web@main',
      'https://github.com/acme/web@release',
      'https://github.com/acme/api@main',
      'https://github.com/acme/mobile@develop',
    ]);
    expect(new Set(rows.map((row) => row.id)).size).toBe(4);
    expect(rows.map((row) => row.state)).toContain('draining');
    for (const row of rows) {
      const v1 = await v1Queue(simulator, String(row.repositoryUrl), String(row.targetBranch));
      expect(row.state).toBe(V1_TO_V2_STATE[v1.state]);
      expect(row.mode).toBe(v1.mode === 'single' ? 'queue' : 'graph');
      expect(row.pullRequestsUrl).toBe(`/v2/merge-queues/${String(row.id)}/pull-requests`);
      expect(row.config).toMatchObject({
        concurrency: v1.concurrency,
        bisectionConcurrency: v1.bisectionConcurrency,
        pendingFailureDepth: v1.pendingFailureDepth,
        canOptimisticallyMerge: v1.canOptimisticallyMerge,
        allowBatching: v1.batch,
        batchingMaxWaitTimeMinutes: v1.batchingMaxWaitTimeMinutes,
        batchingMinSize: v1.batchingMinSize,
        testingTimeoutMinutes: v1.testingTimeoutMinutes,
        createsPrsForTestingBranches: v1.createPrsForTestingBranches,
        areCommentsEnabled: v1.commentsEnabled,
        areCommandsEnabled: v1.commandsEnabled,
        isStatusCheckEnabled: v1.statusCheckEnabled,
        requiredStatuses: v1.requiredStatuses,
        directMergeMode: v1.directMergeMode,
        optimizationMode: v1.optimizationMode === 'off' ? 'off' : 'bisectionSkipRedundantTests',
        mergeMethod: { merge_commit: 'mergeCommit', squash: 'squash', rebase: 'rebase' }[
          String(v1.mergeMethod)
        ],
      });
      expect(Date.parse(String(row.updatedAt))).toBeGreaterThanOrEqual(
        Date.parse(String(row.createdAt)),
      );
    }
  });

  it('keeps ids across restarts and seeds, and answers one queue by id', async () => {
    const first = await getPage(await startV2Simulator({ seed: 1 }), '/v2/merge-queues');
    const simulator = await startV2Simulator({ seed: 2 });
    const second = await getPage(simulator, '/v2/merge-queues');
    expect(second.data.map((row) => row.id)).toEqual(first.data.map((row) => row.id));
    const [queue] = second.data;
    if (queue === undefined) throw new Error('no queue');
    expect(await getOne(simulator, `/v2/merge-queues/${String(queue.id)}`)).toEqual(queue);
  });

  it('filters by repositoryId, and by targetBranch only together with it', async () => {
    const simulator = await startV2Simulator();
    const all = await getPage(simulator, '/v2/merge-queues');
    const web = all.data.find((row) => row.repositoryUrl === 'https://github.com/acme/web');
    if (web === undefined) throw new Error('no web queue');
    const repositoryId = String(web.repositoryId);
    const ofWeb = await getPage(simulator, `/v2/merge-queues?repositoryId=${repositoryId}`);
    expect(ofWeb.data.map((row) => row.targetBranch)).toEqual(['main', 'release']);
    const release = await getPage(
      simulator,
      `/v2/merge-queues?repositoryId=${repositoryId}&targetBranch=release`,
    );
    expect(release.data.map((row) => row.targetBranch)).toEqual(['release']);
    const none = await getPage(
      simulator,
      '/v2/merge-queues?repositoryId=00000000-0000-4000-8000-000000000000',
    );
    expect(none).toEqual({ data: [], nextCursor: null, hasMore: false });
    // The definition types repositoryId as a uuid.
    const malformed = await v2Request(simulator, '/v2/merge-queues?repositoryId=acme%2Fweb');
    expect(malformed.status).toBe(400);
    expect(errorOf(malformed)?.message).toContain('repositoryId must be a uuid');

    const alone = await v2Request(simulator, '/v2/merge-queues?targetBranch=main');
    expect(alone.status).toBe(400);
    expect(errorOf(alone)?.code).toBe('VALIDATION_FAILED');
    expect(errorOf(alone)?.message).toMatch(/targetBranch.*repositoryId/);
  });

  it('answers 404 MERGE_QUEUE_NOT_FOUND for an unknown id, with a request id', async () => {
    const simulator = await startV2Simulator();
    for (const path of ['/v2/merge-queues/mq_nope', '/v2/merge-queues/mq_nope/pull-requests']) {
      const reply = await v2Request(simulator, path);
      expect(reply.status).toBe(404);
      expect(reply.headers.get('content-type')).toBe('application/json');
      expect(reply.headers.get('x-request-id')).toMatch(/^sim-\d{8}$/);
      expect(errorOf(reply)).toEqual({
        code: 'MERGE_QUEUE_NOT_FOUND',
        message: 'merge queue mq_nope not found',
      });
    }
  });
});
