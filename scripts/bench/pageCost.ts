// Page cost: what each merge queue adds to the page Prometheus scrapes, through API v2 with
// discovery and every optional read on (its defaults), at the default intervals, scraped every 15 s
// as Prometheus does (OpenMetrics, gzip), for ten minutes (two reads of the test lists, a few
// hundred verification runs), and the exporter's resident set meanwhile. Per family: its series
// and its bytes (HELP and TYPE included), and of those the bytes of exemplars, divided by the merge
// queues on the page. A run of minutes holds few exemplars and not every combination a queue
// reaches, so what they come to over hours is taken from the simulator's model.
import { exemplarCost } from './exemplarCost.ts';
import { imageEnvironment, measureSteadyState } from './memory.ts';
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
  const steady = await measureSteadyState(scale, seconds, imageEnvironment(), {
    api: 'v2',
    wallClock: true,
  });
  progress(`pageCost: exemplars and combinations of hours of the simulator's model`);
  const model = await modelHours(options.quick ? 10 : 100, options.quick ? 1 : 6);
  const exemplars = await exemplarCost(model);
  const combinations = steadyCombinations(model);
  const { queues, up, flakyTargets, flakyUp, families } = pageCosts(steady.lastPage);
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
      `The page: ${format(total.series)} series, ${megabytes(total.bytes)}; ${format(up)} of the ${format(queues)} merge queues and ${format(flakyUp)} of the ${format(flakyTargets)} flaky-tests targets up at the last scrape (a poll running past its interval makes its target down: a machine too busy to poll every queue each 30 s holds more in flight). RSS over the run, read every 5 s after a warm-up of ${format(steady.warmUpSeconds)} s (${format(steady.samples)} samples, ${format(steady.scrapes)} scrapes): min ${megabytes(steady.min)}, median **${megabytes(steady.median)}**, max **${megabytes(steady.max)}**, peak (VmHWM, start-up included) ${megabytes(steady.peak)}; over the samples RSS rose by ${megabytes(steady.risePerHour)} an hour (least squares): the run ends before the process levels off (see “Over hours”).`,
      '',
      `**Combinations over hours.** What ${format(model.hours)} h of the simulator's model (${format(model.queues)} queues) give each queue on average, the count of each histogram's and reason family's label combinations in its steady state (docs/metrics.md#what-a-queue-costs turns them into series): ${Object.entries(
        combinations,
      )
        .map(([kind, perQueue]) => `${kind} ${format(perQueue, 2)}`)
        .join('; ')}.`,
      '',
      `**Exemplars.** A run of minutes holds few: each bucket keeps the exemplar of its latest observation. After ${format(exemplars.hours)} h of the simulator's model (${format(exemplars.queues)} queues at the default interval; each queue's exits and testing attempts observed into the exporter's histograms and rendered by its engine), written on every scrape for ever they would be ${format(exemplars.always.exemplars, 1)} per queue (${format(exemplars.always.bytes / 1000, 2)} KB, more as rarer buckets fill); written as the exporter writes them, until an hour after the latest poll that could count their event, ${format(exemplars.written.exemplars, 1)} (${format(exemplars.written.bytes / 1000, 2)} KB).`,
      '',
      "**Before.** Commit 418aa23 (before a walk kept the ids it met in a table of doubles sized for the previous walk of its list, where a `Set` kept each hash as a heap number and left each outgrown table in V8's large-object space until a full collection, and before the tests' times were counted without filtered copies), the same run (2026-11-29 00:30–00:43, quiet): 228.6 series and 29.54 KB per queue, RSS median 160.1 MB, max 173.8 MB, peak 195.9 MB. The same change in a scratch probe of this world (330 s each, one after the other, 2026-11-29 01:20–01:33, a log of V8's spaces every 5 s): at the peak of the walk of the 100,000 quarantined tests the JS heap used 84.7 → 70.3 MB and the large objects 6.2 → 0.9 MB, but RSS as before (169–174 MB in the 5 s samples around the walk, against 165–169 MB between walks): what the walk adds now is V8's young generation (4 → 8 MB) and old space taken for objects promoted while it runs (+5 to +9 MB, collected afterwards), and array buffers (+6 MB). Commit eab4be7 (before a block held the only copy of its targets' bytes: each target kept its own as well, 4.7 MB here), the same run (2026-11-28 23:00–23:13, quiet): 228.8 series and 29.55 KB per queue, RSS median 167.9 MB, max 180.2 MB, peak 198.9 MB. Commit be2429b (before a scrape sent the page as its blocks rather than copied into one buffer, and before a walk kept the test ids it met as 53-bit hashes rather than the ids), the same run (2026-11-28 20:05–20:17, quiet): 228.7 series and 29.55 KB per queue, RSS median 173.5 MB, max 197.8 MB, peak 212.5 MB. The same two changes in a scratch probe of this world (330 s each, one after the other, 2026-11-28 22:43–22:59, a log of V8's spaces every 5 s): median 170.3 → 163.1 MB, max 195.3 → 179.9 MB; the array buffers 18–21 MB → 12–16 MB between walks (one copy of the 4.7 MB gzip page fewer, and none made beside the last while a page is written), and the walk of the 100,000 quarantined tests (every 300 s, the maximum) +25 → +20 MB: V8's young generation grows to 10–13 MB and its old space by 10 MB during a walk, the JSON of each page of tests and its parse. Commit a9562ed (before a test listed twice in one walk counted once: the walk now keeps the ids it met, about 100,000 here), the same run (2026-11-28 18:54–19:06, quiet): 228.6 series and 29.54 KB per queue, RSS median 172.9 MB, max 186.3 MB, peak 197.2 MB. Commit f2d6fcb, the same run (2026-11-28 17:16–17:28, load 2–14): 228.8 series and 29.57 KB per queue, RSS median 180.4 MB, max 240.8 MB. Since then each organization-wide test list is tallied page by page as it is walked (`src/poller/v2/v2TestSummaries.ts`), where a walk held every parsed test until its end: at the largest size the heap grew by about 60 MB during each walk of the 100,000 quarantined tests and the flaky ones (every 300 s, and at start-up), which made the maximum; and the exporter makes no locale-aware call, whose first use maps about 6 MB of ICU's data from the `node` binary (lint forbids them in `src/`). Commit 23689ec (10 bounds for time in queue and in state, for testing and run duration and for batch size; every priority of a queued state written at 0; each repository's parsed tests kept from one read of the organization's lists to the next), the same run for 180 s (2026-11-28 15:20, load about 10): 226.5 series and 28.91 KB per queue, RSS median 213.0 MB, max 220.7 MB. What the process holds now (`/proc/<pid>/smaps` and a heap snapshot after 450 s at 1,000 queues, 2026-11-28 19:15): 54 MB of the `node` binary's own pages (34.5 MB for `node` doing nothing), about 30 MB of malloc's heap and 80 MB of anonymous mappings; in the JS heap 67 MB after a full collection: strings 15 MB (module sources among them), bytecode and code 10 MB, objects and arrays 24 MB (the snapshots and flow ledgers, each map of a queue's ledger under 1 MB for the 1,000 queues), and 19.6 MB of buffers (each target's rendered bytes, the blocks joined from them and the last page written, 4.7 MB each; the last page is no longer written). A heap snapshot of commit 5e328d6 after 200 s at 1,000 queues (2026-11-28 23:41, between walks; 74 MB of JS heap): module sources 9 MB (Node.js's own about half), 32,000 `Map`s 7.5 MB (about 25 a queue in the flow ledgers, most with a few entries, about 180 bytes each even when empty), 150,000 plain objects 8.8 MB (the live entries 2.2 MB, their tracked states 1.9 MB), 40,000 UUIDs 2.3 MB, and 11.7 MB of buffers (each target's bytes and the blocks, 4.7 MB each). No one of them is the 30 MB the target needs; the next cuts by size are the maps a ledger keeps empty (shared rather than one per queue) and a bundled, minified build (our modules' sources are about 3.4 MB). Measured and not kept: the two organization-wide walks one after the other rather than side by side (a scratch probe of 330 s at 252b2af, 00:02–00:08: median 162.6 MB, max 176.7 MB, against 163.1 and 179.9 MB for the same code with them side by side at 22:52), within the noise, and a list slow to answer would hold the other back. V8's `--max-opt=2` (no TurboFan; the same probe at 8449839, 00:03–00:09): median 159.5 MB, max 185.1 MB, the `node` binary's pages 51.5 MB against 54.1 MB: a few MB off the median, none off the maximum, for slower optimized code. The pages of each test walk taken 15 ms apart (00:15–00:21): median 162.5 MB, max 183.3 MB, the walk's rise as before (about +14 MB, the young generation at 7.6 MB and the large objects at 6.2 MB): the rise is not the pace of the walk's allocations. Measured and not kept: V8's `--max-semi-space-size=1` (RSS median 175.2 MB, max 188.8 MB, against 174.8 MB and 191.2 MB the same hour, 360 s each); `MALLOC_ARENA_MAX=1` with `MALLOC_TRIM_THRESHOLD_=65536` (median 165.2 MB, max 182.3 MB: within a few MB, one run); a full collection every 15 s (`--expose-gc`, a scratch preload; median 168.2 MB, max 184.9 MB): what remains is live, not garbage; V8's `--optimize-for-size` at commit 72ba992 (median 166.8 MB, max 191.4 MB, against 166.9 MB and 199.4 MB without it the same half hour, 360 s each, 2026-11-28 21:16–21:29): the same median.",
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
