// A real exporter of github.com/acme/web main (queueEntryRows.ts) holding an API key, for the tests
// of queue-entry histories: the timelines they write, the webhook events they send, what they read.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { select, sum, type Sample } from './exposition.js';
import { configYaml, startTestExporter, type ExporterUnderTest } from './exporterHarness.js';
import type { EntryRow, FakeV2, HistoryRow } from './fakeTrunkV2.js';
import { entryRow, pullRequestIdOf, startFakeWebQueue } from './queueEntryRows.js';
import { WEB_MAIN } from './webQueueSamples.js';
import { WEBHOOK_SECRET, postWebhook, signedHeaders } from './webhooks.js';

const iso = (at: number) => new Date(at * 1000).toISOString();

/**
 * An exporter of github.com/acme/web main with an API key alone, reloadable from its file; polled
 * every `intervalSeconds` (0.1 s: the tests wait for polls in real time) unless `polling` says
 * otherwise.
 */
export async function webExporter(
  fake: FakeV2,
  webhooks: boolean,
  {
    staleAfterSeconds = 600,
    intervalSeconds = 0.1,
    polling,
  }: { staleAfterSeconds?: number; intervalSeconds?: number; polling?: string } = {},
): Promise<{
  exporter: ExporterUnderTest;
  reload: (webhooks: boolean, readHistories?: boolean) => Promise<void>;
}> {
  const file = join(await mkdtemp(join(tmpdir(), 'trunk-exporter-history-')), 'config.yaml');
  const yaml = (on: boolean, readHistories = true) =>
    [
      configYaml({
        apiUrl: fake.origin,
        token: null,
        apiKey: 'trunk_v2_entry-history-key',
        targets: '  - repo: github.com/acme/web\n    branches: [main]',
        polling:
          polling ??
          [
            `  mergeQueueIntervalSeconds: ${String(intervalSeconds)}`,
            '  flakyTestsIntervalSeconds: 600',
            `  staleAfterSeconds: ${String(staleAfterSeconds)}`,
          ].join('\n'),
        server: '  enableReload: true',
      }),
      'webhooks:',
      `  enabled: ${String(on)}`,
      `  signingSecret: ${WEBHOOK_SECRET}`,
      ...(readHistories ? [] : ['reads:', '  queueEntryHistory: false']),
    ].join('\n');
  await writeFile(file, yaml(webhooks));
  const exporter = await startTestExporter(yaml(webhooks), 'info', file);
  const reload = async (on: boolean, readHistories = true) => {
    await writeFile(file, yaml(on, readHistories));
    const response = await fetch(`${exporter.exporter.url}/-/reload`, { method: 'POST' });
    expect(response.status).toBe(200);
  };
  return { exporter, reload };
}

/** Appends to PR `number`'s timeline its entry entering `state` at `at` for `reason`. */
export function record(
  fake: FakeV2,
  number: number,
  state: string,
  at: number,
  reason: string | null,
) {
  const row: HistoryRow = { state, changedAt: iso(at), reason };
  fake.history(pullRequestIdOf(number)).push(row);
}

/** A timeline that reached `testing` at `testingAt`: submitted, ready, tested. */
export function recordTesting(fake: FakeV2, number: number, testingAt: number) {
  record(fake, number, 'notReady', testingAt - 60, 'USER_REQUESTED');
  record(fake, number, 'pending', testingAt - 30, 'MERGE_ITEM_NOW_READY');
  record(fake, number, 'testing', testingAt, null);
}

/** A fake organization whose web queue has tested PRs `numbers` since `start`, each with its timeline. */
export async function testingWebQueue(
  numbers: readonly number[],
  start: number,
): Promise<{ fake: FakeV2; rows: EntryRow[] }> {
  const rows = numbers.map((number) => entryRow(number, 'testing', start));
  const fake = await startFakeWebQueue(rows);
  for (const number of numbers) recordTesting(fake, number, start);
  return { fake, rows };
}

/** A family's values by its one label beyond repo and branch. */
export function byLabel(
  samples: readonly Sample[],
  name: string,
  label: string,
): Record<string, number> {
  return Object.fromEntries(
    select(samples, name, WEB_MAIN).map((sample): [string, number] => [
      sample.labels[label] ?? '',
      sample.value,
    ]),
  );
}
/** trunk_merge_queue_pull_requests_failed_total of the queue by reason. */
export const failed = (samples: readonly Sample[]) =>
  byLabel(samples, 'trunk_merge_queue_pull_requests_failed_total', 'reason');
/** The queue's live pull requests. */
export const live = (samples: readonly Sample[]) =>
  sum(samples, 'trunk_merge_queue_pull_requests', WEB_MAIN);

/** Sends the exporter Trunk's pull_request.failed event of PR `number`, failed at `at`. */
export async function failedEvent(
  exporter: ExporterUnderTest,
  number: number,
  at: number,
  reason: string,
) {
  const body = JSON.stringify({
    action: 'failed',
    pr_number: number,
    repository: { host: 'github.com', owner: 'acme', name: 'web' },
    target_branch: 'main',
    status: 'failed',
    failure_reason: reason,
    timestamp: iso(at),
    type: 'pull_request.failed',
  });
  const url = `${exporter.exporter.url}/webhooks/trunk`;
  expect((await postWebhook(url, body, signedHeaders(body))).status).toBe(204);
}
