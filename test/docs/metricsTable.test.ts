// The metrics tables of docs/metrics.md are checked against the code: the "Families" table lists
// exactly the families the engine renders (those `metrics.include` / `metrics.exclude` select), with
// their labels in page order, and "The exporter's own metrics" exactly the `trunk_` metrics the
// exporter registers on its prom-client registry, which the selection does not touch. A family only
// webhooks move says so in its row, since it is absent with webhooks off. Every metric the README
// and the pages name in their prose is one the exporter has, or a recording rule the rule files
// record.
import { describe, expect, it } from 'vitest';
import {
  SNAPSHOT_FAMILIES,
  UNSELECTABLE_FAMILIES,
  WEBHOOK_ONLY_FAMILIES,
} from '../../src/metrics/families.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { registeredMetrics } from '../support/registeredMetrics.js';
import { pagePaths, pageSection, readPage, ROOT } from './pages.js';

interface Row {
  readonly name: string;
  readonly labels: string;
  readonly meaning?: string;
}

/** The rows of a table of docs/metrics.md whose metric is one name (not `process_*`). */
function documentedRows(heading: string): Row[] {
  const rows: Row[] = [];
  for (const line of pageSection('docs/metrics.md', heading).split('\n')) {
    const match = /^\| `(trunk_[a-z_]+)` \| ?(?:`([^`]*)`)? ?\|(.*)\|$/.exec(line);
    if (match) rows.push({ name: match[1] ?? '', labels: match[2] ?? '', meaning: match[3] ?? '' });
  }
  return rows;
}

/** The prom-client metrics the exporter registers, as rows. */
function registeredRows(): Row[] {
  return registeredMetrics().map(({ name, labelNames }) => ({
    name,
    labels: labelNames.join(', '),
  }));
}

describe('the metrics tables of docs/metrics.md', () => {
  it('list under "Families" exactly the families the engine renders, with their labels, in page order', () => {
    const rows = documentedRows('## Families');
    expect(new Map(rows.map(({ name, labels }) => [name, labels]))).toEqual(
      new Map(SNAPSHOT_FAMILIES.map(({ name, labelNames }) => [name, labelNames.join(', ')])),
    );
    expect(new Set(rows.map(({ name }) => name)).size).toBe(rows.length);
    // Flow counters are documented after the quarantine rows, as a group; the rest keep page order.
    const byGroup = (names: readonly string[]) =>
      [...names].sort((a, b) => group(a) - group(b) || names.indexOf(a) - names.indexOf(b));
    expect(byGroup(rows.map(({ name }) => name))).toEqual(
      byGroup(SNAPSHOT_FAMILIES.map(({ name }) => name)),
    );
  });

  it('name the families metrics.include and metrics.exclude never drop', () => {
    const intro = pageSection('docs/metrics.md', '## Families').split('\n| ')[0] ?? '';
    for (const name of UNSELECTABLE_FAMILIES) expect(intro, name).toContain(`\`${name}\``);
  });

  it('list under "The exporter\'s own metrics" exactly the registry\'s trunk_ metrics, with their labels', () => {
    const rows = documentedRows("## The exporter's own metrics");
    const registered = registeredRows().filter(({ name }) => name.startsWith('trunk_'));
    expect(new Map(rows.map(({ name, labels }) => [name, labels]))).toEqual(
      new Map(registered.map(({ name, labels }) => [name, labels])),
    );
    expect(new Set(rows.map(({ name }) => name)).size).toBe(rows.length);
  });

  it('name in their prose only metrics the exporter has, and recording rules that exist', () => {
    const names = new Set([
      ...SNAPSHOT_FAMILIES.map(({ name }) => name),
      ...registeredMetrics().map(({ name }) => name),
    ]);
    const rules = readFileSync(join(ROOT, 'prometheus/rules.yaml'), 'utf8');
    const records = new Set([...rules.matchAll(/record: (\S+)/g)].map((match) => match[1]));
    const known = (name: string) =>
      name.includes(':')
        ? records.has(name)
        : names.has(name) || names.has(name.replace(/_(bucket|sum|count)$/, ''));
    const unknown: string[] = [];
    for (const page of pagePaths()) {
      const text = readPage(page);
      // A name, or a recording rule's; not a glob (`trunk_merge_queue_*`), a cut name
      // (`trunk_…`) or an API key's prefix (`trunk_v2_`).
      const named = [...text.matchAll(/[\w:]*\btrunk_(?!v2_)[a-z0-9_:]*[a-z0-9](?![\w*…])/g)];
      // The README's table of families leaves out the `trunk_` prefix.
      const short =
        page === 'README.md'
          ? [
              ...text.matchAll(
                /`((?:merge_queue|flaky_tests|test_collection|exporter)_[a-z0-9_]+)[`{]/g,
              ),
            ]
          : [];
      for (const match of named) if (!known(match[0])) unknown.push(`${page}: ${match[0]}`);
      for (const match of short)
        if (!known(`trunk_${match[1] ?? ''}`)) unknown.push(`${page}: ${match[1] ?? ''}`);
    }
    expect(unknown).toEqual([]);
  });

  it('say "with webhooks on only" of every family only webhooks move', () => {
    const rows = [
      ...documentedRows('## Families'),
      ...documentedRows("## The exporter's own metrics"),
    ];
    const webhookOnly = [
      ...WEBHOOK_ONLY_FAMILIES,
      ...registeredMetrics()
        .map(({ name }) => name)
        .filter((name) => name.startsWith('trunk_exporter_webhook_')),
    ];
    expect(webhookOnly.length).toBeGreaterThan(WEBHOOK_ONLY_FAMILIES.length);
    for (const name of webhookOnly) {
      const row = rows.find((candidate) => candidate.name === name);
      expect(row?.meaning, name).toMatch(/with webhooks on only/);
    }
  });

  it('give, where a row names a field only API v1 has, what API v2 reads instead', () => {
    // v1's list-quarantined-tests answers `page.total_rows` and each test's `quarantined_at`;
    // v2's GET /v2/tests rows have neither (`quarantinedSince`, `statusSince`, and no total).
    const v1Fields = ['total_rows', 'quarantined_at'];
    for (const { name, meaning = '' } of documentedRows('## Families')) {
      if (!v1Fields.some((field) => meaning.includes(field))) continue;
      expect(meaning, name).toMatch(/API v1/);
      expect(meaning, name).toMatch(/API v2|API v1 only/);
    }
  });

  it('say where unknown_value counts, for each enum of Trunk the exporter keeps a closed set of', () => {
    // A testing result's `outcome` and an unhealthy test's `status` grow on Trunk's side ("new
    // members may be added within v2"); the exporter counts a new one as `other`.
    const row = documentedRows("## The exporter's own metrics").find(
      ({ name }) => name === 'trunk_exporter_api_anomalies_total',
    );
    const unknownValue =
      /`unknown_value` \(([^)]*(?:\([^)]*\)[^)]*)*)\)/.exec(row?.meaning ?? '')?.[1] ?? '';
    expect(unknownValue).toContain('outcome="other"');
    expect(unknownValue).toContain('status="other"');
  });
});

/** Orders the table's groups: merge queue, quarantine, flow, exporter. */
function group(name: string): number {
  if (
    /_(exited|repeated_failures|state_transitions|state_seconds|exits_by_source)_total$|_time_in_(queue|state)_seconds$/.test(
      name,
    )
  ) {
    return 2;
  }
  if (name.startsWith('trunk_merge_queue_')) return 0;
  if (name.startsWith('trunk_flaky_tests_')) return 1;
  return 3;
}
