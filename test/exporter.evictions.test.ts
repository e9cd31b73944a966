// Eviction loops through a real exporter holding an API key, polling a fake organization whose
// queue the test moves by hand (issue 37 item 3). From Trunk's definition:
// - `pendingFailure`: "A failure is expected because an entry ahead failed, but this entry has not
//   been re-tested yet. Not terminal: it usually returns to `pending` or `testing`."
// - `failed`: "Terminal — verification or the merge itself failed."
// - `entryConclusion`: "A pull request that fails and is resubmitted has a new entry."
// - a testing result's `failed`: "the run failed, or the pull request entered bisection".
// - a batched run "appears once per pull request it tested".
// So a pull request retested after a failure ahead of it and then failed is evicted once, though
// two of its testing attempts failed; failed again after its resubmission, it is an eviction loop:
// one repeated failure. The other pull requests of a failed batch that bisection clears stay in
// the queue (`pendingFailure`, then tested again): no eviction of theirs.
import { afterEach, describe, expect, it } from 'vitest';
import { sum, type Sample } from './support/exposition.js';
import { configYaml, startTestExporter } from './support/exporterHarness.js';
import {
  WEB_QUEUE,
  entryRow,
  moveEntry,
  resubmitEntry,
  startFakeWebQueue,
  testingResult,
} from './support/queueEntryRows.js';
import { cleanUp } from './trunk/harness.js';

afterEach(cleanUp);

const QUEUE = { repo: 'github.com/acme/web', branch: 'main' };
const now = () => Date.now() / 1000;

const inState = (state: string) => (samples: readonly Sample[]) =>
  sum(samples, 'trunk_merge_queue_pull_requests', { ...QUEUE, state }) === 1;
const exited = (samples: readonly Sample[], outcome: string) =>
  sum(samples, 'trunk_merge_queue_pull_requests_exited_total', { ...QUEUE, outcome });
const repeated = (samples: readonly Sample[]) =>
  sum(samples, 'trunk_merge_queue_repeated_failures_total', QUEUE);

function startExporter(origin: string) {
  return startTestExporter(
    configYaml({
      apiUrl: origin,
      token: null,
      apiKey: 'trunk_v2_evictions-key',
      targets: '  - repo: github.com/acme/web\n    branches: [main]',
      polling: '  mergeQueueIntervalSeconds: 0.2\n  flakyTestsIntervalSeconds: 600',
    }),
  );
}

describe('eviction loops through a real exporter', () => {
  it('counts a PR failed after a retest as evicted once, and its failure after a resubmission as a loop', async () => {
    const pr10 = entryRow(10, 'testing', now() - 600);
    const pr11 = entryRow(11, 'testing', now() - 600);
    const fake = await startFakeWebQueue([pr10, pr11]);
    const exporter = await startExporter(fake.origin);
    await exporter.waitFor(
      (samples) => sum(samples, 'trunk_merge_queue_pull_requests', { state: 'testing' }) === 2,
      'both testing',
    );
    // #11, ahead, fails and leaves; #10's run on top of it fails too, and #10 waits to be retested.
    const attempts = fake.testingResults(WEB_QUEUE);
    attempts.push(testingResult(11, now(), 'failed', 'failed'));
    attempts.push(testingResult(10, now(), 'failed'));
    moveEntry(pr11, 'failed', now());
    moveEntry(pr10, 'pendingFailure', now());
    await exporter.waitFor(inState('pending_failure'), '#10 pending failure');
    moveEntry(pr10, 'testing', now());
    await exporter.waitFor(inState('testing'), '#10 retested');
    attempts.push(testingResult(10, now(), 'failed', 'failed'));
    moveEntry(pr10, 'failed', now());
    const evicted = await exporter.waitFor((samples) => exited(samples, 'failed') === 2, '#10 out');
    expect(repeated(evicted)).toBe(0);
    // Resubmitted as a new entry, it fails again: a loop.
    pr10.queueEntry.id = 'entry-10-resubmitted';
    moveEntry(pr10, 'notReady', now());
    await exporter.waitFor(inState('not_ready'), '#10 resubmitted');
    attempts.push(testingResult(10, now(), 'failed', 'failed'));
    moveEntry(pr10, 'failed', now());
    const looping = await exporter.waitFor(
      (samples) => exited(samples, 'failed') === 3,
      '#10 out again',
    );
    expect(repeated(looping)).toBe(1);
  });

  it('counts no eviction for the PRs of a failed batch that bisection clears, and one loop when its culprit, resubmitted on its old entry, fails again', async () => {
    const batch = [20, 21, 22].map((number) => entryRow(number, 'testing', now() - 600));
    const [pr20, pr21, pr22] = batch as [(typeof batch)[0], (typeof batch)[0], (typeof batch)[0]];
    const fake = await startFakeWebQueue(batch);
    const exporter = await startExporter(fake.origin);
    await exporter.waitFor(
      (samples) => sum(samples, 'trunk_merge_queue_pull_requests', { state: 'testing' }) === 3,
      'the batch testing',
    );
    // The batch's run fails: a row per PR, each `failed` ("the run failed, or the pull request
    // entered bisection"), and bisection finds #20 the culprit; #21 and #22 wait to be retested.
    const attempts = fake.testingResults(WEB_QUEUE);
    const failedAt = now();
    for (const number of [20, 21, 22]) attempts.push(testingResult(number, failedAt, 'failed'));
    attempts.push(testingResult(20, failedAt + 1, 'failed', 'failed'));
    moveEntry(pr20, 'failed', failedAt + 1);
    moveEntry(pr21, 'pendingFailure', failedAt);
    moveEntry(pr22, 'pendingFailure', failedAt);
    await exporter.waitFor((samples) => exited(samples, 'failed') === 1, '#20 out');
    // Retested without #20, both pass and merge.
    moveEntry(pr21, 'testing', now());
    moveEntry(pr22, 'testing', now());
    await exporter.waitFor(
      (samples) => sum(samples, 'trunk_merge_queue_pull_requests', { state: 'testing' }) === 2,
      '#21 and #22 retested',
    );
    for (const pr of [pr21, pr22]) {
      attempts.push(testingResult(pr.number, now(), 'passed', 'merged'));
      moveEntry(pr, 'merged', now());
    }
    const cleared = await exporter.waitFor(
      (samples) => exited(samples, 'merged') === 2,
      '#21 and #22 merged',
    );
    expect(exited(cleared, 'failed')).toBe(1);
    expect(repeated(cleared)).toBe(0);
    // #20, submitted again on its old entry ("the definition says both"), fails again: a loop.
    resubmitEntry(pr20, failedAt + 1, now());
    await exporter.waitFor(inState('not_ready'), '#20 resubmitted');
    moveEntry(pr20, 'testing', now());
    await exporter.waitFor(inState('testing'), '#20 tested again');
    attempts.push(testingResult(20, now(), 'failed', 'failed'));
    moveEntry(pr20, 'failed', now());
    const looping = await exporter.waitFor(
      (samples) => exited(samples, 'failed') === 2,
      '#20 out again',
    );
    expect(repeated(looping)).toBe(1);
  });
});
