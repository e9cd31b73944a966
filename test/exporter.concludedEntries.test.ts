// What a read of a queue's concluded entries (API v2) tells, through a real exporter holding an API
// key and polling a fake organization whose entries the test moves by hand. From Trunk's
// definition of `GET /v2/merge-queues/{id}/pull-requests`: `concludedAfter` keeps "pull requests
// that reached `merged`, `failed` or `cancelled` inside that window, both bounds inclusive. That is
// a fact about the entry's history, not its current state: an entry that failed in the window and
// was later resubmitted still matches". And of a testing result's `entryConclusion`: "How the queue
// entry this testing belonged to ended. A pull request that fails and is resubmitted has a new
// entry"; the queue entry's `createdAt` says "a cancelled or failed pull request submitted again
// keeps it": either way, each conclusion is an exit.
import { afterEach, describe, expect, it } from 'vitest';
import { select, type Sample } from './support/exposition.js';
import { configYaml, startTestExporter } from './support/exporterHarness.js';
import type { FakeV2 } from './support/fakeTrunkV2.js';
import {
  WEB_QUEUE,
  entryRow,
  moveEntry,
  resubmitEntry,
  startFakeWebQueue,
  testingResult,
} from './support/queueEntryRows.js';
import { pollsFromNow, transitionsOf } from './support/webQueueSamples.js';
import { cleanUp } from './trunk/harness.js';

afterEach(cleanUp);

const QUEUE = { repo: 'github.com/acme/web', branch: 'main' };
const PULL_REQUESTS = 'v2/merge-queues/{id}/pull-requests';
const now = () => Date.now() / 1000;

function webExporter(fake: FakeV2) {
  return startTestExporter(
    configYaml({
      apiUrl: fake.origin,
      token: null,
      apiKey: 'trunk_v2_concluded-entries-key',
      targets: '  - repo: github.com/acme/web\n    branches: [main]',
      polling: '  mergeQueueIntervalSeconds: 0.1\n  flakyTestsIntervalSeconds: 600',
    }),
  );
}

const value = (samples: readonly Sample[], name: string, labels: Record<string, string>) =>
  select(samples, name, labels)[0]?.value;
const exited = (samples: readonly Sample[]): Record<string, number> =>
  Object.fromEntries(
    select(samples, 'trunk_merge_queue_pull_requests_exited_total', QUEUE).map(
      (sample): [string, number] => [sample.labels.outcome ?? '', sample.value],
    ),
  );
const futureRows = (samples: readonly Sample[]) =>
  value(samples, 'trunk_exporter_api_anomalies_total', {
    endpoint: PULL_REQUESTS,
    kind: 'future_timestamp',
  });

const inState = (samples: readonly Sample[], state: string) =>
  select(samples, 'trunk_merge_queue_pull_requests', { ...QUEUE, state }).reduce(
    (total, sample) => total + sample.value,
    0,
  );

/** `concludedAfter` of each exit read the fake saw (the reads of the last merge at start aside). */
function exitReadsFrom(fake: FakeV2): number[] {
  return fake
    .requestsTo(/^\/v2\/merge-queues\/[^/]+\/pull-requests$/)
    .map((request) => new URL(request.url, 'http://fake').searchParams)
    .filter((query) => query.has('concludedAfter') && query.get('state') !== 'merged')
    .map((query) => Date.parse(query.get('concludedAfter') ?? '') / 1000);
}

/** PRs #7 and #8 in `testing` for ten minutes, and an exporter that has polled them once. */
async function twoInTestingPolled() {
  const pr7 = entryRow(7, 'testing', now() - 600);
  const pr8 = entryRow(8, 'testing', now() - 600);
  const fake = await startFakeWebQueue([pr7, pr8]);
  const exporter = await webExporter(fake);
  await exporter.waitFor(
    (samples) =>
      value(samples, 'trunk_exporter_target_up', { ...QUEUE, kind: 'merge_queue' }) === 1,
    'the first poll',
  );
  return { pr7, pr8, fake, exporter };
}

describe('reads of concluded entries through a real exporter', () => {
  it('counts an entry concluded a day ahead of the clock once, as an anomaly, and still counts the exits after it', async () => {
    const { pr7, pr8, fake, exporter } = await twoInTestingPolled();
    // #7 leaves, its conclusion dated a day ahead (Trunk's clock, or a bad row).
    moveEntry(pr7, 'merged', now() + 86_400);
    await exporter.waitFor((samples) => exited(samples).merged === 1, '#7 counted');
    // #9 comes and goes between two polls, then #8 leaves: the read for #8 lists all three.
    fake.entries(WEB_QUEUE).push(entryRow(9, 'failed', now()));
    moveEntry(pr8, 'cancelled', now());
    const after = await exporter.waitFor(
      (samples) => exited(samples).cancelled === 1,
      '#8 counted',
    );
    expect(exited(after)).toEqual({ merged: 1, failed: 1, cancelled: 1, unknown: 0 });
    // Listed by both reads, counted once; no read asked from the future.
    expect(futureRows(after)).toBe(1);
    const reads = exitReadsFrom(fake);
    expect(reads).toHaveLength(2);
    for (const concludedAfter of reads) expect(concludedAfter).toBeLessThanOrEqual(now() + 60);
  });

  it('counts a PR the concluded entries list twice, with two endings, by the later one, whatever their order', async () => {
    // The read lists #7's entry as failed 30 s ago, then as merged 5 s ago: the later is how it
    // left ("`stateChangedAt`: when the entry entered its current state").
    const pr7 = entryRow(7, 'testing', now() - 600);
    const fake = await startFakeWebQueue([pr7]);
    const exporter = await webExporter(fake);
    await exporter.waitFor(
      (samples) =>
        value(samples, 'trunk_exporter_target_up', { ...QUEUE, kind: 'merge_queue' }) === 1,
      'the first poll',
    );
    const earlier = structuredClone(pr7);
    moveEntry(earlier, 'failed', now() - 30);
    moveEntry(pr7, 'merged', now() - 5);
    fake.entries(WEB_QUEUE).unshift(earlier);
    const after = await exporter.waitFor(
      (samples) => (exited(samples).merged ?? 0) + (exited(samples).failed ?? 0) > 0,
      '#7 counted',
    );
    expect(exited(after)).toEqual({ merged: 1, failed: 0, cancelled: 0, unknown: 0 });
  });

  it('counts a PR that fails and is resubmitted between two polls as a failed exit with its transition, each time, whether Trunk reuses its entry or not', async () => {
    const pr20 = entryRow(20, 'testing', now() - 600);
    const fake = await startFakeWebQueue([pr20]);
    const exporter = await webExporter(fake);
    await exporter.waitFor((samples) => inState(samples, 'testing') === 1, '#20 testing');
    // Between two polls its testing fails, its entry fails and its author submits it again.
    const failedAt = now();
    fake.testingResults(WEB_QUEUE).push(testingResult(20, failedAt, 'failed', 'failed'));
    resubmitEntry(pr20, failedAt, failedAt + 0.5);
    // Its transition waits for its queue-entry history (none written here: an empty answer), then
    // counts as the polls saw it.
    const once = await exporter.waitFor(
      (samples) => exited(samples).failed === 1 && transitionsOf(samples)['testing->failed'] === 1,
      '#20 counted failed',
    );
    expect(exited(once)).toEqual({ merged: 0, failed: 1, cancelled: 0, unknown: 0 });
    expect(transitionsOf(once)).toEqual({ 'testing->failed': 1 });
    expect(inState(once, 'not_ready')).toBe(1);
    // Tested again (for two polls), it fails again and is submitted again, as a new entry now.
    moveEntry(pr20, 'testing', now());
    await pollsFromNow(exporter, 2);
    const failedAgainAt = now();
    fake.testingResults(WEB_QUEUE).push(testingResult(20, failedAgainAt, 'failed', 'failed'));
    resubmitEntry(pr20, failedAgainAt, failedAgainAt + 0.5, 'entry-20-resubmitted');
    const twice = await exporter.waitFor(
      (samples) => exited(samples).failed === 2 && transitionsOf(samples)['testing->failed'] === 2,
      '#20 counted failed again',
    );
    expect(exited(twice)).toEqual({ merged: 0, failed: 2, cancelled: 0, unknown: 0 });
    expect(transitionsOf(twice)).toEqual({ 'testing->failed': 2, 'not_ready->testing': 1 });
    expect(value(twice, 'trunk_merge_queue_repeated_failures_total', QUEUE)).toBe(1);
  });

  it("counts a failed exit once when Trunk's clock runs ahead of the exporter's and its entry is resubmitted, and its next failure as a loop", async () => {
    // Trunk dates everything half a minute after the exporter's clock (within the minute the
    // reads allow), over three hundred poll intervals.
    const trunkNow = () => now() + 30;
    const pr30 = entryRow(30, 'testing', trunkNow() - 600);
    const pr31 = entryRow(31, 'testing', trunkNow() - 600);
    const fake = await startFakeWebQueue([pr30, pr31]);
    const exporter = await webExporter(fake);
    await exporter.waitFor((samples) => inState(samples, 'testing') === 2, 'both testing');
    // #30's testing fails and its entry fails: a poll sees it gone, the read says `failed`.
    const failedAt = trunkNow();
    fake.testingResults(WEB_QUEUE).push(testingResult(30, failedAt - 1, 'failed', 'failed'));
    moveEntry(pr30, 'failed', failedAt);
    await exporter.waitFor((samples) => exited(samples).failed === 1, '#30 counted failed');
    // Submitted again, its entry reused: the next read (for #31, merged) lists it in `notReady`,
    // as it "failed in the window and was later resubmitted". That is the failure counted above.
    resubmitEntry(pr30, failedAt, trunkNow());
    await exporter.waitFor((samples) => inState(samples, 'not_ready') === 1, '#30 back');
    moveEntry(pr31, 'merged', trunkNow());
    const once = await exporter.waitFor((samples) => exited(samples).merged === 1, '#31 counted');
    expect(exited(once)).toEqual({ merged: 1, failed: 1, cancelled: 0, unknown: 0 });
    expect(value(once, 'trunk_merge_queue_repeated_failures_total', QUEUE)).toBe(0);
    // Tested again, it fails again and is submitted again between two polls: a second exit, a loop.
    moveEntry(pr30, 'testing', trunkNow());
    await pollsFromNow(exporter, 2);
    const failedAgainAt = trunkNow();
    fake.testingResults(WEB_QUEUE).push(testingResult(30, failedAgainAt, 'failed', 'failed'));
    resubmitEntry(pr30, failedAgainAt, failedAgainAt + 0.5);
    const twice = await exporter.waitFor(
      (samples) => exited(samples).failed === 2,
      '#30 counted failed again',
    );
    await pollsFromNow(exporter, 2);
    const later = await exporter.samples();
    expect(exited(later)).toEqual({ merged: 1, failed: 2, cancelled: 0, unknown: 0 });
    expect(value(twice, 'trunk_merge_queue_repeated_failures_total', QUEUE)).toBe(1);
  });

  it("counts a failed exit when Trunk's clock runs behind the exporter's and the entry is resubmitted just after the first poll", async () => {
    // Trunk dates everything half a minute before the exporter's clock (within the minute the
    // reads allow). The first poll lists #40 testing; Trunk then says its entry failed and was
    // submitted again: dated before that poll on the exporter's clock, after it on Trunk's.
    const trunkNow = () => now() - 30;
    const pr40 = entryRow(40, 'testing', trunkNow() - 600);
    const fake = await startFakeWebQueue([pr40]);
    const exporter = await webExporter(fake);
    await exporter.waitFor((samples) => inState(samples, 'testing') === 1, '#40 testing');
    const failedAt = trunkNow();
    fake.testingResults(WEB_QUEUE).push(testingResult(40, failedAt, 'failed', 'failed'));
    resubmitEntry(pr40, failedAt, failedAt + 0.5);
    const after = await exporter.waitFor(
      (samples) => exited(samples).failed === 1,
      '#40 counted failed',
    );
    expect(exited(after)).toEqual({ merged: 0, failed: 1, cancelled: 0, unknown: 0 });
    expect(inState(after, 'not_ready')).toBe(1);
  });

  it("counts a failed exit when Trunk's clock runs behind the exporter's and the entry, resubmitted just after the first poll, is past notReady at the next", async () => {
    // As above, but the entry is placed `pending` again before the next poll: no poll sees it
    // back in `not_ready`, so the periodic read (every 30 polls) is the one to list it.
    const trunkNow = () => now() - 30;
    const pr41 = entryRow(41, 'testing', trunkNow() - 600);
    const fake = await startFakeWebQueue([pr41]);
    const exporter = await webExporter(fake);
    await exporter.waitFor((samples) => inState(samples, 'testing') === 1, '#41 testing');
    const failedAt = trunkNow();
    fake.testingResults(WEB_QUEUE).push(testingResult(41, failedAt, 'failed', 'failed'));
    resubmitEntry(pr41, failedAt, failedAt + 0.2);
    moveEntry(pr41, 'pending', failedAt + 0.4);
    const after = await exporter.waitFor(
      (samples) => exited(samples).failed === 1,
      '#41 counted failed',
    );
    expect(exited(after)).toEqual({ merged: 0, failed: 1, cancelled: 0, unknown: 0 });
    expect(inState(after, 'pending')).toBe(1);
  });

  it('counts a failed-and-resubmitted exit by its testing result when a PR that waited 60 days in notReady leaves beside it', async () => {
    // `notReadyTimeoutMinutes`: "0 means no timeout", so #40 may have waited in `notReady` for 60
    // days; its departure widens the read of concluded entries to then. The testing results of
    // the same poll may still reach back at most 45 days (`since`: "At most 45 days before
    // `until`"), which the fake refuses past with a 400.
    const pr40 = entryRow(40, 'notReady', now() - 60 * 86_400);
    const pr41 = entryRow(41, 'testing', now() - 600);
    const fake = await startFakeWebQueue([pr40, pr41]);
    const exporter = await webExporter(fake);
    await exporter.waitFor((samples) => inState(samples, 'testing') === 1, '#41 testing');
    // Between two polls #40 is cancelled, and #41's testing fails, its entry fails and it is
    // submitted again.
    const failedAt = now();
    fake.testingResults(WEB_QUEUE).push(testingResult(41, failedAt, 'failed', 'failed'));
    resubmitEntry(pr41, failedAt, failedAt + 0.5);
    moveEntry(pr40, 'cancelled', failedAt);
    const after = await exporter.waitFor(
      (samples) => exited(samples).cancelled === 1 && inState(samples, 'not_ready') === 1,
      '#40 counted and #41 back',
    );
    await pollsFromNow(exporter, 2);
    expect(exited(await exporter.samples())).toEqual({
      merged: 0,
      failed: 1,
      cancelled: 1,
      unknown: 0,
    });
    expect(exited(after).unknown).toBe(0);
  });

  it('counts none of the entries that concluded and were resubmitted before the exporter started, when a read for a departure reaches back past its start', async () => {
    // Before the start: #2 failed 8 min ago and #3 was cancelled 5 min ago, each submitted again
    // (waiting in `notReady` since); #1 has been pending for 10 min. The read for #1's departure
    // reaches back to before its state began, where #2 and #3 "still match".
    // #4 was cancelled 10 s before the start, within the clocks' slack, and waits as the first
    // poll saw it: its stay began before that poll, and its conclusion before the stay.
    // #5 failed its testing 7 min before the start and was submitted again; after the start it
    // moves on to testing, so neither its state nor its time is the first poll's any more: its
    // testing result still dates the conclusion before the start.
    const pr1 = entryRow(1, 'pending', now() - 600);
    const pr5 = entryRow(5, 'pending', now() - 900);
    resubmitEntry(pr5, now() - 420, now() - 410);
    const pr2 = entryRow(2, 'testing', now() - 900);
    const pr3 = entryRow(3, 'pending', now() - 900);
    const pr4 = entryRow(4, 'pending', now() - 900);
    resubmitEntry(pr2, now() - 480, now() - 470);
    resubmitEntry(pr3, now() - 300, now() - 290);
    resubmitEntry(pr4, now() - 10, now() - 9);
    const fake = await startFakeWebQueue([pr1, pr2, pr3, pr4, pr5]);
    fake.testingResults(WEB_QUEUE).push(testingResult(2, now() - 480, 'failed', 'failed'));
    fake.testingResults(WEB_QUEUE).push(testingResult(5, now() - 420, 'failed', 'failed'));
    const exporter = await webExporter(fake);
    await exporter.waitFor((samples) => inState(samples, 'pending') === 1, 'the first poll');
    await pollsFromNow(exporter, 3);
    moveEntry(pr5, 'testing', now());
    await pollsFromNow(exporter, 2);
    moveEntry(pr1, 'cancelled', now());
    // The transitions wait for their queue-entry histories (none written here: empty answers).
    const after = await exporter.waitFor(
      (samples) =>
        exited(samples).cancelled === 1 &&
        transitionsOf(samples)['pending->cancelled'] === 1 &&
        transitionsOf(samples)['not_ready->testing'] === 1,
      '#1 counted',
    );
    await pollsFromNow(exporter, 3);
    expect(exited(await exporter.samples())).toEqual({
      merged: 0,
      failed: 0,
      cancelled: 1,
      unknown: 0,
    });
    // #5's move after the start is a transition the polls saw, and the only other one.
    expect(transitionsOf(after)).toEqual({ 'pending->cancelled': 1, 'not_ready->testing': 1 });
    // The read did reach back past the start.
    expect(Math.min(...exitReadsFrom(fake))).toBeLessThan(now() - 600);
  });

  it('counts an entry resubmitted between two polls whose ending Trunk does not tell as an unknown exit', async () => {
    const pr21 = entryRow(21, 'pending', now() - 600);
    const fake = await startFakeWebQueue([pr21]);
    const exporter = await webExporter(fake);
    await exporter.waitFor((samples) => inState(samples, 'pending') === 1, '#21 pending');
    // Cancelled while pending (never tested: no testing result) and submitted again.
    resubmitEntry(pr21, now(), now() + 0.5);
    const after = await exporter.waitFor((samples) => exited(samples).unknown === 1, '#21 counted');
    expect(exited(after)).toEqual({ merged: 0, failed: 0, cancelled: 0, unknown: 1 });
    expect(transitionsOf(after)).toEqual({});
  });
  it('counts an entry once when two reads write its conclusion time with and without milliseconds', async () => {
    // `stateChangedAt` is a `date-time` (RFC 3339): `…:02Z` and `…:02.000Z` are one instant.
    const { pr7, pr8, fake, exporter } = await twoInTestingPolled();
    // #9 comes and goes between two polls, concluded on a whole second since the exporter
    // started; then #7 leaves.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const pr9 = entryRow(9, 'failed', Math.floor(now()));
    fake.entries(WEB_QUEUE).push(pr9);
    moveEntry(pr7, 'merged', now());
    await exporter.waitFor((samples) => exited(samples).merged === 1, '#7 counted');
    // The next read for #8 lists #9 again, its time written without milliseconds.
    pr9.queueEntry.stateChangedAt = pr9.queueEntry.stateChangedAt.replace('.000Z', 'Z');
    moveEntry(pr8, 'cancelled', now());
    const after = await exporter.waitFor(
      (samples) => exited(samples).cancelled === 1,
      '#8 counted',
    );
    expect(exitReadsFrom(fake)).toHaveLength(2);
    expect(exited(after)).toEqual({ merged: 1, failed: 1, cancelled: 1, unknown: 0 });
  });
});
