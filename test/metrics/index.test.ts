// registerExporterMetrics: the metrics computed from the store keep no series between reads (they
// rebuild every series from the store on each read), and each read still gives the full set.
import { describe, expect, it } from 'vitest';
import { loadScenario, replayScenario } from './scenario.js';

/** prom-client's per-metric series store: what a metric holds between two reads. */
function heldSeries(metric: unknown): number {
  const { hashMap } = metric as { hashMap: Record<string, unknown> };
  return Object.keys(hashMap).length;
}

describe('registerExporterMetrics', () => {
  it('drops the series of every snapshot metric once it has been read', async () => {
    const { registry, snapshotMetrics } = replayScenario(loadScenario('normal-queue'));
    const snapshotFamilies = async (): Promise<unknown[]> =>
      (await registry.getMetricsAsJSON()).filter((family) =>
        snapshotMetrics.names.has(family.name),
      );
    const first = (await snapshotFamilies()) as { values: unknown[] }[];
    const seriesRead = first.reduce((sum, family) => sum + family.values.length, 0);
    expect(seriesRead).toBeGreaterThan(50);

    for (const name of snapshotMetrics.names) {
      const metric = registry.getSingleMetric(name);
      expect(metric, name).toBeDefined();
      // Unlabelled metrics keep their one default series; labelled ones keep none.
      expect(heldSeries(metric), name).toBeLessThanOrEqual(1);
    }
    // The next read rebuilds the same page from the store.
    expect(await snapshotFamilies()).toEqual(first);
  });

  it('leaves the live metrics (API counters) counting across reads', async () => {
    const { registry, apiCallObserver } = replayScenario(loadScenario('normal-queue'));
    apiCallObserver.requestFinished('getQueue', '200', 0.1);
    await registry.getMetricsAsJSON();
    apiCallObserver.requestFinished('getQueue', '200', 0.1);
    const requests = (await registry.getMetricsAsJSON()).find(
      (family) => family.name === 'trunk_exporter_api_requests_total',
    );
    expect(requests?.values.find((sample) => sample.labels.code === '200')?.value).toBeGreaterThan(
      1,
    );
  });
});
