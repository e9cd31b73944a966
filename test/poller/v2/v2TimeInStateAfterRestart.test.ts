// Time in a state after a restart no poll saw: a PR that two polls both list `testing`, the later
// one since a later `stateChangedAt` ("When the entry entered its current `state`", Trunk's
// QueueEntry), left testing and came back between them. What it spends in `testing` from then on
// runs from that later instant: docs/metrics.md, "The time spent in the earlier state runs from
// `stateChangedAt` to `stateChangedAt`". Poll jobs as the exporter builds them with an API key, a
// scripted queue on loopback (scriptedQueueV2.ts), the page rendered as a scrape gets it.
import { afterEach, describe, expect, it } from 'vitest';
import { byLabel, scriptedQueue } from '../../support/scriptedQueueV2.js';
import { cleanUp } from '../../trunk/harness.js';

afterEach(cleanUp);

/** The first poll: 2026-11-24T10:00:00Z. */
const T0 = Date.parse('2026-11-24T10:00:00Z') / 1000;

/** Submitted at `at`, ready a second later, testing a second after that. */
const enteredTesting = (at: number) => [
  { state: 'notReady', at, reason: 'USER_REQUESTED' },
  { state: 'pending', at: at + 1, reason: 'MERGE_ITEM_NOW_READY' },
  { state: 'testing', at: at + 2, reason: null },
];

/**
 * A queue whose PR `number` the first poll (T0) lists testing since T0 - 60 and the next (T0 + 30)
 * testing since T0 + 10: a push to main sent it back to pending at T0 + 5, and it tested again.
 */
async function restartedBetweenPolls(number: number) {
  const queue = await scriptedQueue({ start: T0 });
  queue.add(number, enteredTesting(T0 - 62), 'medium');
  await queue.pollAt(T0);
  queue.step(number, 'pending', T0 + 5, 'MANUAL_PUSH_TO_TARGET_BRANCH');
  queue.step(number, 'testing', T0 + 10, null);
  await queue.pollAt(T0 + 30);
  return queue;
}

async function timeInState(queue: Awaited<ReturnType<typeof scriptedQueue>>) {
  const samples = await queue.samples();
  return {
    count: byLabel(samples, 'trunk_merge_queue_time_in_state_seconds_count', 'state'),
    sum: byLabel(samples, 'trunk_merge_queue_time_in_state_seconds_sum', 'state'),
  };
}

describe('time in a state entered again between two polls', () => {
  it('counts the stretch the later poll saw begin, when the PR then leaves the state for another', async () => {
    const queue = await restartedBetweenPolls(10);
    // Preempted by an urgent PR at T0 + 35.
    queue.step(10, 'pending', T0 + 35, 'SKIP_THE_LINE_INTERRUPTED');
    await queue.pollAt(T0 + 60); // pending since T0 + 35
    await queue.pollAt(T0 + 90);
    // The polls saw one transition, testing → pending, out of the testing that began at T0 + 10:
    // 25 s in testing (not the 95 s since the stretch before the restart began).
    expect(await timeInState(queue)).toEqual({ count: { testing: 1 }, sum: { testing: 25 } });
    const samples = await queue.samples();
    // The restarts and transitions, from the history, as before.
    expect(byLabel(samples, 'trunk_merge_queue_restarts_total', 'cause')).toEqual({
      MANUAL_PUSH_TO_TARGET_BRANCH: 1,
      SKIP_THE_LINE_INTERRUPTED: 1,
    });
  });

  it('counts the stretch the later poll saw begin, when the PR then leaves the queue', async () => {
    const queue = await restartedBetweenPolls(11);
    // Merged at T0 + 40 ("merged: Terminal — merged into the target branch"), gone at T0 + 60.
    queue.step(11, 'merged', T0 + 40, 'MERGE_GRAPH_MERGE');
    await queue.pollAt(T0 + 60);
    await queue.pollAt(T0 + 90);
    // From testing at T0 + 10 to merged at T0 + 40: 30 s.
    expect(await timeInState(queue)).toEqual({ count: { testing: 1 }, sum: { testing: 30 } });
    const samples = await queue.samples();
    expect(byLabel(samples, 'trunk_merge_queue_pull_requests_exited_total', 'outcome')).toEqual({
      merged: 1,
      failed: 0,
      cancelled: 0,
      unknown: 0,
    });
    // Time in queue is unchanged by the restart: from the first poll's T0 - 60 (a PR queued before
    // the exporter started counts from its state change then) to T0 + 40.
    expect(byLabel(samples, 'trunk_merge_queue_time_in_queue_seconds_sum', 'outcome').merged).toBe(
      100,
    );
  });
});
