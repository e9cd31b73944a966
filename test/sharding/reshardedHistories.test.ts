// docs/deployment.md, "Sharding": "Changing M moves targets between shards", and sharding.* is
// reloaded (docs/operations.md). A queue whose pull request's history read is in flight when a
// reload moves it off this instance, and back within polling.staleAfterSeconds, takes back its
// counters (docs/operations.md, reload) and counts the failure that history tells once.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { record, recordTesting } from '../support/entryHistoryExporter.js';
import { select, sum, type Sample } from '../support/exposition.js';
import { configYaml, startTestExporter } from '../support/exporterHarness.js';
import { pageAt, startFakeV2, type EntryRow } from '../support/fakeTrunkV2.js';
import { entryRow, moveEntry } from '../support/queueEntryRows.js';
import { cleanUp } from '../trunk/harness.js';

afterEach(cleanUp);

const now = () => Date.now() / 1000;
const API_MAIN = { repo: 'github.com/acme/api', branch: 'main' };
const HISTORY = /^\/v2\/queue-entry-history$/;

const of = (samples: readonly Sample[], name: string, labels: Record<string, string>) =>
  select(samples, name, { ...API_MAIN, ...labels })[0]?.value;

describe('a reload that moves a queue to another shard and back', () => {
  it('counts the failure its history read in flight tells once', async () => {
    const start = now() - 600;
    const apiMain: EntryRow[] = [11, 12].map((n) => entryRow(n, 'testing', start));
    const fake = await startFakeV2({
      queues: pageAt('merge-queues-of-an-organization.json'),
      entries: { aB3xY9kQ: apiMain },
    });
    for (const number of [11, 12]) recordTesting(fake, number, start);
    const file = join(await mkdtemp(join(tmpdir(), 'trunk-exporter-reshard-')), 'config.yaml');
    // With 3 shards, api main is shard 1's, web main shard 2's (test/sharding/shardedHistories).
    const yaml = (totalShards: number) =>
      [
        configYaml({
          apiUrl: fake.origin,
          token: null,
          apiKey: 'trunk_v2_reshard-key',
          targets:
            '  - repo: github.com/acme/web\n    branches: [main]\n  - repo: github.com/acme/api\n    branches: [main]',
          polling:
            '  mergeQueueIntervalSeconds: 0.1\n  flakyTestsIntervalSeconds: 600\n  staleAfterSeconds: 600',
        }),
        `sharding:\n  shard: ${String(totalShards - 1)}\n  totalShards: ${String(totalShards)}`,
      ].join('\n');
    await writeFile(file, yaml(1));
    const exporter = await startTestExporter(yaml(1), 'info', file);
    const reload = async (totalShards: number) => {
      await writeFile(file, yaml(totalShards));
      expect((await exporter.exporter.reload('SIGHUP')).applied).toBe(true);
    };
    await exporter.waitFor(
      (samples) => sum(samples, 'trunk_merge_queue_pull_requests', API_MAIN) === 2,
      'two entries polled',
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    fake.hold(HISTORY);
    const at = now();
    record(fake, 11, 'failed', at, 'TEST_RUN_TIMEOUT');
    moveEntry(apiMain[0] as EntryRow, 'failed', at);
    while (fake.held() === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await reload(3);
    await exporter.waitFor(
      (samples) => select(samples, 'trunk_merge_queue_pull_requests', API_MAIN).length === 0,
      'api main gone from the page',
    );
    fake.hold(undefined);
    fake.release();
    await new Promise((resolve) => setTimeout(resolve, 300));
    await reload(1);
    await exporter.waitFor(
      (samples) =>
        of(samples, 'trunk_merge_queue_pull_requests_failed_total', {
          reason: 'TEST_RUN_TIMEOUT',
        }) === 1,
      'the failure counted',
    );
    await new Promise((resolve) => setTimeout(resolve, 800));
    const samples = await exporter.samples();
    expect(select(samples, 'trunk_merge_queue_pull_requests_failed_total', API_MAIN)).toHaveLength(
      1,
    );
    expect(
      of(samples, 'trunk_merge_queue_pull_requests_failed_total', { reason: 'TEST_RUN_TIMEOUT' }),
    ).toBe(1);
    expect(
      of(samples, 'trunk_merge_queue_state_transitions_total', { from: 'testing', to: 'failed' }),
    ).toBe(1);
    expect(of(samples, 'trunk_merge_queue_pull_requests_exited_total', { outcome: 'failed' })).toBe(
      1,
    );
  });
});
