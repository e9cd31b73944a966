// A pull_request.* event whose `timestamp` lies ahead of the exporter's clock by more than the
// clocks' slack (Trunk's clock running ahead), through a real exporter polling a fake Trunk v1. The
// exporter already does not take such a time for a merge's (docs/metrics.md,
// `trunk_merge_queue_last_merge_timestamp_seconds`: "lies over 60 s in the future is not used");
// the exit's own time must not be taken either, or the PR's time in queue runs into the future and
// the event no longer meets the exit its poll counted.
import { afterEach, describe, expect, it } from 'vitest';
import { sum } from './support/exposition.js';
import {
  QUEUE,
  afterPolls,
  bySource,
  exited,
  fakeQueue,
  now,
  queueItem,
  submitted,
  webhookExporter,
} from './support/fakeTrunkV1Queue.js';
import { mergedEventBody, postWebhook, signedHeaders } from './support/webhooks.js';
import { cleanUp } from './trunk/harness.js';

afterEach(cleanUp);

const AHEAD_SECONDS = 600;

describe('an exit event dated ten minutes ahead', () => {
  it('counts no second exit when it comes after the poll counted the merge', async () => {
    const fake = await fakeQueue();
    fake.world.items = [queueItem(6, 'testing', now() - 600)];
    const exporter = await webhookExporter(fake.server.apiUrl);
    await afterPolls(fake.polls, 2);

    // #6 merges; the polls see it gone and, its event not coming within two intervals, count it.
    const mergedAt = now();
    fake.world.lookups.set(6, submitted(6, 'merged', mergedAt));
    fake.world.items = [];
    await afterPolls(fake.polls, 6);
    // Then its event comes, its timestamp from a clock ten minutes ahead.
    const body = mergedEventBody(6, mergedAt + AHEAD_SECONDS);
    const url = `${exporter.exporter.url}/webhooks/trunk`;
    expect((await postWebhook(url, body, signedHeaders(body))).status).toBe(204);
    await afterPolls(fake.polls, 2);

    const samples = await exporter.samples();
    expect(exited(samples)).toEqual({ merged: 1, failed: 0, cancelled: 0, unknown: 0 });
    expect(bySource(samples)).toEqual({ event: 0, poll: 1 });
  });

  it('measures the time in queue to when the event came, not to its timestamp', async () => {
    const fake = await fakeQueue();
    const enteredTesting = now() - 600;
    fake.world.items = [queueItem(7, 'testing', enteredTesting)];
    const exporter = await webhookExporter(fake.server.apiUrl);
    await afterPolls(fake.polls, 2);

    const sentAt = now();
    fake.world.lookups.set(7, submitted(7, 'merged', sentAt));
    fake.world.items = [];
    const body = mergedEventBody(7, sentAt + AHEAD_SECONDS);
    const url = `${exporter.exporter.url}/webhooks/trunk`;
    expect((await postWebhook(url, body, signedHeaders(body))).status).toBe(204);
    await afterPolls(fake.polls, 2);

    const samples = await exporter.samples();
    const merged = { ...QUEUE, outcome: 'merged' };
    expect(sum(samples, 'trunk_merge_queue_time_in_queue_seconds_count', merged)).toBe(1);
    // In the queue from its testing (600 s before the event) to the event: about 600 s, not 1200.
    const seconds = sum(samples, 'trunk_merge_queue_time_in_queue_seconds_sum', merged);
    expect(seconds).toBeGreaterThanOrEqual(600);
    expect(seconds).toBeLessThan(600 + 30);
  });
});
