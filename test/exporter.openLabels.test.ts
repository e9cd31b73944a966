// Pull request states and priority names through API v2: "an open set" Trunk may add to, and
// `priorityName` a name its users give. Each is its own label value, but one queue's poll keeps at
// most 20 beyond the documented ones (`urgent`, `high`, `medium`, `low`; the queue-entry states),
// the rest `other`: an answer of thousands of distinct values must not make thousands of series.
import { afterEach, describe, expect, it } from 'vitest';
import { select } from './support/exposition.js';
import { configYaml, startTestExporter } from './support/exporterHarness.js';
import type { FakeV2 } from './support/fakeTrunkV2.js';
import { entryRow, startFakeWebQueue } from './support/queueEntryRows.js';
import { cleanUp } from './trunk/harness.js';

afterEach(cleanUp);

const QUEUE = { repo: 'github.com/acme/web', branch: 'main' };

function webExporter(fake: FakeV2) {
  return startTestExporter(
    configYaml({
      apiUrl: fake.origin,
      token: null,
      apiKey: 'trunk_v2_open-labels-key',
      targets: '  - repo: github.com/acme/web\n    branches: [main]',
      polling: '  mergeQueueIntervalSeconds: 0.2\n  flakyTestsIntervalSeconds: 600',
    }),
  );
}

describe('open label values through a real exporter', () => {
  it('keeps 20 priority names beyond the documented ones as labels and counts the rest as other', async () => {
    // 50 pending PRs, each with its own priority name: team-0 … team-49, in that order.
    const now = Date.now() / 1000;
    const rows = Array.from({ length: 50 }, (_, index) => {
      const row = entryRow(index + 1, 'pending', now - 60);
      (row.queueEntry as Record<string, unknown>).priorityName = `team-${String(index)}`;
      return row;
    });
    const fake = await startFakeWebQueue(rows);
    const exporter = await webExporter(fake);
    const samples = await exporter.waitFor(
      (page) => select(page, 'trunk_merge_queue_pull_requests', QUEUE).length > 0,
      'the queue polled',
    );
    const pending = Object.fromEntries(
      select(samples, 'trunk_merge_queue_pull_requests', { ...QUEUE, state: 'pending' }).map(
        (sample): [string, number] => [sample.labels.priority ?? '', sample.value],
      ),
    );
    const named = Array.from({ length: 20 }, (_, index) => `team-${String(index)}`);
    expect(pending).toEqual({
      medium: 0,
      ...Object.fromEntries(named.map((name) => [name, 1])),
      other: 30,
    });
  });
});
