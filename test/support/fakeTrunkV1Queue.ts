// A fake Trunk API v1 on loopback whose merge queue a test moves by hand, and a real exporter with
// webhooks on polling it every half second: for the cases where an event and the polls meet.
import { select, type Sample } from './exposition.js';
import { configYaml, startTestExporter } from './exporterHarness.js';
import { WEBHOOK_SECRET } from './webhooks.js';
import { sendJson, sendText, startApiServer } from '../trunk/harness.js';
import { queueResponse } from '../trunk/fixtures.js';

/** The queue the exporter polls, as its labels name it. */
export const QUEUE = { repo: 'github.com/acme/web', branch: 'main' };
const INTERVAL_SECONDS = 0.5;
/** The clock in whole Unix seconds, as Trunk's timestamps are written here. */
export const now = () => Math.floor(Date.now() / 1000);
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/** An `enqueuedPullRequests` item of getQueue, with the live service's `state`. */
export function queueItem(prNumber: number, state: string, stateChangedAt: number) {
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

/** A getSubmittedPullRequest answer. */
export function submitted(prNumber: number, state: string, stateChangedAt: number) {
  return {
    ...queueItem(prNumber, state, stateChangedAt),
    forceEnqueued: false,
    isCurrentlySubmittedToQueue: !['merged', 'failed', 'cancelled'].includes(state),
  };
}

/** A fake v1 API (closed by test/trunk/harness.ts cleanUp) serving `queue.items` from getQueue and `lookups` from getSubmittedPullRequest. */
export async function fakeQueue() {
  const world = {
    items: [] as ReturnType<typeof queueItem>[],
    lookups: new Map<number, ReturnType<typeof submitted>>(),
  };
  const server = await startApiServer((_req, res, _index, recorded) => {
    if (recorded.url.endsWith('/getQueue')) {
      sendJson(res, 200, { ...queueResponse(), enqueuedPullRequests: world.items });
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

/** An exporter with webhooks on polling acme/web main at `apiUrl` every INTERVAL_SECONDS. */
export async function webhookExporter(apiUrl: string) {
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

/** trunk_merge_queue_pull_requests_exited_total of QUEUE by outcome. */
export const exited = (samples: readonly Sample[]): Record<string, number> =>
  Object.fromEntries(
    select(samples, 'trunk_merge_queue_pull_requests_exited_total', QUEUE).map(
      (sample): [string, number] => [sample.labels.outcome ?? '', sample.value],
    ),
  );
/** trunk_merge_queue_pull_request_exits_by_source_total of QUEUE by source. */
export const bySource = (samples: readonly Sample[]): Record<string, number> =>
  Object.fromEntries(
    select(samples, 'trunk_merge_queue_pull_request_exits_by_source_total', QUEUE).map(
      (sample): [string, number] => [sample.labels.source ?? '', sample.value],
    ),
  );

/** Resolves once `count` more polls have read the queue (and the last one has been folded in). */
export async function afterPolls(polls: () => number, count: number): Promise<void> {
  const target = polls() + count;
  const deadline = performance.now() + 20_000;
  while (polls() < target) {
    if (performance.now() > deadline) throw new Error(`fewer than ${String(count)} polls came`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  await new Promise((resolve) => setTimeout(resolve, 200));
}
