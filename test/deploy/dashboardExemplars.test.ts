// From the outlier to the pull request: the latency histograms' exemplars on a real Prometheus with
// exemplar storage (Debian's prometheus, `--enable-feature=exemplar-storage`). It scrapes the real
// HTTP app over a store filled from test/metrics/fixtures/exemplars-on-latency-histograms.json (it
// asks for OpenMetrics first), returns every exemplar with its `pr` from /api/v1/query_exemplars,
// and the dashboard's exemplar queries, run as Grafana runs them, return those of their panel.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { loadScenario, replayScenario } from '../metrics/scenario.js';
import { createTestHttpApp } from '../support/httpApp.js';
import {
  startPrometheus,
  type ExemplarSeries,
  type RunningPrometheus,
} from '../support/prometheus.js';
import { findSystemBinary } from '../support/systemBinary.js';
import {
  allValuesRegex,
  panelQueries,
  readDashboard,
  substituteVariables,
} from './dashboardQueries.js';

const prometheusBinary = findSystemBinary('prometheus', 'prometheus');
const exemplarQueries = panelQueries(readDashboard()).filter((query) => query.exemplar);

/** What the dashboard's variables are with the scenario's one queue selected. */
const VARIABLES = {
  __interval: '1s',
  __rate_interval: '5s',
  __range: '60s',
  repo: allValuesRegex(['github.com/acme/widgets']),
  branch: allValuesRegex(['main']),
};

/** From before the scenario's first exemplar (2025-12-31T22:50:00Z) to well after now. */
const RANGE = `start=1767220000&end=${String(Math.ceil(Date.now() / 1000) + 3600)}`;

/** Each exemplar as `series le: pr value @timestamp`, sorted. */
async function exemplarsOf(prometheus: RunningPrometheus, query: string): Promise<string[]> {
  const series = (await prometheus.api(
    `/api/v1/query_exemplars?query=${encodeURIComponent(query)}&${RANGE}`,
  )) as ExemplarSeries[];
  return series
    .flatMap(({ seriesLabels: labels, exemplars }) =>
      exemplars.map(
        ({ labels: { pr }, value, timestamp }) =>
          `${labels.__name__ ?? ''}{${labels.outcome ?? ''}${labels.bisection === undefined ? '' : `,${labels.bisection}`}} le=${labels.le ?? ''}: pr=${pr ?? ''} ${value} @${String(timestamp)}`,
      ),
    )
    .sort();
}

const TIME_IN_QUEUE = 'trunk_merge_queue_time_in_queue_seconds_bucket';
const TESTING = 'trunk_merge_queue_testing_duration_seconds_bucket';

// Written from the fixture's `about`: each bucket's latest exit or attempt, its pull request, its
// value in seconds and the unix time it left or ended (2026-01-01T00:00:00Z is 1767225600).
const TIME_IN_QUEUE_EXEMPLARS = [
  `${TIME_IN_QUEUE}{failed} le=3600.0: pr=102 2150 @1767225650`,
  `${TIME_IN_QUEUE}{merged} le=1200.0: pr=101 754 @1767225610`,
  `${TIME_IN_QUEUE}{merged} le=300.0: pr=105 92 @1767225642`,
];
const TESTING_EXEMPLARS = [
  `${TESTING}{failed,false} le=1800.0: pr=102 1500 @1767225620`,
  `${TESTING}{interrupted,false} le=60.0: pr=106 40 @1767221400`,
  `${TESTING}{passed,false} le=600.0: pr=105 450 @1767225640`,
  `${TESTING}{passed,true} le=300.0: pr=103 200 @1767225645`,
];

describe('exemplars on the dashboard', () => {
  it('are asked for by the latency panels', () => {
    expect(exemplarQueries.map((query) => query.panel)).toEqual([
      'Time in queue, p90 of merged (last day)',
      'Testing duration, p90 (last hour)',
      'Run duration, p90 (last hour)',
    ]);
  });

  it.skipIf(prometheusBinary === undefined)(
    'a real Prometheus stores each with its pr, and the latency panels get theirs',
    async () => {
      const { store } = replayScenario(loadScenario('exemplars-on-latency-histograms'));
      const { app } = createTestHttpApp({ store });
      const server: Server = createServer(app);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      const prometheus = await startPrometheus({
        binary: prometheusBinary ?? 'prometheus',
        scrapeTarget: `127.0.0.1:${port}`,
        intervalSeconds: 0.2,
        features: ['exemplar-storage'],
      });
      try {
        const everyBucket = `{__name__=~"${TIME_IN_QUEUE}|${TESTING}"}`;
        const expected = [...TIME_IN_QUEUE_EXEMPLARS, ...TESTING_EXEMPLARS].sort();
        // Until Prometheus has scraped the page; an exemplar scraped again is stored once.
        const deadline = Date.now() + 20_000;
        let stored = await exemplarsOf(prometheus, everyBucket);
        while (stored.join('\n') !== expected.join('\n') && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 200));
          stored = await exemplarsOf(prometheus, everyBucket);
        }
        expect(stored, prometheus.log()).toEqual(expected);

        const byPanel = Object.fromEntries(
          await Promise.all(
            exemplarQueries.map(
              async (query) =>
                [
                  query.panel,
                  await exemplarsOf(prometheus, substituteVariables(query.expr, VARIABLES)),
                ] as const,
            ),
          ),
        );
        expect(byPanel).toEqual({
          // The panel shows merged pull requests only.
          'Time in queue, p90 of merged (last day)': TIME_IN_QUEUE_EXEMPLARS.filter((line) =>
            line.includes('{merged}'),
          ),
          'Testing duration, p90 (last hour)': TESTING_EXEMPLARS,
          // The scenario has no verification runs.
          'Run duration, p90 (last hour)': [],
        });
      } finally {
        await prometheus.stop();
        await new Promise((resolve) => server.close(resolve));
      }
    },
    40_000,
  );
});
