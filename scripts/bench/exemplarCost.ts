// What exemplars cost once every bucket has had its share, which a run of minutes cannot show:
// hours of the simulator's model, observed and rendered by the exporter's own code.
import type * as FamilyTextModule from '../../src/metrics/familyText.js';
import type * as ExemplarWindowModule from '../../src/metrics/exemplarWindow.js';
import type * as HistogramModule from '../../src/snapshot/histogram.js';
import type * as TestingTypesModule from '../../src/snapshot/testingAttemptTypes.js';
import type { HistogramCounts } from '../../src/snapshot/histogram.js';
import type { TargetStatus } from '../../src/snapshot/types.js';
import { loadBuilt } from './built.ts';
import { pageCosts } from './pageFamilies.ts';
import type { ModelHours } from './modelHours.ts';

/** Exemplars per queue and their bytes, written always and as the exporter writes them. */
export interface ExemplarCost {
  readonly hours: number;
  readonly queues: number;
  readonly always: { readonly exemplars: number; readonly bytes: number };
  readonly written: { readonly exemplars: number; readonly bytes: number };
}

/**
 * The exemplars of `hours` of the simulator's model at the default interval: each queue's exits
 * (the latest of each pull request, from its latest submission) and testing attempts, observed
 * into the exporter's histograms with their pull request, and rendered in OpenMetrics by the
 * exporter's engine with every exemplar and with those its window keeps at the end.
 */
export async function exemplarCost({
  world,
  queues,
  hours,
  start,
}: ModelHours): Promise<ExemplarCost> {
  const { emptyHistogram, observe } =
    await loadBuilt<typeof HistogramModule>('snapshot/histogram.js');
  const { TESTING_DURATION_BUCKETS_SECONDS } = await loadBuilt<typeof TestingTypesModule>(
    'snapshot/testingAttemptTypes.js',
  );
  const { familyText } = await loadBuilt<typeof FamilyTextModule>('metrics/familyText.js');
  const { recentExemplarsSince } = await loadBuilt<typeof ExemplarWindowModule>(
    'metrics/exemplarWindow.js',
  );
  const now = world.now();
  const text = familyText(
    {
      name: 'latency_seconds',
      help: () => '',
      type: 'histogram',
      labelNames: ['series'],
      scope: 'target',
      samples: () => [],
    },
    '',
    'openmetrics',
  );
  const status = { lastSuccessAt: now } as TargetStatus;
  const settings = { mergeQueueIntervalSeconds: 30 } as Parameters<typeof recentExemplarsSince>[1];
  const totals = { always: { exemplars: 0, bytes: 0 }, written: { exemplars: 0, bytes: 0 } };
  for (const { model } of world.mergeQueues) {
    const histograms = new Map<string, HistogramCounts>();
    // Time in queue has the default bounds (FLOW_BUCKETS_SECONDS).
    const add = (
      series: string,
      bounds: readonly number[] | undefined,
      value: number,
      pr: number,
      at: number,
    ): void => {
      const histogram = histograms.get(series) ?? emptyHistogram(bounds);
      histograms.set(series, observe(histogram, value, { pullRequest: pr, timestampSeconds: at }));
    };
    for (const pr of model.concluded) {
      const last = pr.conclusions.at(-1);
      if (last === undefined || last.at < start) continue;
      add(`queue/${last.state}`, undefined, last.at - pr.lastSubmittedAt, pr.number, last.at);
    }
    for (const attempt of model.testing.attempts) {
      if (attempt.endedAt < start) continue;
      const series = `testing/${attempt.outcome}/${String(attempt.isBisection)}`;
      const seconds = attempt.endedAt - attempt.startedAt;
      add(series, TESTING_DURATION_BUCKETS_SECONDS, seconds, attempt.pr.number, attempt.endedAt);
    }
    const samples = [...histograms].map(([series, histogram]) => ({
      labels: [series],
      histogram,
    }));
    for (const [kind, recentOnly] of [
      ['always', false],
      ['written', true],
    ] as const) {
      const page = text.render(
        samples.map((sample) =>
          recentOnly
            ? { ...sample, exemplarsSince: recentExemplarsSince(status, settings) }
            : sample,
        ),
      );
      const [cost] = pageCosts(`# HELP latency_seconds\n${page}`).families;
      totals[kind].exemplars += cost?.exemplars ?? 0;
      totals[kind].bytes += cost?.exemplarBytes ?? 0;
    }
  }
  const perQueue = (figures: { exemplars: number; bytes: number }) => ({
    exemplars: figures.exemplars / world.mergeQueues.length,
    bytes: figures.bytes / world.mergeQueues.length,
  });
  return { hours, queues, always: perQueue(totals.always), written: perQueue(totals.written) };
}
