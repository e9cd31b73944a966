import { describe, expect, it } from 'vitest';
import { renderExposition } from '../../src/metrics/exposition.js';
import type { ExpositionFormat } from '../../src/metrics/exposition.js';
import { expectGolden } from './golden.js';
import { loadScenario, replayScenario } from './scenario.js';

/**
 * Scrapes once before the first poll and after every poll, like Prometheus would, and returns the
 * last page: series left over from an earlier scrape (a collect without reset) end up in the golden.
 */
async function renderScenario(name: string, format: ExpositionFormat): Promise<string> {
  const replay = replayScenario(loadScenario(name), { polls: 0 });
  await renderExposition(replay.registry, format);
  while (replay.recordNextPoll()) await renderExposition(replay.registry, format);
  replay.finish();
  return (await renderExposition(replay.registry, format)).body;
}

describe('golden exposition pages', () => {
  const prometheusCases = [
    'normal-queue',
    'queue-with-unknown-enum-values',
    'readiness-blocked-counts',
    'readiness-unknown',
    'codeowners-top-n-with-other-and-none',
    'failed-target-keeps-values',
    'stale-target-drops-data-series',
    'pull-request-left-between-polls',
    'hostile-label-values',
  ];

  for (const name of prometheusCases) {
    it(`renders fixtures/${name}.json as golden/${name}.prom`, async () => {
      expectGolden(`${name}.prom`, await renderScenario(name, 'prometheus'));
    });
  }

  it('renders fixtures/normal-queue.json as golden/normal-queue.openmetrics', async () => {
    expectGolden('normal-queue.openmetrics', await renderScenario('normal-queue', 'openmetrics'));
  });
});

// The goldens pin the whole page; these say in words what the riskiest cases are about, so a
// regenerated golden that silently lost the point fails here too.
describe('series life cycle', () => {
  it('drops the series of a PR that left the queue between two polls', async () => {
    // One registry scraped before and after, as in production: the second scrape must forget.
    const replay = replayScenario(loadScenario('pull-request-left-between-polls'), { polls: 1 });
    const beforePage = (await renderExposition(replay.registry, 'prometheus')).body;
    replay.recordNextPoll();
    const afterPage = (await renderExposition(replay.registry, 'prometheus')).body;

    const oldestPendingFailure =
      'trunk_merge_queue_oldest_state_change_timestamp_seconds{repo="github.com/acme/widgets",branch="main",state="pending_failure"}';
    expect(beforePage).toContain(oldestPendingFailure);
    expect(afterPage).not.toContain(oldestPendingFailure);
    expect(afterPage).toContain(
      'trunk_merge_queue_pull_requests{repo="github.com/acme/widgets",branch="main",state="pending_failure",priority="high"} 0',
    );
  });

  it('keeps the values of a failed target within staleAfterSeconds and marks it down', async () => {
    const { registry } = replayScenario(loadScenario('failed-target-keeps-values'));
    const page = (await renderExposition(registry, 'prometheus')).body;
    expect(page).toContain(
      'trunk_merge_queue_concurrency{repo="github.com/acme/widgets",branch="main"} 2',
    );
    expect(page).toContain(
      'trunk_exporter_target_up{repo="github.com/acme/widgets",branch="main",kind="merge_queue"} 0',
    );
    expect(page).not.toContain('kind="flaky_tests"');
  });

  it('drops every data series of a stale target but keeps its status series', async () => {
    const { registry } = replayScenario(loadScenario('stale-target-drops-data-series'));
    const page = (await renderExposition(registry, 'prometheus')).body;
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
    const { registry } = replayScenario(loadScenario('readiness-unknown'));
    const page = (await renderExposition(registry, 'prometheus')).body;
    expect(page).not.toContain('trunk_merge_queue_pull_requests_blocked');
    expect(page).toContain(
      'trunk_merge_queue_pull_requests{repo="github.com/acme/widgets",branch="main",state="not_ready",priority="medium"} 2',
    );
  });
});
