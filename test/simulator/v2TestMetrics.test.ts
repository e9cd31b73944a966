// `include=metrics&period=…` on the test list and `GET /v2/test-collections` as the definition
// says: what `failureRate`, `failureCount`, `runCount` and `prsImpacted` mean, the nulls it allows,
// and the collections' counts and settings.
import { describe, expect, it } from 'vitest';
import type { TestCaseMetricsV2Body as Metrics } from '../../src/simulator/v2TestResponses.js';
import { getPage, startV2Simulator, walk } from './v2Harness.js';

const DAY = 86_400_000;

describe('test metrics', () => {
  it.each([
    ['1d', 1],
    ['7d', 7],
    ['30d', 30],
  ] as const)('over %s mean what the definition says', async (period, days) => {
    const simulator = await startV2Simulator({ seed: 12 });
    simulator.world.advance(simulator.world.now() + 6 * 3600);
    const now = simulator.world.now() * 1000;
    const start = now - days * DAY;
    const { rows } = await walk(simulator, `/v2/tests?include=metrics&period=${period}&limit=100`);
    let impacting = 0;
    let nulls = { metrics: 0, durationP95Ms: 0 };
    for (const test of rows) {
      const metrics = test.metrics as Metrics | null;
      // "Null when the test had no runs in `period`."
      if (metrics === null) {
        nulls = { ...nulls, metrics: nulls.metrics + 1 };
        continue;
      }
      const { failureRate, failureCount, runCount, prsImpacted, lastFailureAt } = metrics;
      expect(runCount).toBeGreaterThan(0);
      // "Failing runs over total runs in the period, 0 to 1."
      expect(failureRate).toBeCloseTo(failureCount / runCount, 12);
      expect(failureCount).toBeLessThanOrEqual(runCount);
      // "Distinct pull requests that saw this test fail while it was unhealthy and not
      // quarantined": none without a failure, none for a test healthy all the period, none for
      // one quarantined all of it, and never more than its failures.
      expect(prsImpacted).toBeLessThanOrEqual(failureCount);
      const { id, status, statusSince, quarantinedSince } = test as {
        id: string;
        status: string;
        statusSince: string | null;
        quarantinedSince: string | null;
      };
      const since = statusSince === null ? -Infinity : Date.parse(statusSince);
      if (status === 'healthy' && since <= start) expect(prsImpacted, id).toBe(0);
      const quarantined = quarantinedSince === null ? Infinity : Date.parse(quarantinedSince);
      if (quarantined <= start) expect(prsImpacted, id).toBe(0);
      if (prsImpacted > 0) impacting += 1;
      // "95th-percentile duration in milliseconds. Null when nothing measurable ran".
      if (metrics.durationP95Ms === null) {
        nulls = { ...nulls, durationP95Ms: nulls.durationP95Ms + 1 };
      }
      // lastFailureAt is "Within the period", and none without a failure.
      if (failureCount === 0) expect(lastFailureAt).toBeNull();
      else expect(Date.parse(String(lastFailureAt))).toBeGreaterThanOrEqual(start);
    }
    expect(impacting).toBeGreaterThan(0);
    expect(nulls.metrics).toBeGreaterThan(0);
    expect(nulls.durationP95Ms).toBeGreaterThan(0);
  });
});

describe('test collections', () => {
  it('count their tests and say whether quarantine is on', async () => {
    const simulator = await startV2Simulator({ seed: 12 });
    const collections = (await getPage(simulator, '/v2/test-collections')).data;
    expect(collections.length).toBe(simulator.world.repositories.length);
    for (const collection of collections) {
      const { rows } = await walk(
        simulator,
        `/v2/tests?testCollectionId=${String(collection.id)}&limit=100`,
      );
      // "Distinct test cases seen in this collection."
      expect(collection.testCaseCount).toBe(new Set(rows.map((row) => row.id)).size);
      // Each has quarantined tests, so quarantining "is turned on for this collection".
      expect(rows.some((row) => row.quarantineState === 'quarantined')).toBe(true);
      expect(collection.quarantineEnabled).toBe(true);
    }
  });
});
