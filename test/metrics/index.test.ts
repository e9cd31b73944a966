// registerExporterMetrics: the registry holds only what the exporter observes itself; every family
// computed from snapshots is the engine's.
import { describe, expect, it } from 'vitest';
import { SNAPSHOT_FAMILIES } from '../../src/metrics/families.js';
import { loadScenario, replayScenario } from './scenario.js';

describe('registerExporterMetrics', () => {
  it('puts no snapshot family on the prom-client registry', async () => {
    const { registry, snapshotMetrics } = replayScenario(loadScenario('normal-queue'));
    const onRegistry = (await registry.getMetricsAsJSON()).map((family) => family.name);
    expect(onRegistry).toContain('trunk_exporter_api_requests_total');
    expect(onRegistry).toContain('trunk_exporter_render_errors_total');
    const engineFamilies = snapshotMetrics.selected.map(({ definition }) => definition.name);
    expect(engineFamilies).toEqual(SNAPSHOT_FAMILIES.map(({ name }) => name));
    for (const name of engineFamilies) expect(onRegistry).not.toContain(name);
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
