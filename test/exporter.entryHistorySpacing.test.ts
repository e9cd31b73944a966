// The spacing of the queue-entry history calls, through a real exporter holding an API key.
// trunk-api-v2.md: "`GET /v2/pull-requests…` (single-PR reads, history, estimate): 5 per second per
// key, separately", and `GET /v2/queue-entry-history` is one of the single-PR reads. Every shard of a
// deployment sends the same key, so the shards together must stay under 5 a second; a reload makes
// no new key budget, so the calls after it keep their spacing from the calls before.
import { afterEach, describe, expect, it } from 'vitest';
import { shardOf } from '../src/sharding/shardAssignment.js';
import { live, record, recordTesting, webExporter } from './support/entryHistoryExporter.js';
import { configYaml, startTestExporter } from './support/exporterHarness.js';
import { sum } from './support/exposition.js';
import type { EntryRow, FakeV2 } from './support/fakeTrunkV2.js';
import { entryRow, moveEntry, startFakeWebQueue } from './support/queueEntryRows.js';
import { pollsFromNow } from './support/webQueueSamples.js';
import { cleanUp } from './trunk/harness.js';

afterEach(cleanUp);

const QUEUE = { repo: 'github.com/acme/web', branch: 'main' };
const TOTAL_SHARDS = 2;
/** 60 pull requests: two calls of at most 50 ids. */
const NUMBERS = Array.from({ length: 60 }, (_, index) => 100 + index);
const HISTORY = /^\/v2\/queue-entry-history$/;

/** Every entry of `rows` fails its tests at `at`: 60 timelines to read, two calls. */
/** A queue whose PRs (NUMBERS) have tested since ten minutes ago, each with its history so far. */
async function testingQueue() {
  const start = Date.now() / 1000 - 600;
  const rows: EntryRow[] = NUMBERS.map((number) => entryRow(number, 'testing', start));
  const fake = await startFakeWebQueue(rows);
  for (const number of NUMBERS) recordTesting(fake, number, start);
  return { rows, fake };
}

function failAll(fake: FakeV2, rows: readonly EntryRow[], at: number): void {
  for (const [index, row] of rows.entries()) {
    record(fake, NUMBERS[index] ?? 0, 'failed', at - 2, 'TEST_RUN_TIMEOUT');
    moveEntry(row, 'failed', at - 2);
  }
}

describe('queue-entry histories of one shard of two', () => {
  it('are read at most 2.5 calls a second, half the key’s 5, each call 400 ms after the one before was answered', async () => {
    const { rows, fake } = await testingQueue();
    const shard = shardOf({ kind: 'merge_queue', ...QUEUE }, TOTAL_SHARDS);
    const exporter = await startTestExporter(
      [
        configYaml({
          apiUrl: fake.origin,
          token: null,
          apiKey: 'trunk_v2_sharded-history-key',
          targets: '  - repo: github.com/acme/web\n    branches: [main]',
          polling: [
            '  mergeQueueIntervalSeconds: 0.2',
            '  flakyTestsIntervalSeconds: 600',
            '  staleAfterSeconds: 600',
          ].join('\n'),
        }),
        'sharding:',
        `  shard: ${String(shard)}`,
        `  totalShards: ${String(TOTAL_SHARDS)}`,
      ].join('\n'),
    );
    await exporter.waitFor((samples) => live(samples) === NUMBERS.length, 'the entries polled');
    await pollsFromNow(exporter, 1);
    const historyCallsBefore = fake.requestsTo(HISTORY).length;
    failAll(fake, rows, Date.now() / 1000);
    await exporter.waitFor(
      (samples) =>
        sum(samples, 'trunk_merge_queue_pull_requests_failed_total', QUEUE) === NUMBERS.length,
      'the histories read',
    );
    const calls = fake.requestsTo(HISTORY).slice(historyCallsBefore);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    const starts = calls.map((call) => call.receivedAt);
    const gaps = starts.slice(1).map((received, index) => received - (starts[index] ?? 0));
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(400);
  });
});

describe('queue-entry history calls across a reload', () => {
  it('keep 200 ms from the answer before the reload to the call after it', async () => {
    const { rows, fake } = await testingQueue();
    const { exporter, reload } = await webExporter(fake, false);
    await exporter.waitFor((samples) => live(samples) === NUMBERS.length, 'the entries polled');
    await pollsFromNow(exporter, 1);
    const before = fake.requestsTo(HISTORY).length;
    // The read's first call waits while the configuration is reloaded; its second comes after.
    fake.hold(HISTORY);
    failAll(fake, rows, Date.now() / 1000);
    while (fake.held() === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await reload(false);
    fake.hold(undefined);
    const answeredAt = Date.now();
    fake.release();
    await exporter.waitFor(
      (samples) =>
        sum(samples, 'trunk_merge_queue_pull_requests_failed_total', QUEUE) === NUMBERS.length,
      'the histories read',
    );
    const [, second] = fake.requestsTo(HISTORY).slice(before);
    expect(second).toBeDefined();
    expect((second?.receivedAt ?? 0) - answeredAt).toBeGreaterThanOrEqual(200);
  });
});
