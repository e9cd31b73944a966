// A pull_request.failed event dated by a Trunk clock a few seconds ahead of the exporter's, through
// a real exporter with webhooks on polling a fake Trunk v1 every half second. Trunk's clock may run
// ahead of the exporter's: docs/metrics.md takes an exit event's timestamp "over 60 s after" its
// receipt for "Trunk's clock ahead", so anything less is a time it can have. One failure is one
// exit: "A poll that sees a PR gone holds the exit for 2 × `mergeQueueIntervalSeconds`; the PR's
// event within that time counts it (and the poll does not) ... An event arriving after that is not
// counted again." Nothing brings the PR back (no submitted or queued event, no poll lists it).
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

/** How far Trunk's clock runs ahead of the exporter's here: well within the minute allowed. */
const AHEAD_SECONDS = 5;

/** Trunk's pull_request.failed event of PR `prNumber`, failed at `at`. */
function failedEventBody(prNumber: number, at: number): string {
  return JSON.stringify({
    ...(JSON.parse(mergedEventBody(prNumber, at)) as object),
    action: 'failed',
    status: 'failed',
    failure_reason: 'TEST_RUN_TIMEOUT',
    type: 'pull_request.failed',
  });
}

describe("an exit event dated by Trunk's clock a few seconds ahead", () => {
  it.each([
    ['within the hold (one poll after it was seen gone)', 1],
    ['after the hold (six polls after, the poll counted it)', 6],
  ])('counts the failure once when it comes %s', async (_when, pollsBefore) => {
    const trunkNow = () => now() + AHEAD_SECONDS;
    const fake = await fakeQueue();
    fake.world.items = [queueItem(1, 'testing', trunkNow() - 600)];
    const exporter = await webhookExporter(fake.server.apiUrl);
    await afterPolls(fake.polls, 2);

    // #1 fails: the polls see it gone (its lookup dated by Trunk's clock); its event comes later.
    const failedAt = trunkNow();
    fake.world.lookups.set(1, submitted(1, 'failed', failedAt));
    fake.world.items = [];
    await afterPolls(fake.polls, pollsBefore);
    const body = failedEventBody(1, failedAt);
    const url = `${exporter.exporter.url}/webhooks/trunk`;
    expect((await postWebhook(url, body, signedHeaders(body))).status).toBe(204);
    await afterPolls(fake.polls, 6);

    // One failure: one exit, by whichever witness counted it first.
    const samples = await exporter.samples();
    expect(exited(samples)).toEqual({ merged: 0, failed: 1, cancelled: 0, unknown: 0 });
    const sources = bySource(samples);
    expect((sources.event ?? 0) + (sources.poll ?? 0)).toBe(1);
  });
});
