// The metrics table of docs/metrics.md is checked against the definitions: every family the engine renders
// has its row, with its labels in order and in page order, and every other `trunk_` row is a metric
// the exporter registers on its prom-client registry, which is documented in turn.
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
import { pageSection } from './pages.js';

interface Row {
  readonly name: string;
  readonly labels: string;
}

/** The rows of the table under `## Families` whose metric is one name (not `process_*`). */
function documentedRows(): Row[] {
  const section = pageSection('docs/metrics.md', '## Families');
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
  const { metricChanges } = registerExporterMetrics({
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
  registerReloadMetrics(registry, metricChanges);
  registerPollOverrunMetrics(registry, metricChanges);
  registerWebhookRequestMetrics(registry, metricChanges);
  return registry.getMetricsAsArray().map(({ name }) => name);
}

describe('the metrics table of docs/metrics.md', () => {
  it('lists every family the engine renders, with its labels, in page order', () => {
    const rows = documentedRows();
    const documented = new Map(rows.map((row) => [row.name, row.labels]));
    for (const { name, labelNames } of SNAPSHOT_FAMILIES) {
      expect(documented.get(name), name).toBe(labelNames.join(', '));
    }
    const engineNames = new Set(SNAPSHOT_FAMILIES.map(({ name }) => name));
    // Flow counters are documented after the quarantine rows, as a group; the rest keep page order.
    const inDocumentedOrder = rows.map(({ name }) => name).filter((name) => engineNames.has(name));
    const byGroup = (names: readonly string[]) =>
      [...names].sort((a, b) => group(a) - group(b) || names.indexOf(a) - names.indexOf(b));
    expect(byGroup(inDocumentedOrder)).toEqual(byGroup(SNAPSHOT_FAMILIES.map(({ name }) => name)));
  });

  it("documents every metric of the exporter's registry, and nothing that does not exist", () => {
    const rows = documentedRows().map(({ name }) => name);
    const registered = registeredNames().filter((name) => name.startsWith('trunk_'));
    for (const name of registered) expect(rows, name).toContain(name);
    const known = new Set([...registered, ...SNAPSHOT_FAMILIES.map(({ name }) => name)]);
    expect(rows.filter((name) => !known.has(name))).toEqual([]);
    expect(new Set(rows).size).toBe(rows.length);
  });
});

/** Orders the table's groups: merge queue, quarantine, flow, exporter. */
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
