import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { ExpositionFormat } from '../../src/metrics/exposition.js';
import { LIVE_PART_MAX_AGE_MS, MetricsPage } from '../../src/metrics/metricsPage.js';
import type { MetricsPageResponse } from '../../src/metrics/metricsPage.js';
import { acrossRepositories, loadScenario, replayScenario } from './scenario.js';
import type { ReplayedScenario } from './scenario.js';
import { renderPage } from './page.js';

function pageFor(replay: ReplayedScenario, clockMs?: () => number): MetricsPage {
  return new MetricsPage({
    registry: replay.registry,
    store: replay.store,
    snapshotMetrics: replay.snapshotMetrics,
    metricChanges: replay.metricChanges,
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

describe('MetricsPage', () => {
  it.each(['prometheus', 'openmetrics'] as const)(
    'serves from its cache exactly what a fresh render gives (%s)',
    async (format) => {
      const replay = replayScenario(loadScenario('normal-queue'));
      const page = pageFor(replay);
      const first = await text(page, format);
      const second = await text(page, format);

      expect(first).toBe(await fresh(replay, format));
      expect(second).toBe(first);
      expect(page.snapshotRenders).toBe(1);
    },
  );

  it('renders the snapshot part once per store change, however many scrapes come in between', async () => {
    const replay = replayScenario(loadScenario('pull-request-left-between-polls'), { polls: 1 });
    const page = pageFor(replay);
    const pages = await Promise.all(Array.from({ length: 10 }, () => text(page)));
    expect(new Set(pages).size).toBe(1);
    expect(page.snapshotRenders).toBe(1);

    expect(replay.recordNextPoll()).toBe(true);
    const afterPoll = await text(page);
    expect(page.snapshotRenders).toBe(2);
    expect(afterPoll).not.toBe(pages[0]);
    expect(afterPoll).toBe(await fresh(replay, 'prometheus'));
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

  it('renders the exporter self-metrics again as soon as one changes, between polls too', async () => {
    const replay = replayScenario(loadScenario('normal-queue'));
    const page = pageFor(replay, () => 5_000);
    const count = (page: string): string | undefined =>
      /trunk_exporter_api_requests_total\{endpoint="getQueue",code="503"\} (\d+)/.exec(page)?.[1];
    expect(count(await text(page))).toBeUndefined();

    expect(page.current('prometheus', false)).toBeDefined();

    replay.apiCallObserver.requestFinished('getQueue', '503', 0.2);
    replay.apiCallObserver.requestFinished('getQueue', '503', 0.2);
    // The synchronous path (what /metrics tries first) must not serve the old live part either.
    expect(page.current('prometheus', false)).toBeUndefined();
    const after = await text(page);
    expect(count(after)).toBe('2');
    expect(page.snapshotRenders).toBe(1);
    expect(after).toBe(await fresh(replay, 'prometheus'));
  });

  it('reuses the live part within a second when nothing in it changed (process metrics)', async () => {
    const replay = replayScenario(loadScenario('normal-queue'), { defaultMetrics: true });
    let clock = 5_000;
    const page = pageFor(replay, () => clock);
    const livePart = async (): Promise<Buffer | undefined> =>
      (await page.render('prometheus', { acceptGzip: false })).chunks.at(-1);
    const first = await livePart();
    clock += LIVE_PART_MAX_AGE_MS;
    expect(await livePart()).toBe(first);
    clock += 1;
    const later = await livePart();
    expect(later).not.toBe(first);
    expect(later?.toString()).toContain('process_cpu_seconds_total');
  });

  it.each(['prometheus', 'openmetrics'] as const)(
    'gzips to the same bytes as the plain page (%s)',
    async (format) => {
      const replay = replayScenario(loadScenario('hostile-label-values'));
      const page = pageFor(replay);
      const plain = await page.render(format, { acceptGzip: false });
      const gzipped = await page.render(format, { acceptGzip: true });

      expect(plain.contentEncoding).toBeUndefined();
      expect(gzipped.contentEncoding).toBe('gzip');
      expect(gzipped.contentType).toBe(plain.contentType);
      // Two members: the cached snapshot part, then the live part gzipped per scrape.
      expect(gzipped.chunks).toHaveLength(2);
      expect(body(gzipped)).toBe(body(plain));
      expect(body(gzipped)).toBe(await fresh(replay, format));
      expect(gzipped.length).toBeLessThan(plain.length);
    },
  );

  it('answers current() without waiting only while both parts are rendered and still current', async () => {
    const replay = replayScenario(loadScenario('pull-request-left-between-polls'), { polls: 1 });
    let clock = 5_000;
    const page = pageFor(replay, () => clock);
    expect(page.current('prometheus', false)).toBeUndefined();

    const rendered = await page.render('prometheus', { acceptGzip: false });
    expect(page.current('prometheus', false)).toBe(rendered);
    expect(page.current('openmetrics', false)).toBeUndefined();
    // Gzip members are made on the first request that accepts them, not before.
    expect(page.current('prometheus', true)).toBeUndefined();
    const gzipped = await page.render('prometheus', { acceptGzip: true });
    expect(page.current('prometheus', true)).toBe(gzipped);

    expect(replay.recordNextPoll()).toBe(true);
    expect(page.current('prometheus', false)).toBeUndefined();
    const afterPoll = await page.render('prometheus', { acceptGzip: false });
    expect(body(afterPoll)).toBe(await fresh(replay, 'prometheus'));
    expect(page.current('prometheus', false)).toBe(afterPoll);

    clock += LIVE_PART_MAX_AGE_MS + 1;
    expect(page.current('prometheus', false)).toBeUndefined();
  });

  it.each([false, true])(
    'frees a replaced snapshot part once every response written from it is released (gzip: %s)',
    async (acceptGzip) => {
      // Pages large enough to own their memory: Node.js pools small buffers, and those are left
      // to the GC.
      const repositories = 300;
      const scenario = acrossRepositories(
        loadScenario('pull-request-left-between-polls'),
        repositories,
      );
      const replay = replayScenario(scenario, { polls: repositories });
      const page = pageFor(replay);
      const rendered = await page.render('prometheus', { acceptGzip });
      rendered.release();
      // A scrape of the unchanged page, still being sent when the next render replaces it.
      const sending = page.current('prometheus', acceptGzip);
      if (sending === undefined) throw new Error('the page should be current');
      const sent = body(sending);

      expect(replay.recordNextPoll()).toBe(true);
      const next = await page.render('prometheus', { acceptGzip });
      expect(body(sending)).toBe(sent);
      const [snapshotChunk] = sending.chunks;
      expect(snapshotChunk?.length).toBeGreaterThan(Buffer.poolSize / 2);

      sending.release();
      expect(snapshotChunk?.length).toBe(0);
      // The current page is never freed, however many responses release it.
      next.release();
      expect(body(next)).toBe(await fresh(replay, 'prometheus'));
    },
  );
});
