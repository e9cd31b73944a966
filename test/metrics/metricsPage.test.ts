// The page is kept per target: a store change renders that target's bytes at once, and a scrape
// lays every target's bytes out family by family. Each page must still be exactly what a page of
// its own, rendering everything afresh, gives.
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { ExpositionFormat } from '../../src/metrics/exposition.js';
import {
  EXPORTER_PART_BURST,
  EXPORTER_PART_RENDERS_PER_SECOND,
  LIVE_PART_MAX_AGE_MS,
} from '../../src/metrics/livePart.js';
import { IDLE_VARIANT_MS, MetricsPage } from '../../src/metrics/metricsPage.js';
import type { MetricsPageResponse } from '../../src/metrics/metricsPage.js';
import { TARGETS_PER_BLOCK } from '../../src/metrics/pageBytes.js';
import type { Target } from '../../src/snapshot/types.js';
import {
  acrossRepositories,
  FLAKY_TESTS_INTERVAL_SECONDS,
  loadScenario,
  MERGE_QUEUE_INTERVAL_SECONDS,
  replayScenario,
} from './scenario.js';
import type { ReplayedScenario, Scenario } from './scenario.js';
import { renderPage } from './page.js';

const REPOSITORIES = 6;

/** normal-queue's targets and polls, once per repository. */
function manyRepositories(): Scenario {
  return acrossRepositories(loadScenario('normal-queue'), REPOSITORIES);
}

function pageFor(replay: ReplayedScenario, clockMs?: () => number): MetricsPage {
  return new MetricsPage({
    registry: replay.registry,
    store: replay.store,
    snapshotMetrics: replay.snapshotMetrics,
    ...(clockMs === undefined ? {} : { clockMs }),
  });
}

async function text(page: MetricsPage, format: ExpositionFormat = 'prometheus'): Promise<string> {
  return body(await page.render(format, { acceptGzip: false }));
}

function body(response: MetricsPageResponse): string {
  const bytes = Buffer.concat(response.chunks);
  expect(bytes.length).toBe(response.length);
  return (response.contentEncoding === 'gzip' ? gunzipSync(bytes) : bytes).toString('utf8');
}

async function fresh(replay: ReplayedScenario, format: ExpositionFormat): Promise<string> {
  // A page of its own renders everything afresh.
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

function firstTarget(scenario: Scenario): Target {
  const [target] = scenario.targets;
  if (target === undefined) throw new Error('scenario without targets');
  return target;
}

describe('MetricsPage', () => {
  it.each(['prometheus', 'openmetrics'] as const)(
    'serves from its cache exactly what a fresh render gives, rendering each target once (%s)',
    async (format) => {
      const scenario = manyRepositories();
      const replay = replayScenario(scenario);
      const page = pageFor(replay);
      const first = await text(page, format);
      const second = await text(page, format);

      expect(first).toBe(await fresh(replay, format));
      expect(second).toBe(first);
      expect(page.targetRenders).toBe(scenario.targets.length);
    },
  );

  it.each(['prometheus', 'openmetrics'] as const)(
    'renders a target when the store changes it, before any scrape, and only that one (%s)',
    async (format) => {
      const scenario = manyRepositories();
      const replay = replayScenario(scenario);
      const page = pageFor(replay);
      await text(page, format);

      replay.setClock(scenario.renderAt + 17);
      pollAgain(replay, { ...firstTarget(scenario), repo: 'github.com/acme/repo-3' });
      expect(page.targetRenders).toBe(scenario.targets.length + 1);
      const afterPoll = await text(page, format);
      expect(page.targetRenders).toBe(scenario.targets.length + 1);
      expect(afterPoll).toBe(await fresh(replay, format));
      expect(afterPoll).toMatch(
        /trunk_exporter_last_success_timestamp_seconds\{repo="github.com\/acme\/repo-3",branch="main",kind="merge_queue"\} \d+/,
      );
    },
  );

  it.each([false, true])(
    'writes a page of more targets than a block exactly as a fresh render, after polls in several blocks (gzip: %s)',
    async (acceptGzip) => {
      const scenario = acrossRepositories(loadScenario('normal-queue'), TARGETS_PER_BLOCK + 9);
      const replay = replayScenario(scenario);
      const page = pageFor(replay);
      const scrape = async () => body(await page.render('openmetrics', { acceptGzip }));
      await scrape();

      replay.setClock(scenario.renderAt + 17);
      for (const repo of [2, TARGETS_PER_BLOCK + 4]) {
        pollAgain(replay, {
          ...firstTarget(scenario),
          repo: `github.com/acme/repo-${String(repo)}`,
        });
      }
      expect(await scrape()).toBe(await fresh(replay, 'openmetrics'));
    },
  );

  it('sends a page written after a change as the chunks it was written from, and joins it into one buffer once it is sent again unchanged', async () => {
    const scenario = acrossRepositories(loadScenario('normal-queue'), TARGETS_PER_BLOCK + 9);
    const replay = replayScenario(scenario);
    const page = pageFor(replay);
    // The exporter's own metrics and the process metrics follow the snapshot families' chunks.
    const ownParts = 2;
    const scrape = () => page.render('prometheus', { acceptGzip: true });

    const first = await scrape();
    expect(first.chunks.length).toBeGreaterThan(ownParts + 2);
    const again = await scrape();
    expect(again.chunks).toHaveLength(ownParts + 1);
    expect(body(again)).toBe(body(first));
    // Kept joined: a third scrape joins nothing again.
    expect((await scrape()).chunks[0]).toBe(again.chunks[0]);

    replay.setClock(scenario.renderAt + 17);
    pollAgain(replay, { ...firstTarget(scenario), repo: 'github.com/acme/repo-3' });
    const afterPoll = await scrape();
    expect(afterPoll.chunks.length).toBeGreaterThan(ownParts + 2);
    expect(body(afterPoll)).toBe(await fresh(replay, 'prometheus'));
  });

  it('leaves out a target the configuration dropped', async () => {
    const scenario = manyRepositories();
    const replay = replayScenario(scenario);
    const page = pageFor(replay);
    expect(await text(page)).toContain('repo="github.com/acme/repo-0"');

    replay.store.setTargets(
      scenario.targets.filter(({ repo }) => repo !== 'github.com/acme/repo-0'),
    );
    const after = await text(page);
    expect(after).not.toContain('repo="github.com/acme/repo-0"');
    expect(after).toBe(await fresh(replay, 'prometheus'));
  });

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
    expect(after).toBe(await fresh(replay, 'prometheus'));
    expect(after).toContain('every 1m');
    expect(page.targetRenders).toBe(scenario.targets.length * 2);
  });

  it('drops a snapshot that went stale with time alone, without a poll', async () => {
    // The queue succeeded at 00:00, then fails from 00:05: it goes stale 600s after its success.
    const replay = replayScenario(loadScenario('stale-target-drops-data-series'), { polls: 2 });
    const start = Date.parse('2026-01-01T00:00:00Z') / 1000;
    const queue = { kind: 'merge_queue', repo: 'github.com/acme/widgets', branch: 'main' } as const;
    replay.setClock(start + 300);
    replay.store.recordFailure(queue, 'HTTP 503', 1);
    const page = pageFor(replay);
    const beforeStale = await text(page);
    expect(beforeStale).toContain('trunk_merge_queue_state{');

    replay.setClock(start + 601);
    const afterStale = await text(page);
    expect(afterStale).not.toContain('trunk_merge_queue_state{');
    expect(afterStale).toBe(await fresh(replay, 'prometheus'));
  });

  it('shows the exporter self-metrics as they are at each scrape, between polls too', async () => {
    const replay = replayScenario(loadScenario('normal-queue'));
    const page = pageFor(replay);
    const count = (page: string): string | undefined =>
      /trunk_exporter_api_requests_total\{endpoint="getQueue",code="503"\} (\d+)/.exec(page)?.[1];
    expect(count(await text(page))).toBeUndefined();

    replay.apiCallObserver.requestFinished('getQueue', '503', 0.2);
    replay.apiCallObserver.requestFinished('getQueue', '503', 0.2);
    const after = await text(page);
    expect(count(after)).toBe('2');
    expect(after).toBe(await fresh(replay, 'prometheus'));
  });

  it('renders the self-metrics afresh for a burst of scrapes, then at a bounded rate (a flood)', async () => {
    const replay = replayScenario(loadScenario('normal-queue'));
    let clock = 5_000;
    const page = pageFor(replay, () => clock);
    let calls = 0;
    const count = async (): Promise<number> => {
      replay.apiCallObserver.requestFinished('getQueue', '503', 0.2);
      calls += 1;
      const shown =
        /trunk_exporter_api_requests_total\{endpoint="getQueue",code="503"\} (\d+)/.exec(
          await text(page),
        )?.[1];
      return Number(shown);
    };
    // Scrapes at one instant: each of the burst sees every call so far, the next one the last rendering.
    for (let scrape = 1; scrape <= EXPORTER_PART_BURST; scrape++) expect(await count()).toBe(calls);
    expect(await count()).toBe(calls - 1);
    expect(await count()).toBe(calls - 2);
    // One rendering's worth of time later, one fresh rendering again.
    clock += 1000 / EXPORTER_PART_RENDERS_PER_SECOND;
    expect(await count()).toBe(calls);
    expect(await count()).toBe(calls - 1);
  });

  it('collects the process metrics again once their rendering is a second old', async () => {
    const replay = replayScenario(loadScenario('normal-queue'), { defaultMetrics: true });
    let clock = 5_000;
    const page = pageFor(replay, () => clock);
    // The process metrics come after the snapshot families' chunks, before the exporter's own.
    const processPart = async (): Promise<Buffer | undefined> =>
      (await page.render('prometheus', { acceptGzip: false })).chunks.at(-2);
    const first = await processPart();
    expect(first?.toString()).toContain('process_cpu_seconds_total');
    expect(first?.toString()).not.toContain('trunk_exporter');
    clock += LIVE_PART_MAX_AGE_MS;
    expect(await processPart()).toBe(first);
    clock += 1;
    const later = await processPart();
    expect(later).not.toBe(first);
    expect(later?.toString()).toContain('process_cpu_seconds_total');
  });

  it.each(['prometheus', 'openmetrics'] as const)(
    'gzips to the same text as the plain page, target by target (%s)',
    async (format) => {
      const replay = replayScenario(acrossRepositories(loadScenario('hostile-label-values'), 3));
      const page = pageFor(replay);
      const plain = await page.render(format, { acceptGzip: false });
      const gzipped = await page.render(format, { acceptGzip: true });

      expect(plain.contentEncoding).toBeUndefined();
      expect(gzipped.contentEncoding).toBe('gzip');
      expect(gzipped.contentType).toBe(plain.contentType);
      expect(body(gzipped)).toBe(body(plain));
      expect(body(gzipped)).toBe(await fresh(replay, format));
      expect(gzipped.length).toBeLessThan(plain.length);
    },
  );

  it('stops rendering a variant nobody asked for in a while, and renders it whole when asked again', async () => {
    const scenario = manyRepositories();
    const replay = replayScenario(scenario);
    let clock = 5_000;
    const page = pageFor(replay, () => clock);
    await text(page);
    await page.render('prometheus', { acceptGzip: true });
    const targets = scenario.targets.length;
    expect(page.targetRenders).toBe(targets * 2);

    // Plain text asked for again in time; gzip not.
    clock += IDLE_VARIANT_MS;
    await text(page);
    clock += 1;
    replay.setClock(scenario.renderAt + 17);
    pollAgain(replay, { ...firstTarget(scenario), repo: 'github.com/acme/repo-2' });
    expect(page.targetRenders).toBe(targets * 2 + 1);

    const gzipped = await page.render('prometheus', { acceptGzip: true });
    expect(page.targetRenders).toBe(targets * 3 + 1);
    expect(body(gzipped)).toBe(await fresh(replay, 'prometheus'));
  });
});
