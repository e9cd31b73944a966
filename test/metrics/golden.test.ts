import { describe, expect, it } from 'vitest';
import type { ExpositionFormat } from '../../src/metrics/exposition.js';
import { expectGolden } from './golden.js';
import { loadScenario, replayScenario } from './scenario.js';

/**
 * Scrapes the production page once before the first poll and after every poll, like Prometheus
 * would, and returns the last page: series left over from an earlier scrape end up in the golden,
 * and so do pieces of the per-target cache that a poll should have replaced. Scrapes alternate
 * between plain and gzip, and the last page must read the same either way.
 */
async function renderScenario(name: string, format: ExpositionFormat): Promise<string> {
  const replay = replayScenario(loadScenario(name), { polls: 0 });
  let gzip = false;
  await replay.render(format, { gzip });
  while (replay.recordNextPoll()) {
    gzip = !gzip;
    await replay.render(format, { gzip });
  }
  replay.finish();
  const page = await replay.render(format);
  expect(await replay.render(format, { gzip: true })).toBe(page);
  return page;
}

describe('golden exposition pages', () => {
  const prometheusCases = [
    'normal-queue',
    'queue-with-unknown-enum-values',
    'readiness-blocked-counts',
    'v2-not-mergeable-reasons',
    'v2-testing-attempts',
    'v2-verification-runs',
    'v2-entry-history',
    'v2-flaky-and-broken-tests',
    'readiness-unknown',
    'codeowners-top-n-with-other-and-none',
    'failed-target-keeps-values',
    'stale-target-drops-data-series',
    'pull-request-left-between-polls',
    'hostile-label-values',
    'codeowner-named-none-apart-from-no-owner',
    'exemplars-on-latency-histograms',
  ];

  const openMetricsCases = [
    'normal-queue',
    'hostile-label-values',
    'v2-testing-attempts',
    'v2-verification-runs',
    'exemplars-on-latency-histograms',
  ];

  for (const name of prometheusCases) {
    it(`renders fixtures/${name}.json as golden/${name}.prom`, async () => {
      expectGolden(`${name}.prom`, await renderScenario(name, 'prometheus'));
    });
  }

  for (const name of openMetricsCases) {
    it(`renders fixtures/${name}.json as golden/${name}.openmetrics`, async () => {
      expectGolden(`${name}.openmetrics`, await renderScenario(name, 'openmetrics'));
    });
  }
});

// The goldens pin the whole page; these say in words what the riskiest cases are about, so a
// regenerated golden that silently lost the point fails here too.
describe('series life cycle', () => {
  it('drops the series of a PR that left the queue between two polls', async () => {
    // One registry scraped before and after, as in production: the second scrape must forget.
    const replay = replayScenario(loadScenario('pull-request-left-between-polls'), { polls: 1 });
    const beforePage = await replay.render();
    replay.recordNextPoll();
    const afterPage = await replay.render();

    const oldestPendingFailure =
      'trunk_merge_queue_oldest_state_change_timestamp_seconds{repo="github.com/acme/widgets",branch="main",state="pending_failure"}';
    expect(beforePage).toContain(oldestPendingFailure);
    expect(afterPage).not.toContain(oldestPendingFailure);
    // Its state reads 0 at the default priority; its own priority's series is gone with it.
    const pendingFailure =
      'trunk_merge_queue_pull_requests{repo="github.com/acme/widgets",branch="main",state="pending_failure"';
    expect(beforePage).toContain(`${pendingFailure},priority="high"} 1`);
    expect(afterPage).not.toContain(`${pendingFailure},priority="high"}`);
    expect(afterPage).toContain(`${pendingFailure},priority="medium"} 0`);
  });

  it('keeps the values of a failed target within staleAfterSeconds and marks it down', async () => {
    const page = await replayScenario(loadScenario('failed-target-keeps-values')).render();
    expect(page).toContain(
      'trunk_merge_queue_concurrency{repo="github.com/acme/widgets",branch="main"} 2',
    );
    expect(page).toContain(
      'trunk_exporter_target_up{repo="github.com/acme/widgets",branch="main",kind="merge_queue"} 0',
    );
    expect(page).not.toContain('kind="flaky_tests"');
  });

  it('drops every data series of a stale target but keeps its status series', async () => {
    const page = await replayScenario(loadScenario('stale-target-drops-data-series')).render();
    expect(page).not.toMatch(/^trunk_merge_queue_/m);
    expect(page).toContain(
      'trunk_exporter_target_up{repo="github.com/acme/widgets",branch="main",kind="merge_queue"} 0',
    );
    expect(page).toContain(
      'trunk_exporter_last_success_timestamp_seconds{repo="github.com/acme/widgets",branch="main",kind="merge_queue"} 1767225600',
    );
    expect(page).toContain('trunk_flaky_tests_quarantined{repo="github.com/acme/widgets"} 1');
  });

  it('renders no blocked series for a queue whose readiness is unknown', async () => {
    const page = await replayScenario(loadScenario('readiness-unknown')).render();
    expect(page).not.toContain('trunk_merge_queue_pull_requests_blocked');
    expect(page).toContain(
      'trunk_merge_queue_pull_requests{repo="github.com/acme/widgets",branch="main",state="not_ready",priority="medium"} 2',
    );
  });
});

// OpenMetrics 1.0: "Bucket values MAY have exemplars. [...] Each bucket covers the values less and
// or equal to it, and the value of the exemplar MUST be within this range. [...] A bucket MUST NOT
// have more than one exemplar." Each line below is counted from the fixture's `about`.
describe('exemplars', () => {
  const QUEUE = 'repo="github.com/acme/widgets",branch="main"';
  const TIME_IN_QUEUE = 'trunk_merge_queue_time_in_queue_seconds_bucket';
  const TESTING = 'trunk_merge_queue_testing_duration_seconds_bucket';

  it("writes each bucket's latest observation as its exemplar, with the pull request", async () => {
    const page = await replayScenario(loadScenario('exemplars-on-latency-histograms')).render(
      'openmetrics',
    );
    const withExemplars = page.split('\n').filter((line) => line.includes(' # {'));
    expect(withExemplars).toEqual([
      `${TIME_IN_QUEUE}{${QUEUE},outcome="merged",le="300.0"} 1 # {pr="105"} 92.0 1767225642.000`,
      `${TIME_IN_QUEUE}{${QUEUE},outcome="merged",le="1200.0"} 3 # {pr="101"} 754.0 1767225610.000`,
      `${TIME_IN_QUEUE}{${QUEUE},outcome="failed",le="3600.0"} 1 # {pr="102"} 2150.0 1767225650.000`,
      `${TESTING}{${QUEUE},outcome="passed",bisection="false",le="600.0"} 2 # {pr="105"} 450.0 1767225640.000`,
      `${TESTING}{${QUEUE},outcome="failed",bisection="false",le="1800.0"} 1 # {pr="102"} 1500.0 1767225620.000`,
      `${TESTING}{${QUEUE},outcome="interrupted",bisection="false",le="60.0"} 1 # {pr="106"} 40.0 1767221400.000`,
      `${TESTING}{${QUEUE},outcome="passed",bisection="true",le="300.0"} 1 # {pr="103"} 200.0 1767225645.000`,
    ]);
  });

  it('writes none for an event a read of the last hour could not have counted', async () => {
    const page = await replayScenario(loadScenario('exemplars-on-latency-histograms')).render(
      'openmetrics',
    );
    // 98 left at 22:00:00, before 22:46:00: the last poll (00:01:00) less 30 polls of 30 s, less an
    // hour. Counted, without an exemplar; 106 (22:50:00) keeps its own.
    expect(page).toContain(`${TIME_IN_QUEUE}{${QUEUE},outcome="cancelled",le="1800.0"} 1\n`);
    expect(page).toContain(
      `${TESTING}{${QUEUE},outcome="interrupted",bisection="false",le="60.0"} 1 # {pr="106"}`,
    );
  });

  it('leaves them out of the Prometheus text format, which has none', async () => {
    const page = await replayScenario(loadScenario('exemplars-on-latency-histograms')).render();
    expect(page).toContain(`${TIME_IN_QUEUE}{${QUEUE},outcome="merged",le="1200"} 3\n`);
    expect(page).not.toContain(' # {');
  });
});
