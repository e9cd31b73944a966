// When testing attempts show (issue 37 item 13), through a real exporter holding an API key that
// polls a fake organization on loopback. Trunk's `pending` after `testing` is a restart: the pull
// request stays in the queue, so no exit read asks for its attempt; the live list shows it left
// `testing`, and the attempt must show within a poll or two of that, not at the periodic read up
// to 30 polls later.
import { afterEach, describe, expect, it } from 'vitest';
import { sum, type Sample } from './support/exposition.js';
import { configYaml, startTestExporter } from './support/exporterHarness.js';
import {
  WEB_QUEUE,
  entryRow,
  moveEntry,
  startFakeWebQueue,
  testingResult,
} from './support/queueEntryRows.js';
import { cleanUp } from './trunk/harness.js';

afterEach(cleanUp);

const QUEUE = { repo: 'github.com/acme/web', branch: 'main' };
const now = () => Date.now() / 1000;
const LIVE_LIST = /^\/v2\/merge-queues\/[^/]+\/pull-requests$/;
const TESTING_RESULTS = /^\/v2\/merge-queues\/[^/]+\/testing-results$/;

const failedAttempts = (samples: readonly Sample[]) =>
  sum(samples, 'trunk_merge_queue_testing_duration_seconds_count', { ...QUEUE, outcome: 'failed' });

describe('testing attempts through a real exporter', () => {
  it('shows an attempt that ended in a restart within the polls that follow the one that sees the PR leave testing', async () => {
    const pr40 = entryRow(40, 'testing', now() - 600);
    const pr41 = entryRow(41, 'pending', now() - 600);
    const fake = await startFakeWebQueue([pr40, pr41]);
    const exporter = await startTestExporter(
      configYaml({
        apiUrl: fake.origin,
        token: null,
        apiKey: 'trunk_v2_testing-trigger-key',
        targets: '  - repo: github.com/acme/web\n    branches: [main]',
        polling: '  mergeQueueIntervalSeconds: 0.2\n  flakyTestsIntervalSeconds: 600',
      }),
    );
    await exporter.waitFor(
      (samples) =>
        sum(samples, 'trunk_merge_queue_pull_requests', { ...QUEUE, state: 'testing' }) === 1,
      '#40 testing',
    );
    // Let the first polls' reads pass, so that the periodic read is far off.
    const settled = fake.requestsTo(LIVE_LIST).length;
    await exporter.waitFor(() => fake.requestsTo(LIVE_LIST).length >= settled + 3, 'three polls');
    // #40's run fails and it goes back to pending (restarted), still in the queue.
    fake.testingResults(WEB_QUEUE).push(testingResult(40, now(), 'failed'));
    moveEntry(pr40, 'pending', now());
    const movedAt = fake.requests.length;
    const shown = await exporter.waitFor((samples) => failedAttempts(samples) === 1, 'the attempt');
    expect(failedAttempts(shown)).toBe(1);
    // The first poll to list it after the move read the results: no other live-list read before
    // that read (one already asked for when it moved at most), where the periodic read may be 30
    // polls off.
    const after = fake.requests.slice(movedAt).map((request) => new URL(request.url, fake.origin));
    const resultsRead = after.findIndex((url) => TESTING_RESULTS.test(url.pathname));
    expect(resultsRead).toBeGreaterThan(0);
    const polls = after.slice(0, resultsRead).filter((url) => LIVE_LIST.test(url.pathname));
    expect(polls.length).toBeLessThanOrEqual(2);
  });
});
