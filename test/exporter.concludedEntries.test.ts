// What a read of a queue's concluded entries (API v2) tells, through a real exporter holding an API
// key and polling a fake organization whose entries the test moves by hand. From Trunk's
// definition of `GET /v2/merge-queues/{id}/pull-requests`: `concludedAfter` keeps "pull requests
// that reached `merged`, `failed` or `cancelled` inside that window, both bounds inclusive".
import { afterEach, describe, expect, it } from 'vitest';
import { select, type Sample } from './support/exposition.js';
import { configYaml, startTestExporter } from './support/exporterHarness.js';
import type { FakeV2 } from './support/fakeTrunkV2.js';
import { WEB_QUEUE, entryRow, moveEntry, startFakeWebQueue } from './support/queueEntryRows.js';
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
      polling: '  mergeQueueIntervalSeconds: 0.2\n  flakyTestsIntervalSeconds: 600',
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

/** `concludedAfter` of each exit read the fake saw (the reads of the last merge at start aside). */
function exitReadsFrom(fake: FakeV2): number[] {
  return fake
    .requestsTo(/^\/v2\/merge-queues\/[^/]+\/pull-requests$/)
    .map((request) => new URL(request.url, 'http://fake').searchParams)
    .filter((query) => query.has('concludedAfter') && query.get('state') !== 'merged')
    .map((query) => Date.parse(query.get('concludedAfter') ?? '') / 1000);
}

describe('reads of concluded entries through a real exporter', () => {
  it('counts an entry concluded a day ahead of the clock once, as an anomaly, and still counts the exits after it', async () => {
    const pr7 = entryRow(7, 'testing', now() - 600);
    const pr8 = entryRow(8, 'testing', now() - 600);
    const fake = await startFakeWebQueue([pr7, pr8]);
    const exporter = await webExporter(fake);
    await exporter.waitFor(
      (samples) =>
        value(samples, 'trunk_exporter_target_up', { ...QUEUE, kind: 'merge_queue' }) === 1,
      'the first poll',
    );
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
});
