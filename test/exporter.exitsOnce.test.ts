// Each exit counted once through a real exporter holding an API key, polling a fake organization
// whose queue the test moves by hand, whatever the configuration does meanwhile (issues 37 item 5,
// 40 items 1 and 2): exit reads that fail for a while, reloads that turn webhooks off or on, and a
// read of concluded entries that comes hours after an event counted the exit. Trunk's definition
// says of `concludedAfter` that it keeps "pull requests that reached `merged`, `failed` or
// `cancelled` inside that window": a read lists every exit in its window, those an event or an
// earlier read counted too, and must count only the others.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { webExporter } from './support/entryHistoryExporter.js';
import { select, sum, type Sample } from './support/exposition.js';
import type { ExporterUnderTest } from './support/exporterHarness.js';
import type { FakeV2 } from './support/fakeTrunkV2.js';
import { entryRow, moveEntry, startFakeWebQueue } from './support/queueEntryRows.js';
import { mergedEventBody, postWebhook, signedHeaders } from './support/webhooks.js';
import { cleanUp } from './trunk/harness.js';

afterEach(async () => {
  vi.useRealTimers();
  await cleanUp();
});

const QUEUE = { repo: 'github.com/acme/web', branch: 'main' };
const now = () => Date.now() / 1000;

/** Sends the exporter Trunk's pull_request.merged event of PR `number`, merged at `at`. */
async function mergedEvent(exporter: ExporterUnderTest, number: number, at: number) {
  const body = mergedEventBody(number, at);
  const url = `${exporter.exporter.url}/webhooks/trunk`;
  expect((await postWebhook(url, body, signedHeaders(body))).status).toBe(204);
}

const exited = (samples: readonly Sample[]): Record<string, number> =>
  Object.fromEntries(
    select(samples, 'trunk_merge_queue_pull_requests_exited_total', QUEUE).map(
      (sample): [string, number] => [sample.labels.outcome ?? '', sample.value],
    ),
  );
const bySource = (samples: readonly Sample[]): Record<string, number> =>
  Object.fromEntries(
    select(samples, 'trunk_merge_queue_pull_request_exits_by_source_total', QUEUE).map(
      (sample): [string, number] => [sample.labels.source ?? '', sample.value],
    ),
  );
const testing = (samples: readonly Sample[]) =>
  sum(samples, 'trunk_merge_queue_pull_requests', { ...QUEUE, state: 'testing' });

/**
 * Requests of the queue's live entries (one per poll) and its exit reads, not counting the reads
 * of its last merge at start (`state=merged` alone).
 */
function reads(fake: FakeV2) {
  const all = fake
    .requestsTo(/^\/v2\/merge-queues\/[^/]+\/pull-requests$/)
    .map((request) => new URL(request.url, 'http://fake').searchParams);
  return {
    live: all.filter((query) => !query.has('concludedAfter')).length,
    concluded: all.filter((query) => query.has('concludedAfter') && query.get('state') !== 'merged')
      .length,
  };
}

describe('each exit once through a real exporter', () => {
  it('counts no exit an event counted again when a reload turns webhooks off', async () => {
    const pr1 = entryRow(1, 'testing', now() - 600);
    const pr2 = entryRow(2, 'testing', now() - 600);
    const fake = await startFakeWebQueue([pr1, pr2]);
    const { exporter, reload } = await webExporter(fake, true, {
      polling: '  mergeQueueIntervalSeconds: 0.5\n  flakyTestsIntervalSeconds: 600',
    });
    await exporter.waitFor((samples) => testing(samples) === 2, '#1 and #2 testing');
    // #1 merges; its event counts it, the next poll sees it gone (and reads nothing: the event said).
    const mergedAt = now();
    moveEntry(pr1, 'merged', mergedAt);
    await mergedEvent(exporter, 1, mergedAt);
    await exporter.waitFor(
      (samples) => testing(samples) === 1 && exited(samples).merged === 1,
      '#1 counted by its event and seen gone',
    );
    await reload(false);
    // #2 merges: the read for it lists #1's concluded entry too.
    moveEntry(pr2, 'merged', now());
    const after = await exporter.waitFor((samples) => testing(samples) === 0, '#2 seen gone');
    expect(exited(after)).toEqual({ merged: 2, failed: 0, cancelled: 0, unknown: 0 });
  });

  it('counts no exit a poll counted again when a reload turns webhooks on and its event comes', async () => {
    const pr1 = entryRow(1, 'testing', now() - 600);
    const fake = await startFakeWebQueue([pr1]);
    const { exporter, reload } = await webExporter(fake, false, {
      polling: '  mergeQueueIntervalSeconds: 0.5\n  flakyTestsIntervalSeconds: 600',
    });
    await exporter.waitFor((samples) => testing(samples) === 1, '#1 testing');
    const mergedAt = now();
    moveEntry(pr1, 'merged', mergedAt);
    await exporter.waitFor((samples) => exited(samples).merged === 1, '#1 counted by the poll');
    await reload(true);
    // Svix retries the delivery the exporter refused while webhooks were off.
    await mergedEvent(exporter, 1, mergedAt);
    const after = await exporter.samples();
    expect(exited(after)).toEqual({ merged: 1, failed: 0, cancelled: 0, unknown: 0 });
    expect(bySource(after)).toEqual({ event: 0, poll: 1 });
  });

  it('counts no exit an event counted again when the periodic read comes seven hours later', async () => {
    // As thirty polls 900 s apart would: the exporter's clock (Date alone) jumps.
    vi.useFakeTimers({ toFake: ['Date'] });
    const pr1 = entryRow(1, 'testing', now() - 600);
    const pr2 = entryRow(2, 'testing', now() - 600);
    const fake = await startFakeWebQueue([pr1, pr2]);
    const { exporter } = await webExporter(fake, true, {
      polling: '  mergeQueueIntervalSeconds: 0.1\n  flakyTestsIntervalSeconds: 600',
    });
    await exporter.waitFor((samples) => testing(samples) === 2, '#1 and #2 testing');
    // The faked clock stands still but where the test moves it: #1 merges a second on.
    vi.setSystemTime(Date.now() + 1000);
    const mergedAt = now();
    moveEntry(pr1, 'merged', mergedAt);
    await mergedEvent(exporter, 1, mergedAt);
    await exporter.waitFor((samples) => exited(samples).merged === 1, '#1 counted by its event');
    // No read of concluded entries yet (the first is due 30 polls after the first): none saw #1.
    expect(reads(fake).concluded).toBe(0);
    vi.setSystemTime(Date.now() + 7 * 3600 * 1000);
    await exporter.waitFor((samples) => testing(samples) === 1, '#1 seen gone');
    // The periodic read, then a poll that began once the read's poll was recorded.
    await exporter.waitFor(() => reads(fake).concluded > 0, 'the periodic read');
    const livePolls = reads(fake).live;
    const after = await exporter.waitFor(() => reads(fake).live > livePolls + 1, 'a poll after');
    expect(exited(after)).toEqual({ merged: 1, failed: 0, cancelled: 0, unknown: 0 });
    expect(bySource(after)).toEqual({ event: 1, poll: 0 });
  });

  it('retries an exit whose reads fail until the target would be stale, then counts it unknown, once', async () => {
    // The exporter's clock (Date alone) stands still but where the test moves it: staleness comes
    // when the test says, not after seconds of real polls.
    vi.useFakeTimers({ toFake: ['Date'] });
    const pr5 = entryRow(5, 'testing', now() - 600);
    const pr6 = entryRow(6, 'pending', now() - 600);
    const fake = await startFakeWebQueue([pr5, pr6]);
    const { exporter } = await webExporter(fake, false, {
      polling:
        '  mergeQueueIntervalSeconds: 0.2\n  flakyTestsIntervalSeconds: 600\n  staleAfterSeconds: 8',
    });
    await exporter.waitFor((samples) => testing(samples) === 1, '#5 testing');
    // Every read of concluded entries answers 429 from now on; #5 merges and leaves.
    fake.fail(/^\/v2\/merge-queues\/[^/]+\/pull-requests$/, 429, 'concludedAfter=');
    moveEntry(pr5, 'merged', now());
    const goneFrom = reads(fake).live;
    // Five polls on, four of them with a failed read: still not counted, still asked for.
    const retried = await exporter.waitFor(() => reads(fake).live > goneFrom + 5, 'five polls');
    expect(exited(retried)).toEqual({ merged: 0, failed: 0, cancelled: 0, unknown: 0 });
    // Gone eight seconds (staleAfterSeconds): unknown.
    vi.setSystemTime(Date.now() + 8000);
    await exporter.waitFor((samples) => exited(samples).unknown === 1, '#5 counted unknown');
    // The reads answer again; #6 is cancelled, and the read for it lists #5's concluded entry too.
    fake.recover();
    moveEntry(pr6, 'cancelled', now());
    const after = await exporter.waitFor(
      (samples) => exited(samples).cancelled === 1,
      '#6 counted',
    );
    expect(exited(after)).toEqual({ merged: 0, failed: 0, cancelled: 1, unknown: 1 });
  });
});
