// The snapshot part of /metrics is rendered per target and laid out family by family: a poll of
// one target renders that target again and copies every other target's bytes. Each page must still
// be exactly what a whole render of the store gives.
import { describe, expect, it } from 'vitest';
import type { ExpositionFormat } from '../../src/metrics/exposition.js';
import { MetricsPage } from '../../src/metrics/metricsPage.js';
import type { Target } from '../../src/snapshot/types.js';
import {
  acrossRepositories,
  FLAKY_TESTS_INTERVAL_SECONDS,
  MERGE_QUEUE_INTERVAL_SECONDS,
  loadScenario,
  replayScenario,
} from './scenario.js';
import type { ReplayedScenario, Scenario } from './scenario.js';
import { renderPage } from './page.js';

const REPOSITORIES = 6;

/** normal-queue's targets and polls, once per repository. */
function manyRepositories(): Scenario {
  return acrossRepositories(loadScenario('normal-queue'), REPOSITORIES);
}

function pageFor(replay: ReplayedScenario): MetricsPage {
  return new MetricsPage({
    registry: replay.registry,
    store: replay.store,
    snapshotMetrics: replay.snapshotMetrics,
    metricChanges: replay.metricChanges,
  });
}

async function text(page: MetricsPage, format: ExpositionFormat = 'prometheus'): Promise<string> {
  return Buffer.concat((await page.render(format, { acceptGzip: false })).chunks).toString();
}

async function fresh(
  replay: ReplayedScenario,
  format: ExpositionFormat = 'prometheus',
): Promise<string> {
  // A page of its own renders every target afresh.
  return renderPage(pageFor(replay), format);
}

/** Records another successful poll of `target` with the snapshot it already has. */
function pollAgain(replay: ReplayedScenario, target: Target): void {
  const status = replay.store
    .statuses()
    .find(
      (candidate) => candidate.target.repo === target.repo && candidate.target.kind === target.kind,
    );
  if (status?.snapshot === undefined) throw new Error(`no snapshot for ${target.repo}`);
  replay.store.recordSuccess(target, status.snapshot, 0.25, status.queueFlow);
}

describe('snapshot part rendered per target', () => {
  it.each(['prometheus', 'openmetrics'] as const)(
    'renders again only the target a poll changed, and lays out what a whole render gives (%s)',
    async (format) => {
      const scenario = manyRepositories();
      const replay = replayScenario(scenario);
      const page = pageFor(replay);
      expect(await text(page, format)).toBe(await fresh(replay, format));
      expect(page.targetRenders).toBe(scenario.targets.length);

      const [queue] = scenario.targets;
      if (queue === undefined) throw new Error('scenario without targets');
      replay.setClock(scenario.renderAt + 17);
      pollAgain(replay, { ...queue, repo: 'github.com/acme/repo-3' });
      const afterPoll = await text(page, format);
      expect(page.targetRenders).toBe(scenario.targets.length + 1);
      expect(afterPoll).toBe(await fresh(replay, format));
      expect(afterPoll).toMatch(
        /trunk_exporter_last_success_timestamp_seconds\{repo="github.com\/acme\/repo-3",branch="main",kind="merge_queue"\} \d+/,
      );
    },
  );

  it('renders every target again when a reload changes the HELP texts, without a store change', async () => {
    const scenario = manyRepositories();
    const replay = replayScenario(scenario);
    const page = pageFor(replay);
    const before = await text(page);
    replay.applySettings({
      mergeQueueIntervalSeconds: MERGE_QUEUE_INTERVAL_SECONDS * 2,
      flakyTestsIntervalSeconds: FLAKY_TESTS_INTERVAL_SECONDS,
      topCodeowners: 1,
    });
    const after = await text(page);
    expect(after).not.toBe(before);
    expect(after).toBe(await fresh(replay));
    expect(after).toContain('every 1m');
    expect(page.targetRenders).toBe(scenario.targets.length * 2);
  });

  it('gives every scrape that arrives during a render the one render that follows it', async () => {
    const scenario = manyRepositories();
    const replay = replayScenario(scenario);
    const page = pageFor(replay);
    const first = text(page);
    const [queue] = scenario.targets;
    if (queue === undefined) throw new Error('scenario without targets');
    replay.setClock(scenario.renderAt + 5);
    pollAgain(replay, { ...queue, repo: 'github.com/acme/repo-1' });
    const waiting = [text(page), text(page), text(page)];
    replay.setClock(scenario.renderAt + 9);
    pollAgain(replay, { ...queue, repo: 'github.com/acme/repo-2' });
    waiting.push(text(page));

    const [firstPage, ...later] = await Promise.all([first, ...waiting]);
    // Two renders: the one running, and one for everything that arrived while it ran.
    expect(page.snapshotRenders).toBe(2);
    expect(new Set(later).size).toBe(1);
    expect(later[0]).not.toBe(firstPage);
    expect(later[0]).toBe(await fresh(replay));
  });
});
