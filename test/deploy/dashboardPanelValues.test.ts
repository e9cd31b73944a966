// The dashboard's panels as Prometheus computes them: promtool evaluates each panel's own
// query (its variables filled in as Grafana fills them) over series written by hand. Two shards
// whose medians differ must give the median of all their requests (21 per 30 s: 20 in
// 0.05-0.1 s, 1 in 2.5-5 s, so rank 10.5 of 21 lies in the first bucket: about 0.076 s, where the
// slowest shard's median is 3.75 s), an endpoint read every 300 s must never read 0 requests
// a second between its reads, and a queue two pods export counts once.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findSystemBinary } from '../support/systemBinary.js';
import {
  allValuesRegex,
  panelQueries,
  readDashboard,
  substituteVariables,
} from './dashboardQueries.js';
import { ROOT, RULE_FILES } from './ruleFiles.js';

const promtool = findSystemBinary('promtool', 'prometheus');
const VARIABLES = {
  repo: allValuesRegex(['github.com/acme/web', 'github.com/acme/api']),
  branch: allValuesRegex(['main']),
};

let directory: string | undefined;
afterEach(() => {
  if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  directory = undefined;
});

/** The panel's query `refId`, its variables filled in. */
function panelQuery(title: string, refId: string): string {
  const query = panelQueries(readDashboard()).find(
    (candidate) => candidate.panel === title && candidate.refId === refId,
  );
  if (query === undefined) throw new Error(`no query ${refId} in panel ${title}`);
  return substituteVariables(query.expr, VARIABLES);
}

/** Runs one promtool test of `checks` (a PromQL filter each, which must keep one sample). */
function promtoolTest(
  seriesFixture: string,
  checks: readonly { readonly expr: string; readonly at: string }[],
  ruleFiles: readonly string[] = [],
  interval = '30s',
): { status: number | null; output: string } {
  directory = mkdtempSync(join(tmpdir(), 'dashboard-api-panels-'));
  const series = readFileSync(join(ROOT, 'test', 'deploy', 'fixtures', seriesFixture), 'utf8');
  const tests = checks
    .map(
      ({ expr, at }) =>
        `      - expr: ${JSON.stringify(`count(${expr})`)}\n        eval_time: ${at}\n        exp_samples:\n          - labels: '{}'\n            value: 1\n`,
    )
    .join('');
  const file = join(directory, 'panels.yaml');
  writeFileSync(
    file,
    `rule_files: ${JSON.stringify(ruleFiles)}\nevaluation_interval: 10s\ntests:\n  - interval: ${interval}\n    input_series:\n${series}    promql_expr_test:\n${tests}`,
  );
  const result = spawnSync(promtool ?? 'promtool', ['test', 'rules', file], { encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('panels of the dashboard over series written by hand', () => {
  it.skipIf(promtool === undefined)(
    'give the median and 95th percentile of all shards’ requests, not the slowest shard’s',
    () => {
      const median = panelQuery('Trunk API request latency', 'A');
      const p95 = panelQuery('Trunk API request latency', 'B');
      const result = promtoolTest('api-latency-two-shards.series.yaml', [
        // 0.05 + 0.05 × 10.5 / 20 = 0.07625; 0.05 + 0.05 × 19.95 / 20 = 0.099875.
        { expr: `(${median}) > 0.0762 < 0.0763`, at: '15m' },
        { expr: `(${p95}) > 0.0998 < 0.0999`, at: '15m' },
      ]);
      expect(result.status, result.output).toBe(0);
    },
  );

  it.skipIf(promtool === undefined)(
    'never read 0 requests a second for an endpoint read every 300 s',
    () => {
      const requests = panelQuery('Trunk API requests by code', 'A');
      const result = promtoolTest('api-requests-every-300s.series.yaml', [
        { expr: `(${requests}) > 0.002`, at: '29m40s' },
        { expr: `(${requests}) > 0.002`, at: '30m10s' },
      ]);
      expect(result.status, result.output).toBe(0);
    },
  );

  it.skipIf(promtool === undefined)(
    'count a queue that two pods export once in the per-queue pull request panels',
    () => {
      // acme/web main: 2 blocked, 3 pending, 1 testing, once; acme/api main: 1 blocked, 4 pending.
      // Each filter keeps one sample only when the queue on two pods counts once (4, 10, 2, 12 else).
      const blocked = panelQuery('Pull requests blocked by readiness', 'A');
      const byState = panelQuery('Pull requests by state', 'A');
      const byPriority = panelQuery('Pull requests by priority', 'A');
      const result = promtoolTest(
        'queue-on-two-pods.series.yaml',
        [
          { expr: `(${blocked}) == 2`, at: '5m' },
          { expr: `(${byState}) == 7`, at: '5m' },
          { expr: `(${byState}) == 1`, at: '5m' },
          { expr: `(${byPriority}) == 8`, at: '5m' },
        ],
        RULE_FILES,
      );
      expect(result.status, result.output).toBe(0);
    },
  );

  it.skipIf(promtool === undefined)(
    'count a queue that two pods export once in the flow and testing panels',
    () => {
      // At 65m, the last hour: web 60 merges, 30 failed, 90 exits by poll, 60 testing attempts,
      // 6.5 CI hours and 65 bisections since 0 (a day's windows); api 120 merges and exits
      // by poll, no testing attempt. Each filter keeps one sample only when web counts once
      // (120 merges, 180 exits, 150 attempts and so on when both pods' count).
      const merges = panelQuery('Merges per hour', 'A');
      const exits = panelQuery('Exits per hour by outcome', 'A');
      const bySource = panelQuery('Exits per hour by source', 'A');
      const attempts = panelQuery('Testing attempts per hour by outcome', 'A');
      const ciHours = panelQuery('CI hours testing per day', 'A');
      const bisections = panelQuery('Bisections per day', 'A');
      const near = (query: string, value: number): string =>
        `(${query}) > ${value - 0.01} < ${value + 0.01}`;
      const result = promtoolTest(
        'queue-flow-on-two-pods.series.yaml',
        [
          { expr: near(merges, 60), at: '65m' },
          { expr: near(merges, 120), at: '65m' },
          { expr: near(exits, 180), at: '65m' },
          { expr: near(exits, 30), at: '65m' },
          { expr: near(bySource, 210), at: '65m' },
          { expr: near(attempts, 60), at: '65m' },
          { expr: near(ciHours, 6.5), at: '65m' },
          { expr: near(bisections, 65), at: '65m' },
        ],
        RULE_FILES,
        '1m',
      );
      expect(result.status, result.output).toBe(0);
    },
  );

  it.skipIf(promtool === undefined)(
    'show no testing duration for a queue without an attempt in the hour',
    () => {
      // web: every attempt within the 600 s bucket, so its 90th percentile is 540 s; api: none in
      // the hour, so nothing (not NaN) for it: one series in all.
      const duration = panelQuery('Testing duration, p90 (last hour)', 'A');
      const result = promtoolTest(
        'queue-flow-on-two-pods.series.yaml',
        [
          { expr: duration, at: '65m' },
          { expr: `(${duration}) == 540`, at: '65m' },
        ],
        [],
        '1m',
      );
      expect(result.status, result.output).toBe(0);
    },
  );

  // At 2h30m the last hour held 12 MANUAL_PUSH_TO_TARGET_BRANCH restarts (increase() alone sees
  // the 2 after the first sample) and 60 SKIP_THE_LINE_INTERRUPTED. With two failed scrapes (2h5m,
  // 2h20m: staleness markers on every series) the hour's minute steps are 61 under Prometheus 2
  // (1h30m..2h30m) and 60 under 3, two of them stale in both: the exporter was still scraped
  // throughout the hour, so the 12 count (a gate needing 60 steps gives 2 under both).
  it.skipIf(promtool === undefined).each([
    ['as the restart-storm alert does', 'restart-cause-appears-as-a-burst.series.yaml'],
    ['across two failed scrapes', 'restart-cause-burst-two-failed-scrapes.series.yaml'],
  ])("count the restarts that create a cause's series, %s", (_, fixture) => {
    const causes = panelQuery('Restart causes per hour', 'A');
    const result = promtoolTest(
      fixture,
      [
        { expr: `(${causes}) == 12`, at: '150m' },
        { expr: `(${causes}) == 60`, at: '150m' },
      ],
      [],
      '1m',
    );
    expect(result.status, result.output).toBe(0);
  });
});
