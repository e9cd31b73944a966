// A merge queue that leaves the polled set and comes back: a reload that removes it and one that
// adds it back, or discovery turned off and on again. Its counters must go on from where they were
// (a counter that restarts at 0 is a reset to Prometheus), and what the queue did while it was away
// must count once, at the first poll after it came back. A real exporter polls a scripted API v2
// queue (scriptedQueueV2.ts) on the real clock; its timelines are written here by hand.
//
// Trunk's words for what the rows mean (../shared/trunk-openapi-v2/): the concluded entries are
// "pull requests that reached `merged`, `failed` or `cancelled` inside that window"; a transition's
// `reason` is why the entry entered its `state` (`TEST_RUN_TIMEOUT` into `failed`, `USER_REQUESTED`
// into `cancelled`, `MANUAL_PUSH_TO_TARGET_BRANCH` back to `pending` from `testing`, a restart).
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Sample } from '../support/exposition.js';
import {
  configYaml,
  startTestExporter,
  type ExporterUnderTest,
} from '../support/exporterHarness.js';
import {
  exited,
  fakeQueue,
  now as v1Now,
  queueItem,
  submitted,
} from '../support/fakeTrunkV1Queue.js';
import { QUEUE, byLabel, scriptedQueue } from '../support/scriptedQueueV2.js';
import { cleanUp } from '../trunk/harness.js';

afterEach(cleanUp);

const APP = '  - repo: github.com/acme/app\n    branches: [main]';
/** A queue the organization does not have: it keeps the target list non-empty while APP is out. */
const OTHER = '  - repo: github.com/acme/other\n    branches: [main]';

/** The queue's counters the scenario moves, by their one varying label. */
function counters(samples: readonly Sample[]) {
  return {
    exited: byLabel(samples, 'trunk_merge_queue_pull_requests_exited_total', 'outcome'),
    failed: byLabel(samples, 'trunk_merge_queue_pull_requests_failed_total', 'reason'),
    cancelled: byLabel(samples, 'trunk_merge_queue_pull_requests_cancelled_total', 'reason'),
    restarts: byLabel(samples, 'trunk_merge_queue_restarts_total', 'cause'),
  };
}

const BEFORE = {
  exited: { merged: 1, failed: 0, cancelled: 0, unknown: 0 },
  failed: {},
  cancelled: {},
  restarts: {},
};
/** BEFORE, with #2 failed on a timeout, #3 cancelled by its author and #4 restarted by a push. */
const AFTER = {
  exited: { merged: 1, failed: 1, cancelled: 1, unknown: 0 },
  failed: { TEST_RUN_TIMEOUT: 1 },
  cancelled: { USER_REQUESTED: 1 },
  restarts: { MANUAL_PUSH_TO_TARGET_BRANCH: 1 },
};

/** Waits (up to 20 s) for the queue's counters to read `expected`, then holds them to it. */
async function expectCounters(exporter: ExporterUnderTest, expected: typeof BEFORE) {
  const deadline = Date.now() + 20_000;
  let samples = await exporter.samples();
  while (JSON.stringify(counters(samples)) !== JSON.stringify(expected) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    samples = await exporter.samples();
  }
  expect(counters(samples)).toEqual(expected);
}

/** A queue of four PRs testing since a minute ago, polled every 0.3 s by a reloadable exporter. */
async function watchedQueue(
  extraLines: (withApp: boolean) => string[],
  targets: (withApp: boolean) => string,
) {
  const t0 = Math.floor(Date.now() / 1000) - 60;
  const queue = await scriptedQueue({ start: t0 });
  for (const number of [1, 2, 3, 4]) {
    queue.add(number, [
      { state: 'notReady', at: t0, reason: 'USER_REQUESTED' },
      { state: 'pending', at: t0 + 1, reason: 'MERGE_ITEM_NOW_READY' },
      { state: 'testing', at: t0 + 2, reason: null },
    ]);
  }
  const file = join(await mkdtemp(join(tmpdir(), 'trunk-exporter-target-back-')), 'config.yaml');
  const yaml = (withApp: boolean) =>
    [
      configYaml({
        apiUrl: queue.origin,
        token: null,
        apiKey: 'trunk_v2_target-back-key',
        targets: targets(withApp),
        polling: '  mergeQueueIntervalSeconds: 0.3\n  flakyTestsIntervalSeconds: 600',
      }),
      ...extraLines(withApp),
    ].join('\n');
  await writeFile(file, yaml(true));
  const exporter = await startTestExporter(yaml(true), 'info', file);
  await exporter.waitUntilReady();
  const polls = () =>
    queue.requests.filter((path) => /\/pull-requests\?(?!.*(state|concludedAfter)=)/.test(path))
      .length;
  const reload = async (withApp: boolean) => {
    await writeFile(file, yaml(withApp));
    expect((await exporter.exporter.reload('SIGHUP')).applied).toBe(true);
  };
  return { queue, exporter, polls, reload, now: () => Math.floor(Date.now() / 1000) };
}

/** Resolves once the page has no series of the queue `labels` names (the scripted v2 one unless given). */
async function gone(exporter: ExporterUnderTest, labels: { repo: string; branch: string } = QUEUE) {
  await exporter.waitFor(
    (samples) =>
      !samples.some(
        (sample) => sample.labels.repo === labels.repo && sample.labels.branch === labels.branch,
      ),
    'the queue to leave the page',
  );
}

describe('a merge queue that leaves the polled set and comes back', () => {
  it('goes on counting across a reload that removes it and one that adds it back', async () => {
    const { queue, exporter, polls, reload, now } = await watchedQueue(
      () => [],
      (withApp) => (withApp ? `${APP}\n${OTHER}` : OTHER),
    );
    queue.step(1, 'merged', now(), null);
    await expectCounters(exporter, BEFORE);

    await reload(false);
    await gone(exporter);
    const pollsWhileAway = polls();
    // While no one watches: #2 fails, #3 is cancelled, a push to main restarts #4's testing.
    queue.step(2, 'failed', now(), 'TEST_RUN_TIMEOUT');
    queue.step(3, 'cancelled', now(), 'USER_REQUESTED');
    queue.step(4, 'pending', now(), 'MANUAL_PUSH_TO_TARGET_BRANCH');
    queue.step(4, 'testing', now(), null);
    expect(polls()).toBe(pollsWhileAway);

    await reload(true);
    await expectCounters(exporter, AFTER);
  });

  it('goes on counting when discovery is turned off and on again', async () => {
    const { queue, exporter, reload, now } = await watchedQueue(
      (withApp) => [
        'discovery:',
        `  enabled: ${String(withApp)}`,
        '  intervalSeconds: 0.5',
        '  flakyTests: false',
      ],
      () => OTHER,
    );
    queue.step(1, 'merged', now(), null);
    await expectCounters(exporter, BEFORE);

    await reload(false);
    await gone(exporter);
    queue.step(2, 'failed', now(), 'TEST_RUN_TIMEOUT');
    queue.step(3, 'cancelled', now(), 'USER_REQUESTED');
    queue.step(4, 'pending', now(), 'MANUAL_PUSH_TO_TARGET_BRANCH');
    queue.step(4, 'testing', now(), null);

    await reload(true);
    await expectCounters(exporter, AFTER);
  });

  it('goes on counting through API v1, its first poll back looking up the PRs that left', async () => {
    // trunk-api-v1.md: getQueue lists the PRs in the queue; getSubmittedPullRequest tells the
    // state of one that left (`merged`, `failed`, `cancelled`).
    const v1 = await fakeQueue();
    const since = v1Now() - 60;
    v1.world.items = [1, 2, 3].map((number) => queueItem(number, 'testing', since));
    const web = { repo: 'github.com/acme/web', branch: 'main' };
    const file = join(await mkdtemp(join(tmpdir(), 'trunk-exporter-target-back-')), 'config.yaml');
    const yaml = (withWeb: boolean) =>
      configYaml({
        apiUrl: v1.server.origin,
        targets: [
          '  - repo: github.com/acme/other\n    branches: [main]',
          ...(withWeb ? ['  - repo: github.com/acme/web\n    branches: [main]'] : []),
        ].join('\n'),
        polling: '  mergeQueueIntervalSeconds: 0.3\n  flakyTestsIntervalSeconds: 600',
      });
    const reload = async (withWeb: boolean) => {
      await writeFile(file, yaml(withWeb));
      expect((await exporter.exporter.reload('SIGHUP')).applied).toBe(true);
    };
    await writeFile(file, yaml(true));
    const exporter = await startTestExporter(yaml(true), 'info', file);
    await exporter.waitUntilReady();
    /** PR `number` leaves the queue `state`. */
    const leave = (number: number, state: string) => {
      v1.world.lookups.set(number, submitted(number, state, v1Now()));
      v1.world.items = v1.world.items.filter((item) => item.prNumber !== number);
    };
    leave(1, 'merged');
    await exporter.waitFor((samples) => exited(samples).merged === 1, 'the merge');

    await reload(false);
    await gone(exporter, web);
    leave(2, 'failed');
    leave(3, 'cancelled');

    await reload(true);
    const expected = { merged: 1, failed: 1, cancelled: 1, unknown: 0 };
    const samples = await exporter
      .waitFor(
        (current) => JSON.stringify(exited(current)) === JSON.stringify(expected),
        'the exits made while the queue was away',
      )
      .catch(() => exporter.samples());
    expect(exited(samples)).toEqual(expected);
  });
});
