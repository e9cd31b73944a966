// An exit its pull_request.merged event counted, while API v1's getQueue goes on listing the PR for
// a few polls: a real exporter with webhooks on polls a fake Trunk v1 on loopback whose queue the
// test moves by hand. Trunk's words: the final states "merged, failed, cancelled (the PR leaves the
// queue)", and v1's queue may still list a PR that left (trunk-api-notes.md; docs/metrics.md,
// `trunk_merge_queue_pull_requests`). A listing of the stay the event ended is not the PR coming
// back: that stay left once, so it counts once.
import { afterEach, describe, expect, it } from 'vitest';
import {
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

  it('still counts a quick resubmission after an exit whose event has no timestamp', async () => {
    const fake = await fakeQueue();
    fake.world.items = [queueItem(3, 'testing', now() - 600)];
    const exporter = await webhookExporter(fake.server.apiUrl);
    await afterPolls(fake.polls, 2);

    // #3 fails and is submitted again a second later; its event, without a timestamp (null: an
    // absent field), comes seconds after both, so its exit is placed at its arrival.
    const resubmittedAt = now() - 4;
    fake.world.items = [queueItem(3, 'pending', resubmittedAt)];
    const body = JSON.stringify({
      ...(JSON.parse(mergedEventBody(3, resubmittedAt)) as object),
      action: 'failed',
      status: 'failed',
      type: 'pull_request.failed',
      timestamp: null,
    });
    const url = `${exporter.exporter.url}/webhooks/trunk`;
    expect((await postWebhook(url, body, signedHeaders(body))).status).toBe(204);
    await afterPolls(fake.polls, 4);
    fake.world.lookups.set(3, submitted(3, 'merged', now()));
    fake.world.items = [];
    await afterPolls(fake.polls, 4);

    const samples = await exporter.samples();
    expect(exited(samples)).toEqual({ merged: 1, failed: 1, cancelled: 0, unknown: 0 });
    expect(bySource(samples)).toEqual({ event: 1, poll: 1 });
  });
});
