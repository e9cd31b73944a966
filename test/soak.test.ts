// The short soak: a few hundred poll cycles against a simulator with heavy churn, through the same
// script as `npm run soak` (which runs 10,000). Bounds only, never timings.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runNode } from './support/nodeProcess.js';

const resultSchema = z.object({
  cycles: z.number(),
  series: z.number(),
  seriesOfFreshExporter: z.number(),
  extraSeries: z.number(),
  extraSeriesExamples: z.array(z.string()),
  flowSeries: z.number(),
  unboundedFlowSeries: z.array(z.string()),
  heapGrowth: z.number(),
  ok: z.boolean(),
});

describe('soak (short)', () => {
  it('keeps data series within what the simulator holds and the heap flat over 400 churning cycles', async () => {
    const run = await runNode([
      '--expose-gc',
      '--no-flush-bytecode',
      'scripts/soak.ts',
      '--cycles',
      '400',
      '--json',
    ]);
    expect(run.stderr).toBe('');
    const result = resultSchema.parse(JSON.parse(run.stdout));

    expect(result.cycles).toBeGreaterThanOrEqual(400);
    // Churn made series come and go all along; at the end only today's may remain. Time in queue
    // of outcome unknown is not among them: "unknown from its first exit" (docs/metrics.md), which
    // a busy machine brings (lookups that keep failing) and a fresh exporter has not seen.
    expect(result.series).toBeGreaterThan(0);
    expect(result.extraSeriesExamples).toEqual([]);
    // Queue-flow counters outlive the PRs they counted, but only for known PR states.
    expect(result.flowSeries).toBeGreaterThan(0);
    expect(result.unboundedFlowSeries).toEqual([]);
    expect(result.series).toBeLessThanOrEqual(result.seriesOfFreshExporter);
    expect(result.heapGrowth).toBeLessThanOrEqual(0.1);
    expect(result.ok).toBe(true);
    expect(run.code).toBe(0);
    // What it bounds is 400 cycles, not their time: a machine busy with other work stretches them.
  }, 300_000);
});
