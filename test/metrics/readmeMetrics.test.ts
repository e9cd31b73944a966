// The README's metrics table is checked against the definitions: every family the engine renders
// has its row, with its labels in order and in page order, and every other `trunk_` row is a metric
// the exporter registers on its prom-client registry, which is documented in turn.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SNAPSHOT_FAMILIES } from '../../src/metrics/families.js';
import {
  createRegistry,
  registerCapacityMetrics,
  registerExporterMetrics,
  registerReloadMetrics,
} from '../../src/metrics/index.js';
import { registerPollOverrunMetrics } from '../../src/metrics/pollOverrunMetrics.js';
import { registerWebhookRequestMetrics } from '../../src/metrics/webhookRequestMetrics.js';
import { SnapshotStore } from '../../src/snapshot/store.js';

interface Row {
  readonly name: string;
  readonly labels: string;
}

/** The rows of the table under `## Metrics` whose metric is one name (not `process_*`). */
function readmeRows(): Row[] {
  const readme = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');
  const section = readme.slice(
    readme.indexOf('\n## Metrics\n'),
    readme.indexOf('\n### Stale data'),
  );
  const rows: Row[] = [];
  for (const line of section.split('\n')) {
    const match = /^\| `(trunk_[a-z_]+)` \| ?(?:`([^`]*)`)? ?\|/.exec(line);
    if (match) rows.push({ name: match[1] ?? '', labels: match[2] ?? '' });
  }
  return rows;
}

/** The names of the prom-client metrics the exporter registers, as startExporter wires them. */
function registeredNames(): string[] {
  const registry = createRegistry({ defaultMetrics: false });
  registerExporterMetrics({
    registry,
    store: new SnapshotStore(600),
    version: 'test',
    mergeQueueIntervalSeconds: 30,
    flakyTestsIntervalSeconds: 300,
    topCodeowners: 20,
  });
  registerCapacityMetrics({
    registry,
    apiBudget: () => ({ requestsPerSecond: 0 }) as never,
    sharding: () => ({ shard: 0, totalShards: 1 }),
  });
  registerReloadMetrics(registry);
  registerPollOverrunMetrics(registry);
  registerWebhookRequestMetrics(registry);
  return registry.getMetricsAsArray().map(({ name }) => name);
}

describe('the README metrics table', () => {
  it('lists every family the engine renders, with its labels, in page order', () => {
    const rows = readmeRows();
    const documented = new Map(rows.map((row) => [row.name, row.labels]));
    for (const { name, labelNames } of SNAPSHOT_FAMILIES) {
      expect(documented.get(name), name).toBe(labelNames.join(', '));
    }
    const engineNames = new Set(SNAPSHOT_FAMILIES.map(({ name }) => name));
    // Flow counters are documented after the quarantine rows, as a group; the rest keep page order.
    const inReadmeOrder = rows.map(({ name }) => name).filter((name) => engineNames.has(name));
    const byGroup = (names: readonly string[]) =>
      [...names].sort((a, b) => group(a) - group(b) || names.indexOf(a) - names.indexOf(b));
    expect(byGroup(inReadmeOrder)).toEqual(byGroup(SNAPSHOT_FAMILIES.map(({ name }) => name)));
  });

  it("documents every metric of the exporter's registry, and nothing that does not exist", () => {
    const rows = readmeRows().map(({ name }) => name);
    const registered = registeredNames().filter((name) => name.startsWith('trunk_'));
    for (const name of registered) expect(rows, name).toContain(name);
    const known = new Set([...registered, ...SNAPSHOT_FAMILIES.map(({ name }) => name)]);
    expect(rows.filter((name) => !known.has(name))).toEqual([]);
    expect(new Set(rows).size).toBe(rows.length);
  });
});

/** Orders the README's groups: merge queue, quarantine, flow, exporter. */
function group(name: string): number {
  if (
    /_(exited|state_transitions|state_seconds|exits_by_source)_total$|_time_in_(queue|state)_seconds$/.test(
      name,
    )
  ) {
    return 2;
  }
  if (name.startsWith('trunk_merge_queue_')) return 0;
  if (name.startsWith('trunk_flaky_tests_')) return 1;
  return 3;
}
