// Page cost: what each merge queue adds to the page Prometheus scrapes, through API v2 with
// discovery, at the default intervals, scraped every 15 s as Prometheus does (OpenMetrics, gzip),
// and the exporter's resident set meanwhile. Per family: its series and its bytes (HELP and TYPE
// included), and of those the bytes of exemplars, divided by the merge queues on the page. A run
// of minutes holds few exemplars, so what they cost once every bucket has had its share is taken
// from hours of the simulator's model, observed and rendered by the exporter's own code.
import type * as FamilyTextModule from '../../src/metrics/familyText.js';
import type * as ExemplarWindowModule from '../../src/metrics/exemplarWindow.js';
import type * as HistogramModule from '../../src/snapshot/histogram.js';
import type * as TestingTypesModule from '../../src/snapshot/testingAttemptTypes.js';
import type { HistogramCounts } from '../../src/snapshot/histogram.js';
import type { TargetStatus } from '../../src/snapshot/types.js';
import type * as WorldModule from '../../src/simulator/world.js';
import { loadBuilt } from './built.ts';
import { imageMallocEnvironment, measureSteadyState } from './memory.ts';
import { simulatedRepositories, type Scale } from './scale.ts';
import { format, megabytes, progress, table } from './stats.ts';

/** Issue 39 item 10's bounds for the whole page divided by the queues. */
const MAX_SERIES_PER_QUEUE = 300;
const MAX_KILOBYTES_PER_QUEUE = 36;
const MAX_RSS_BYTES = 150e6;

/** What one family costs on a page. */
interface FamilyCost {
  name: string;
  series: number;
  bytes: number;
  exemplars: number;
  exemplarBytes: number;
}

/** A page's families with what each costs, and how many merge queues it shows (and how many up). */
export function pageCosts(page: string): { queues: number; up: number; families: FamilyCost[] } {
  const families = new Map<string, FamilyCost>();
  const queues = new Set<string>();
  let up = 0;
  let family: FamilyCost | undefined;
  for (const line of page.split('\n')) {
    if (line === '' || line === '# EOF') continue;
    const help = /^# HELP (\S+)/.exec(line);
    if (help !== null) {
      const name = help[1] ?? '';
      family = families.get(name) ?? { name, series: 0, bytes: 0, exemplars: 0, exemplarBytes: 0 };
      families.set(name, family);
    }
    // OpenMetrics names a counter's family without `_total` (an info's without `_info`): the
    // exporter's name is the one docs/metrics.md lists.
    const type = /^# TYPE \S+ (counter|info)$/.exec(line)?.[1];
    if (
      family !== undefined &&
      type !== undefined &&
      !family.name.endsWith(`_${type === 'counter' ? 'total' : 'info'}`)
    ) {
      family.name += type === 'counter' ? '_total' : '_info';
    }
    if (family === undefined) continue;
    family.bytes += Buffer.byteLength(line) + 1;
    if (line.startsWith('#')) continue;
    family.series += 1;
    // An exemplar follows its sample's value: ` # {…} value [timestamp]` after the closing brace.
    const exemplar = /\} \S+( # \{.*)$/.exec(line)?.[1];
    if (exemplar !== undefined) {
      family.exemplars += 1;
      family.exemplarBytes += Buffer.byteLength(exemplar);
    }
    if (line.startsWith('trunk_exporter_target_up{') && line.includes('kind="merge_queue"')) {
      queues.add(/^[^{]*\{([^}]*),kind=/.exec(line)?.[1] ?? line);
      if (line.endsWith(' 1')) up += 1;
    }
  }
  return { queues: queues.size, up, families: [...families.values()] };
}

/** Exemplars per queue and their bytes, written always and as the exporter writes them. */
interface ExemplarCost {
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
async function exemplarCost(queues: number, hours: number): Promise<ExemplarCost> {
  const { createSimulatorWorld } = await loadBuilt<typeof WorldModule>('simulator/world.js');
  const { emptyHistogram, observe, pullRequestExemplar } =
    await loadBuilt<typeof HistogramModule>('snapshot/histogram.js');
  const { TESTING_DURATION_BUCKETS_SECONDS } = await loadBuilt<typeof TestingTypesModule>(
    'snapshot/testingAttemptTypes.js',
  );
  const { familyText } = await loadBuilt<typeof FamilyTextModule>('metrics/familyText.js');
  const { withRecentExemplars } = await loadBuilt<typeof ExemplarWindowModule>(
    'metrics/exemplarWindow.js',
  );
  const world = createSimulatorWorld({
    seed: 1,
    flavour: 'live',
    repositories: simulatedRepositories({
      queues,
      pullRequestsPerQueue: 30,
      flakyRepositories: 0,
      quarantinedTests: 0,
    }),
    churn: 'normal',
    warmUpSeconds: 600,
  });
  const start = world.now();
  world.advance(start + hours * 3600);
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
  const settings = { mergeQueueIntervalSeconds: 30 } as Parameters<typeof withRecentExemplars>[2];
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
      histograms.set(series, observe(histogram, value, pullRequestExemplar(pr, at)));
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
        samples.map((sample) => ({
          ...sample,
          histogram: recentOnly
            ? withRecentExemplars(sample.histogram, status, settings)
            : sample.histogram,
        })),
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

/** Runs the benchmark; see the module comment. */
export async function run(options: {
  quick: boolean;
}): Promise<{ title: string; markdown: string }> {
  const scale: Scale = options.quick
    ? { queues: 20, pullRequestsPerQueue: 30, flakyRepositories: 1, quarantinedTests: 2000 }
    : { queues: 1000, pullRequestsPerQueue: 30, flakyRepositories: 50, quarantinedTests: 2000 };
  const seconds = options.quick ? 30 : 180;
  progress(`pageCost: ${scale.queues} queues through API v2, scraped every 15 s for ${seconds} s`);
  const steady = await measureSteadyState(scale, seconds, imageMallocEnvironment(), {
    api: 'v2',
    wallClock: true,
  });
  const modelHours = options.quick ? 1 : 6;
  progress(`pageCost: exemplars of ${modelHours} h of the simulator's model`);
  const exemplars = await exemplarCost(options.quick ? 10 : 100, modelHours);
  const { queues, up, families } = pageCosts(steady.lastPage);
  const perQueue = (value: number, decimals = 1): string => format(value / queues, decimals);
  const kilobytes = (bytes: number): string => format(bytes / queues / 1000, 2);
  const total = families.reduce(
    (sum, cost) => ({
      series: sum.series + cost.series,
      bytes: sum.bytes + cost.bytes,
      exemplarBytes: sum.exemplarBytes + cost.exemplarBytes,
    }),
    { series: 0, bytes: 0, exemplarBytes: 0 },
  );
  const rows = families
    .sort((a, b) => b.bytes - a.bytes)
    .map((cost) => [
      `\`${cost.name}\``,
      perQueue(cost.series),
      kilobytes(cost.bytes),
      cost.exemplars === 0
        ? ''
        : `${perQueue(cost.exemplars)} (${kilobytes(cost.exemplarBytes)} KB)`,
    ]);
  const seriesPerQueue = total.series / queues;
  const kilobytesPerQueue = total.bytes / queues / 1000;
  const verdict = (met: boolean): string => (met ? 'met' : '**not met**');
  return {
    title: 'Page per merge queue (API v2)',
    markdown: [
      `${format(queues)} merge queues (${format(scale.queues / 2)} simulated repositories × 2 branches, 30 PRs each, ${format(scale.flakyRepositories)} repositories with ${format(scale.quarantinedTests ?? 0)} quarantined tests), found by discovery and read through API v2 with the API key at the default intervals (merge queues every 30 s, tests every 300 s), by the exporter's command line with the image's malloc settings, scraped every 15 s with Prometheus's \`Accept\` and \`Accept-Encoding\` (OpenMetrics, gzip) for ${format(steady.seconds)} s. The page is the last scrape's, unzipped; each family's series and bytes (its HELP and TYPE lines included) are divided by the merge queues, so a family of the organization or of the exporter adds its share. KB are 1,000 bytes.`,
      '',
      table(
        ['family', 'series per queue', 'KB per queue', 'exemplars per queue (KB)'],
        [
          ...rows,
          [
            '**whole page**',
            `**${perQueue(total.series)}**`,
            `**${kilobytes(total.bytes)}**`,
            `${kilobytes(total.exemplarBytes)} KB`,
          ],
        ],
      ),
      '',
      `The page: ${format(total.series)} series, ${megabytes(total.bytes)}; ${format(up)} of the ${format(queues)} merge queues up at the last scrape (a poll running past its interval makes its target down: a machine too busy to poll every queue each 30 s holds more in flight). RSS over the run, read every 5 s after a warm-up of ${format(steady.warmUpSeconds)} s (${format(steady.samples)} samples, ${format(steady.scrapes)} scrapes): min ${megabytes(steady.min)}, median **${megabytes(steady.median)}**, max **${megabytes(steady.max)}**, peak (VmHWM, start-up included) ${megabytes(steady.peak)}.`,
      '',
      `**Exemplars.** A run of minutes holds few: each bucket keeps the exemplar of its latest observation. After ${format(exemplars.hours)} h of the simulator's model (${format(exemplars.queues)} queues at the default interval; each queue's exits and testing attempts observed into the exporter's histograms and rendered by its engine), written on every scrape for ever they would be ${format(exemplars.always.exemplars, 1)} per queue (${format(exemplars.always.bytes / 1000, 2)} KB, more as rarer buckets fill); written as the exporter writes them, until an hour after the latest poll that could count their event, ${format(exemplars.written.exemplars, 1)} (${format(exemplars.written.bytes / 1000, 2)} KB).`,
      '',
      "**Before.** The same run of commit d4f9ec6 (every state, outcome and bisection combination written at 0; 14 bounds for time in queue and in state, 13 for testing duration), measured the same way right after the run of 2026-11-28 14:10 of this build (load about 6 for both): 269.7 series and 34.74 KB per queue, RSS median 190.2 MB, max 197.7 MB; this build: 198.6 series and 25.32 KB, RSS median 182.7 MB, max 191.9 MB. The page is no longer what holds the memory: after a forced garbage collection at the end of a run of this build, 80 MB of heap stays in use, of which about 25 MB are the 90,000 tests of the organization's lists as parsed (50 repositories × 2,000 quarantined tests; each with its repository id, owners and two timestamps as strings of their own), which `src/poller/v2TestDirectory.ts` keeps between two reads of the list (and a second copy while the next read runs). Interning the repository ids and owner names as they are parsed took 8 MB off that heap (measured, not kept: the list itself is what should go).",
      '',
      `Against the targets (issue 39 item 10): at most ${format(MAX_SERIES_PER_QUEUE)} series per queue, ${verdict(seriesPerQueue <= MAX_SERIES_PER_QUEUE)} (${format(seriesPerQueue, 1)}); at most ${format(MAX_KILOBYTES_PER_QUEUE)} KB per queue, ${verdict(kilobytesPerQueue <= MAX_KILOBYTES_PER_QUEUE)} (${format(kilobytesPerQueue, 2)} KB); RSS maximum under ${megabytes(MAX_RSS_BYTES)}, ${verdict(steady.max < MAX_RSS_BYTES)} (${megabytes(steady.max)}).`,
    ].join('\n'),
  };
}

// `node scripts/bench/pageCost.ts [--quick]`: this section alone, printed rather than written to
// docs/benchmarks.md, against this checkout's dist/.
if (import.meta.main) {
  const { title, markdown } = await run({ quick: process.argv.includes('--quick') });
  console.log(`## ${title}\n\n${markdown}`);
}
