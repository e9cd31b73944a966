// What a merge queue's page writes at 0 before anything has happened, so that rate() and increase()
// see the first count, and what it writes only from its first count: the combinations Trunk's
// definition says a queue can have are written from the start, every other one once it occurs. A
// page of 1,000 queues carries each zero 1,000 times (issue 39 item 10).
import { describe, expect, it } from 'vitest';
import { advanceQueueFlow, startQueueFlow } from '../../src/flow/queueFlow.js';
import { countTestingResults, startTestingAttempts } from '../../src/poller/v2/v2TestingResults.js';
import { SnapshotStore } from '../../src/snapshot/store.js';
import type { MergeQueueSnapshot } from '../../src/snapshot/types.js';
import { poll, type ScriptedPullRequest } from '../flow/scriptedPolls.js';
import { parseExposition, select } from '../support/exposition.js';
import { renderPage, storePage } from './page.js';

const T0 = 1_767_225_600;
const FLOW_OPTIONS = { maxGapSeconds: 600, lookupRetrySeconds: 600, intervalSeconds: 30 };

/** github.com/acme/web main at `takenAt`, batching or not, listing `pullRequests`. */
function queue(
  takenAt: number,
  batch: boolean,
  pullRequests: readonly ScriptedPullRequest[],
): MergeQueueSnapshot {
  const snapshot = poll(takenAt, 'running', pullRequests);
  return { ...snapshot, settings: { ...snapshot.settings, batch } };
}

/** The page of a store whose one queue went from `first` to `second` (API v2: with attempts). */
async function page(
  first: MergeQueueSnapshot,
  second: MergeQueueSnapshot,
  exits: ReadonlyMap<number, { outcome: 'unknown'; leftAt: number }>,
  testingResults: Parameters<typeof countTestingResults>[1],
) {
  const target = { kind: 'merge_queue', repo: second.repo, branch: second.branch } as const;
  const store = new SnapshotStore(600, () => second.takenAt);
  store.setTargets([target]);
  const flow = advanceQueueFlow(startQueueFlow(first), second, exits, {
    ...FLOW_OPTIONS,
    webhooks: false,
  });
  const started = startTestingAttempts(first.takenAt, second.settings.batch === true);
  const { attempts } = countTestingResults(started, testingResults, second.takenAt);
  store.recordSuccess(target, second, 0.1, flow, attempts);
  const samples = parseExposition(await renderPage(storePage(store)));
  return {
    pullRequests: select(samples, 'trunk_merge_queue_pull_requests').map(
      ({ labels, value }) => `${labels.state ?? ''}/${labels.priority ?? ''} ${String(value)}`,
    ),
    timeInQueue: select(samples, 'trunk_merge_queue_time_in_queue_seconds_count').map(
      ({ labels, value }) => `${labels.outcome ?? ''} ${String(value)}`,
    ),
    testing: select(samples, 'trunk_merge_queue_testing_duration_seconds_count').map(
      ({ labels, value }) => `${labels.outcome ?? ''}/${labels.bisection ?? ''} ${String(value)}`,
    ),
  };
}

describe('the series of a queue before its first count', () => {
  it('are the live entry states, the final states and the testing outcomes a batching queue can have', async () => {
    const empty = queue(T0, true, []);
    const { pullRequests, timeInQueue, testing } = await page(
      empty,
      { ...empty, takenAt: T0 + 30 },
      new Map(),
      [],
    );
    // "Queue-entry states: notReady, pending, testing, testsPassed, pendingFailure (not final),
    // merged, failed, cancelled (final)": a pull request in the queue has one of the first five;
    // "Priority: `urgent` = 0 (interrupts testing), `high` = 10, `medium` = 100 (the default)".
    expect(pullRequests).toEqual([
      'not_ready/medium 0',
      'pending/medium 0',
      'testing/medium 0',
      'tests_passed/medium 0',
      'pending_failure/medium 0',
    ]);
    // How an entry leaves: one of the three final states.
    expect(timeInQueue).toEqual(['merged 0', 'failed 0', 'cancelled 0']);
    // TestingOutcome: "`passed` — the run passed, including a passing bisection step. `failed` —
    // the run failed, or the pull request entered bisection. `interrupted` — testing was cut short
    // and will be retried [...]. `cancelled` — the pull request left the queue while testing";
    // startedBisection "Can be true together with `isBisection`, when a bisection step splits
    // again": a bisection step passes or fails.
    expect(testing).toEqual([
      'passed/false 0',
      'failed/false 0',
      'interrupted/false 0',
      'cancelled/false 0',
      'passed/true 0',
      'failed/true 0',
    ]);
  });

  it('has no bisection steps where the queue does not batch: only a batch is split', async () => {
    const empty = queue(T0, false, []);
    const { testing } = await page(empty, { ...empty, takenAt: T0 + 30 }, new Map(), []);
    expect(testing).toEqual([
      'passed/false 0',
      'failed/false 0',
      'interrupted/false 0',
      'cancelled/false 0',
    ]);
  });
});

describe('any other series', () => {
  it('appears with its first count', async () => {
    // PR 7 is listed merged (API v1's getQueue may list a pull request that just left), PR 8 left
    // and its lookup could not tell how, a bisection step of PR 9 was cut short, and PR 10 waits
    // at priority urgent.
    const first = queue(T0, true, [
      [7, 'testing', T0 - 600],
      [8, 'testing', T0 - 600],
    ]);
    const listed = queue(T0 + 30, true, [
      [7, 'merged', T0 + 20],
      [10, 'pending', T0 + 10],
    ]);
    const second: MergeQueueSnapshot = {
      ...listed,
      pullRequests: listed.pullRequests.map((pr) =>
        pr.number === 10 ? { ...pr, priorityName: 'urgent' } : pr,
      ),
    };
    const { pullRequests, timeInQueue, testing } = await page(
      first,
      second,
      new Map([[8, { outcome: 'unknown', leftAt: T0 + 30 }]]),
      [
        {
          pullRequestNumber: 9,
          endedAt: '2026-01-01T00:00:20Z',
          testingDurationMs: 120_000,
          outcome: 'interrupted',
          isBisection: true,
          startedBisection: false,
        },
      ],
    );
    expect(pullRequests.slice(5)).toEqual(['merged/medium 1', 'pending/urgent 1']);
    expect(timeInQueue).toEqual(['merged 0', 'failed 0', 'cancelled 0', 'unknown 1']);
    expect(testing.slice(6)).toEqual(['interrupted/true 1']);
  });
});
