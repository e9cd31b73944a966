// The queue-entry history read of a sharded deployment, through a real exporter holding an API key.
// trunk-api-v2.md: "`GET /v2/pull-requests…` (single-PR reads, history, estimate): 5 per second per
// key, separately", and `GET /v2/queue-entry-history` is one of the single-PR reads; every shard of a
// deployment sends the same key, so the shards together must stay under 5 a second.
import { afterEach, describe, expect, it } from 'vitest';
import { shardOf } from '../src/sharding/shardAssignment.js';
import { live, record, recordTesting } from './support/entryHistoryExporter.js';
import { configYaml, startTestExporter } from './support/exporterHarness.js';
import { sum } from './support/exposition.js';
import type { EntryRow } from './support/fakeTrunkV2.js';
import { entryRow, moveEntry, startFakeWebQueue } from './support/queueEntryRows.js';
import { pollsFromNow } from './support/webQueueSamples.js';
import { cleanUp } from './trunk/harness.js';

afterEach(cleanUp);

const QUEUE = { repo: 'github.com/acme/web', branch: 'main' };
const TOTAL_SHARDS = 2;
/** 60 pull requests: two calls of at most 50 ids. */
const NUMBERS = Array.from({ length: 60 }, (_, index) => 100 + index);

describe('queue-entry histories of one shard of two', () => {
  it('are read at most 2.5 calls a second, half the key’s 5, each call 400 ms after the one before was answered', async () => {
    const start = Date.now() / 1000 - 600;
    const rows: EntryRow[] = NUMBERS.map((number) => entryRow(number, 'testing', start));
    const fake = await startFakeWebQueue(rows);
    for (const number of NUMBERS) recordTesting(fake, number, start);
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
    const historyCallsBefore = fake.requestsTo(/^\/v2\/queue-entry-history$/).length;
    // Between two polls every entry fails its tests: 60 timelines to read, two calls.
    const at = Date.now() / 1000;
    for (const [index, row] of rows.entries()) {
      record(fake, NUMBERS[index] ?? 0, 'failed', at - 2, 'TEST_RUN_TIMEOUT');
      moveEntry(row, 'failed', at - 2);
    }
    await exporter.waitFor(
      (samples) =>
        sum(samples, 'trunk_merge_queue_pull_requests_failed_total', QUEUE) === NUMBERS.length,
      'the histories read',
    );
    const calls = fake.requestsTo(/^\/v2\/queue-entry-history$/).slice(historyCallsBefore);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    const starts = calls.map((call) => call.receivedAt);
    const gaps = starts.slice(1).map((received, index) => received - (starts[index] ?? 0));
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(400);
  });
});
