// Page cost: what each merge queue adds to the page Prometheus scrapes, through API v2 with
// discovery and every optional read on (its defaults), at the default intervals, scraped every 15 s
// as Prometheus does (OpenMetrics, gzip), for ten minutes (two reads of the test lists, a few
// hundred verification runs), and the exporter's resident set meanwhile. Per family: its series
// and its bytes (HELP and TYPE included), and of those the bytes of exemplars, divided by the merge
// queues on the page. A run of minutes holds few exemplars and not every combination a queue
// reaches, so what they come to over hours is taken from the simulator's model.
import { exemplarCost } from './exemplarCost.ts';
import { imageMallocEnvironment, measureSteadyState } from './memory.ts';
import { modelHours } from './modelHours.ts';
import { pageCosts } from './pageFamilies.ts';
import type { Scale } from './scale.ts';
import { format, megabytes, progress, table } from './stats.ts';
import { steadyCombinations } from './steadyCombinations.ts';

/** Issue 39 item 10's bounds for the whole page divided by the queues. */
const MAX_SERIES_PER_QUEUE = 300;
const MAX_KILOBYTES_PER_QUEUE = 36;
const MAX_RSS_BYTES = 150e6;

/** Runs the benchmark; see the module comment. */
export async function run(options: {
  quick: boolean;
}): Promise<{ title: string; markdown: string }> {
  const scale: Scale = options.quick
    ? { queues: 20, pullRequestsPerQueue: 30, flakyRepositories: 1, quarantinedTests: 2000 }
    : { queues: 1000, pullRequestsPerQueue: 30, flakyRepositories: 50, quarantinedTests: 2000 };
  const seconds = options.quick ? 30 : 600;
  progress(`pageCost: ${scale.queues} queues through API v2, scraped every 15 s for ${seconds} s`);
  const steady = await measureSteadyState(scale, seconds, imageMallocEnvironment(), {
    api: 'v2',
    wallClock: true,
  });
  progress(`pageCost: exemplars and combinations of hours of the simulator's model`);
  const model = await modelHours(options.quick ? 10 : 100, options.quick ? 1 : 6);
  const exemplars = await exemplarCost(model);
  const combinations = steadyCombinations(model);
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
      `**Combinations over hours.** What ${format(model.hours)} h of the simulator's model (${format(model.queues)} queues) give each queue on average, the count of each histogram's and reason family's label combinations in its steady state (docs/metrics.md#what-a-queue-costs turns them into series): ${Object.entries(
        combinations,
      )
        .map(([kind, perQueue]) => `${kind} ${format(perQueue, 2)}`)
        .join('; ')}.`,
      '',
      `**Exemplars.** A run of minutes holds few: each bucket keeps the exemplar of its latest observation. After ${format(exemplars.hours)} h of the simulator's model (${format(exemplars.queues)} queues at the default interval; each queue's exits and testing attempts observed into the exporter's histograms and rendered by its engine), written on every scrape for ever they would be ${format(exemplars.always.exemplars, 1)} per queue (${format(exemplars.always.bytes / 1000, 2)} KB, more as rarer buckets fill); written as the exporter writes them, until an hour after the latest poll that could count their event, ${format(exemplars.written.exemplars, 1)} (${format(exemplars.written.bytes / 1000, 2)} KB).`,
      '',
      "**Before.** Commit 23689ec (10 bounds for time in queue and in state, for testing and run duration and for batch size; every priority of a queued state written at 0; each repository's parsed tests kept from one read of the organization's lists to the next), the same run for 180 s (2026-11-28 15:20, load about 10, 574 of 1,000 queues up at the last scrape): 226.5 series and 28.91 KB per queue, RSS median 213.0 MB, max 220.7 MB. With only the test lists summarised as they are read, the same 180 s (15:42, load about 15): RSS median 165.6 MB, max 169.7 MB. What the heap then holds (a heap snapshot of the exporter after 150 s at 1,000 queues, 81 MB in use): the snapshots and flow ledgers 21 MB (the 30,000 pull requests 4.9 MB, their flow tracking 3.0 MB, testing and run histograms 3.1 MB, the runs in progress 0.7 MB), the page cache 13 MB (each target's rendered bytes 5.2 MB, the last page written 4.7 MB), the source text of the modules about 7 MB; the organization's tests no longer appear. All measured on a shared machine of 2 cores under that load: a poll running past its interval holds its answers the longer.",
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
