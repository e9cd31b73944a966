// The dashboard's `repo` and `branch` variables, read without Prometheus: every series a panel
// selects is filtered by them where it carries those labels, an exporter-wide series (neither
// label) is joined on the exporters that poll a selected target, docs/alerts-and-dashboard.md names
// the panels that follow `repo` only and the exporter-wide ones, and a panel named for states
// selects those states. dashboard.test.ts runs the same queries on a real Prometheus.
import { describe, expect, it } from 'vitest';
import { SNAPSHOT_FAMILIES } from '../../src/metrics/families.js';
import { pageSection } from '../docs/pages.js';
import { registeredMetrics } from '../support/registeredMetrics.js';
import { panelQueries, readDashboard } from './dashboardQueries.js';
import { RULE_FILES, readYamlFile, type RuleFile } from './ruleFiles.js';

const queries = panelQueries(readDashboard());

/** How an exporter-wide panel keeps to the exporters polling a selected target. */
const EXPORTERS_OF_SELECTED_TARGETS =
  'and on (job, instance) group by (job, instance) (trunk_exporter_target_up{repo=~"$repo", branch=~"$branch|"})';

/**
 * The labels of every series a panel may select: the families the engine renders, the metrics on
 * the exporter's registry, and the recording rules, whose level (`repo_branch_state:`) names the
 * labels they keep.
 */
function seriesLabels(): Map<string, readonly string[]> {
  const labels = new Map<string, readonly string[]>();
  for (const family of SNAPSHOT_FAMILIES) labels.set(family.name, family.labelNames);
  for (const metric of registeredMetrics()) labels.set(metric.name, metric.labelNames);
  for (const file of RULE_FILES) {
    for (const rule of (readYamlFile(file) as RuleFile).groups.flatMap((group) => group.rules)) {
      if (rule.record !== undefined)
        labels.set(rule.record, rule.record.split(':')[0]?.split('_') ?? []);
    }
  }
  return labels;
}

/** Each series selector of a PromQL expression: the series' name and its `{...}` matchers. */
function selectors(
  expr: string,
  known: ReadonlyMap<string, unknown>,
): { name: string; matchers: string }[] {
  // A histogram's series are its family's name and _count, _sum or _bucket.
  const family = (name: string) =>
    known.has(name) ? name : name.replace(/_(count|sum|bucket)$/, '');
  return [...expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?/g)]
    .filter((match) => known.has(family(match[1] ?? '')))
    .map((match) => ({ name: family(match[1] ?? ''), matchers: match[2] ?? '' }));
}

/** The panel titles a sentence of the dashboard docs lists after `lead`, up to its full stop. */
function listedPanels(lead: string): string[] {
  const prose = pageSection('docs/alerts-and-dashboard.md', '## Grafana dashboard').replace(
    /\s+/g,
    ' ',
  );
  const start = prose.indexOf(lead);
  if (start === -1) throw new Error(`docs/alerts-and-dashboard.md: no "${lead}"`);
  const list = prose.slice(start + lead.length);
  return list.slice(0, list.indexOf('.')).split('; ');
}

describe("Grafana dashboard's repo and branch variables", () => {
  const labels = seriesLabels();

  it('filter every series that has those labels; exporter-wide ones keep to the exporters of the selection', () => {
    const unfiltered: string[] = [];
    for (const query of queries) {
      const where = `panel "${query.panel}" query ${query.refId}`;
      const found = selectors(query.expr, labels);
      expect(found.length, where).toBeGreaterThan(0);
      for (const { name, matchers } of found) {
        const has = labels.get(name) ?? [];
        if (has.includes('repo') && !matchers.includes('repo=~"$repo"'))
          unfiltered.push(`${where}: ${name} without repo=~"$repo"`);
        if (has.includes('branch') && !/branch=~"\$branch\|?"/.test(matchers))
          unfiltered.push(`${where}: ${name} without branch=~"$branch"`);
        if (!has.includes('repo') && !query.expr.includes(EXPORTERS_OF_SELECTED_TARGETS))
          unfiltered.push(`${where}: ${name} has no repo label and is not joined on the exporters`);
      }
    }
    expect(unfiltered).toEqual([]);
  });

  it('are described in docs/alerts-and-dashboard.md panel by panel where they do not filter both labels', () => {
    const panelLabels = new Map<string, Set<string>>();
    for (const query of queries) {
      const shown = panelLabels.get(query.panel) ?? new Set<string>();
      // The join's own selector is not what the panel shows.
      const expr = query.expr.replace(EXPORTERS_OF_SELECTED_TARGETS, '');
      for (const { name } of selectors(expr, labels))
        for (const label of labels.get(name) ?? []) shown.add(label);
      panelLabels.set(query.panel, shown);
    }
    const titles = (test: (shown: Set<string>) => boolean) =>
      [...panelLabels]
        .filter(([, shown]) => test(shown))
        .map(([title]) => title)
        .sort();
    expect(
      listedPanels('follow `repo` only (quarantine lists and tests are per repository): ').sort(),
    ).toEqual(titles((shown) => shown.has('repo') && !shown.has('branch')));
    expect(
      listedPanels(
        'that poll a selected target, so with a single exporter they do not change: ',
      ).sort(),
    ).toEqual(titles((shown) => !shown.has('repo')));
  });
});

describe('Grafana dashboard panels named for states', () => {
  it('count only the paused and draining states in "Hours paused or draining"', () => {
    const [query, ...others] = queries.filter((candidate) =>
      candidate.panel.startsWith('Hours paused or draining'),
    );
    expect(others).toEqual([]);
    expect(query?.expr).toContain('state=~"paused|draining"');
  });
});
