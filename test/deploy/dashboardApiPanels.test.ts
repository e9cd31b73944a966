// The dashboard's Trunk API panels as Prometheus computes them: promtool evaluates each panel's own
// query (its variables filled in as Grafana fills them) over series written by hand. Two shards
// whose medians differ must give the median of all their requests (21 per 30 s: 20 in
// 0.05-0.1 s, 1 in 2.5-5 s, so rank 10.5 of 21 lies in the first bucket: about 0.076 s, where the
// slowest shard's median is 3.75 s), and an endpoint read every 300 s must never read 0 requests
// a second between its reads.
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
import { ROOT } from './ruleFiles.js';

const promtool = findSystemBinary('promtool');
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
    `evaluation_interval: 10s\ntests:\n  - interval: 30s\n    input_series:\n${series}    promql_expr_test:\n${tests}`,
  );
  const result = spawnSync(promtool ?? 'promtool', ['test', 'rules', file], { encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('the Trunk API panels of the dashboard', () => {
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
});
