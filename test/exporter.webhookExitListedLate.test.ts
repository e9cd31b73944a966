// An exit its pull_request.merged event counted, while API v1's getQueue goes on listing the PR for
// a few polls: a real exporter with webhooks on polls a fake Trunk v1 on loopback whose queue the
// test moves by hand. Trunk's words: the final states "merged, failed, cancelled (the PR leaves the
// queue)", and v1's queue may still list a PR that left (trunk-api-notes.md; docs/metrics.md,
// `trunk_merge_queue_pull_requests`). A listing of the stay the event ended is not the PR coming
// back: that stay left once, so it counts once.
import { afterEach, describe, expect, it } from 'vitest';
import { select, type Sample } from './support/exposition.js';
import { configYaml, startTestExporter } from './support/exporterHarness.js';
import { WEBHOOK_SECRET, mergedEventBody, postWebhook, signedHeaders } from './support/webhooks.js';
import { cleanUp, sendJson, sendText, startApiServer } from './trunk/harness.js';

afterEach(cleanUp);

const QUEUE = { repo: 'github.com/acme/web', branch: 'main' };
const INTERVAL_SECONDS = 0.5;
const now = () => Math.floor(Date.now() / 1000);
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

function queueItem(prNumber: number, state: string, stateChangedAt: number) {
  return {
    stateChangedAt: iso(stateChangedAt),
    priorityValue: 100,
    priorityName: 'medium',
    skipTheLine: false,
    noBatch: false,
    prNumber,
    prTitle: `PR ${String(prNumber)}`,
    prSha: `sha-${String(prNumber)}`,
    prBaseBranch: 'main',
    prAuthor: 'alice',
    id: `entry-${String(prNumber)}`,
    usedDefaultPriorityName: 'medium',
    state,
  };
}

function submitted(prNumber: number, state: string, stateChangedAt: number) {
  return {
    ...queueItem(prNumber, state, stateChangedAt),
    forceEnqueued: false,
    isCurrentlySubmittedToQueue: !['merged', 'failed', 'cancelled'].includes(state),
  };
}

/** A fake v1 API serving `queue.items` from getQueue and `lookups` from getSubmittedPullRequest. */
async function fakeQueue() {
  const world = {
    items: [] as ReturnType<typeof queueItem>[],
    lookups: new Map<number, ReturnType<typeof submitted>>(),
  };
  const server = await startApiServer((_req, res, _index, recorded) => {
    if (recorded.url.endsWith('/getQueue')) {
      sendJson(res, 200, {
        state: 'running',
        branch: 'main',
        concurrency: 2,
        testingTimeoutMinutes: 60,
        mode: 'single',
        canOptimisticallyMerge: false,
        pendingFailureDepth: 1,
        batch: false,
        batchingMaxWaitTimeMinutes: 0,
        batchingMinSize: 1,
        createPrsForTestingBranches: true,
        commentsEnabled: true,
        commandsEnabled: true,
        statusCheckEnabled: true,
        bisectionConcurrency: 1,
        requiredStatuses: ['ci'],
        directMergeMode: 'off',
        optimizationMode: 'off',
        mergeMethod: 'squash',
        enqueuedPullRequests: world.items,
      });
      return;
    }
    const body = JSON.parse(recorded.body) as { pr?: { number?: number } };
    const answer = world.lookups.get(body.pr?.number ?? -1);
    if (answer === undefined) sendText(res, 404, 'not found');
    else sendJson(res, 200, answer);
  });
  const polls = () => server.requests.filter((request) => request.url.endsWith('/getQueue')).length;
  return { server, world, polls };
}

async function webhookExporter(apiUrl: string) {
  const exporter = await startTestExporter(
    [
      configYaml({
        apiUrl,
        targets: `  - repo: ${QUEUE.repo}\n    branches: [main]`,
        polling: `  mergeQueueIntervalSeconds: ${String(INTERVAL_SECONDS)}\n  flakyTestsIntervalSeconds: 600`,
      }),
      'webhooks:',
      '  enabled: true',
      `  signingSecret: ${WEBHOOK_SECRET}`,
      '  toleranceSeconds: 60',
    ].join('\n'),
  );
  await exporter.waitUntilReady();
  return exporter;
}

const exited = (samples: readonly Sample[]): Record<string, number> =>
  Object.fromEntries(
    select(samples, 'trunk_merge_queue_pull_requests_exited_total', QUEUE).map(
      (sample): [string, number] => [sample.labels.outcome ?? '', sample.value],
    ),
  );
const bySource = (samples: readonly Sample[]): Record<string, number> =>
  Object.fromEntries(
    select(samples, 'trunk_merge_queue_pull_request_exits_by_source_total', QUEUE).map(
      (sample): [string, number] => [sample.labels.source ?? '', sample.value],
    ),
  );

/** Resolves once `count` more polls have read the queue (and the last one has been folded in). */
async function afterPolls(polls: () => number, count: number): Promise<void> {
  const target = polls() + count;
  const deadline = Date.now() + 20_000;
  while (polls() < target) {
    if (Date.now() > deadline) throw new Error(`fewer than ${String(count)} polls came`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  await new Promise((resolve) => setTimeout(resolve, 200));
}

describe('an exit its event counted, while getQueue still lists the pull request', () => {
  it.each([
    ['in the state it left from', 'testing'],
    ['in its final state', 'merged'],
  ])('counts it once when getQueue lists it %s for a few polls', async (_what, listedAs) => {
    const fake = await fakeQueue();
    const enteredTesting = now() - 600;
    fake.world.items = [queueItem(1, 'testing', enteredTesting)];
    const exporter = await webhookExporter(fake.server.apiUrl);
    await afterPolls(fake.polls, 2);

    // #1 merges; its event comes at once, while getQueue goes on listing it for several polls.
    const mergedAt = now();
    fake.world.lookups.set(1, submitted(1, 'merged', mergedAt));
    const body = mergedEventBody(1, mergedAt);
    const url = `${exporter.exporter.url}/webhooks/trunk`;
    expect((await postWebhook(url, body, signedHeaders(body))).status).toBe(204);
    if (listedAs === 'merged') fake.world.items = [queueItem(1, 'merged', mergedAt)];
    await afterPolls(fake.polls, 4);
    fake.world.items = [];
    await afterPolls(fake.polls, 3);

    const samples = await exporter.samples();
    // One merge, by its event; the listings after it were the same stay, not a new one.
    expect(exited(samples)).toEqual({ merged: 1, failed: 0, cancelled: 0, unknown: 0 });
    expect(bySource(samples)).toEqual({ event: 1, poll: 0 });
  });

  it('still counts a stay that began after the exit its event counted', async () => {
    const fake = await fakeQueue();
    fake.world.items = [queueItem(2, 'testing', now() - 600)];
    const exporter = await webhookExporter(fake.server.apiUrl);
    await afterPolls(fake.polls, 2);

    // #2 fails (its event counts it) and is submitted again at once: every poll lists it, now
    // in a state it entered after it failed.
    const failedAt = now() - 2;
    const body = JSON.stringify({
      ...(JSON.parse(mergedEventBody(2, failedAt)) as object),
      action: 'failed',
      status: 'failed',
      type: 'pull_request.failed',
    });
    fake.world.items = [queueItem(2, 'pending', failedAt + 1)];
    const url = `${exporter.exporter.url}/webhooks/trunk`;
    expect((await postWebhook(url, body, signedHeaders(body))).status).toBe(204);
    await afterPolls(fake.polls, 4);
    // The new stay merges and leaves; no event for it.
    fake.world.lookups.set(2, submitted(2, 'merged', now()));
    fake.world.items = [];
    await afterPolls(fake.polls, 4);

    const samples = await exporter.samples();
    expect(exited(samples)).toEqual({ merged: 1, failed: 1, cancelled: 0, unknown: 0 });
    expect(bySource(samples)).toEqual({ event: 1, poll: 1 });
  });
});
