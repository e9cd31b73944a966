// Cycle time: how close one merge-queue polling cycle comes to the floor set by the API's latency
// and the client's concurrency. R calls at concurrency C, each answered after L, cannot take less
// than ceil(R / C) × L. The cycle is driven through the real poll jobs (getQueue, then the PR
// lookups), the real TrunkClient with its limiter and connection pool, against a simulator in its
// own process whose every answer waits L.
import type * as LoadModule from '../../src/config/load.js';
import type * as LoggerModule from '../../src/log/logger.js';
import type * as TargetsModule from '../../src/config/targets.js';
import type * as JobsModule from '../../src/poller/jobs/targetJobs.js';
import type * as StoreModule from '../../src/snapshot/store.js';
import type * as ClientModule from '../../src/trunk/client.js';
import { loadBuilt } from './built.ts';
import { startSimulatorProcess } from './processes.ts';
import { configYaml, type Scale } from './scale.ts';
import { format, median, progress, table } from './stats.ts';

interface CycleSetting {
  readonly scale: Scale;
  readonly latencyMs: number;
  readonly concurrency: number;
  readonly flavour: 'documented' | 'live';
  /** polling.pullRequestRecheckSeconds (0: every PR looked up on every poll). */
  readonly pullRequestRecheckSeconds: number | undefined;
}

interface CycleRun {
  readonly seconds: number;
  readonly calls: number;
  readonly getQueueCalls: number;
  readonly idealSeconds: number;
}

/** Runs the benchmark; see the module comment. */
export async function run(options: {
  quick: boolean;
}): Promise<{ title: string; markdown: string }> {
  const runs = options.quick ? 1 : 3;
  const sized = (queues: number): Scale => ({
    queues,
    pullRequestsPerQueue: 30,
    flakyRepositories: 0,
    quarantinedTests: 0,
  });
  const settings: CycleSetting[] = [
    // The live API puts each PR's state in the queue item: in a steady state only new or changed
    // not_ready PRs (and rechecks) are looked up, so the cycle is mostly getQueue calls.
    {
      scale: sized(options.quick ? 100 : 1000),
      latencyMs: 100,
      concurrency: 32,
      flavour: 'live',
      pullRequestRecheckSeconds: undefined,
    },
    // The worst case: the documented shape (no state in the item) with every PR looked up on every
    // poll (pullRequestRecheckSeconds 0), as on a first cycle: 31 calls per queue, 31,000 in all.
    {
      scale: sized(options.quick ? 50 : 1000),
      latencyMs: 100,
      concurrency: 128,
      flavour: 'documented',
      pullRequestRecheckSeconds: 0,
    },
  ];
  const rows: string[][] = [];
  for (const setting of settings) {
    const results = await measure(setting, runs);
    const ratios = results.map((result) => result.seconds / result.idealSeconds);
    const first = results[0];
    if (first === undefined) continue;
    rows.push([
      setting.flavour,
      format(setting.scale.queues),
      `${setting.latencyMs} ms`,
      String(setting.concurrency),
      `${format(first.getQueueCalls)} + ${format(median(results.map((r) => r.calls - r.getQueueCalls)))}`,
      `${format(median(results.map((r) => r.idealSeconds)), 2)} s`,
      `${format(median(results.map((r) => r.seconds)), 2)} s`,
      `**${format(median(ratios), 3)}**`,
      ratios.map((ratio) => format(ratio, 3)).join(', '),
    ]);
  }
  const markdown = [
    `Every merge-queue target polled once (getQueue, then getSubmittedPullRequest for the PRs that need it) through the real poll jobs and TrunkClient (\`maxConcurrentRequests\` = C, \`maxRequestsPerSecond\` = 1,000,000 so only concurrency limits), against the simulator in its own process answering every call after L. 30 PRs per queue. Ideal = ceil(R / C) × L for the R calls the cycle made. One warm-up cycle first, then the median of ${runs} cycle(s). The live row is a steady state with the lookup memory at its default (\`pullRequestRecheckSeconds\` 300: only new or changed PRs are looked up); the documented row is the worst case, every PR looked up on every poll (\`pullRequestRecheckSeconds: 0\`, as on a first cycle). \`npm run bench\` runs under V8's \`--optimize-for-size\`, as the \`trunk-exporter\` command does.`,
    '',
    table(
      [
        'API shape',
        'targets',
        'L',
        'C',
        'calls R (getQueue + lookups)',
        'ideal',
        'measured',
        'measured / ideal',
        'runs',
      ],
      rows,
    ),
    '',
    '**How it scales.** R is one getQueue per target plus one lookup per PR that needs one, so the floor grows linearly with targets × PRs looked up, divided by C. What the client adds is CPU per call (socket writes, JSON parsing, zod validation, garbage collection), which overlaps with the latency as long as C / L stays well below the calls per second the CPU can handle. With L = 0 a 31,000-call cycle takes about 6.7 s here (client and simulator sharing the two CPUs, 2026-11-21; it was about 14 s before the changes below); that is the limit a shorter latency or a higher C runs into.',
    '',
    "**What was fixed on the way.** Each of these was the top item of a CPU or allocation profile of the documented row. (1) The request limiter queued waiting requests in an array and handed a freed slot to the next one with `Array#shift`, which copies the whole array once it is long; it now keeps them in an insertion-ordered `Set`. (2) Every waiting request added its own abort listener to its poll's signal, and `EventTarget` walks the whole listener list on every add; a poll now has at most four requests waiting (`poller/lookupFanOut.ts`), so each list stays short. (3) At more than 1,000 requests a second the limiter's spacing is finer than a millisecond, yet it slept a whole one for it; it now starts such a request at once. (4) The transport built a composite `AbortSignal.any()` per attempt and read each body through undici's `request()` stream; it now listens on the caller's signal and reads through a dispatch handler (`src/trunk/responseCollector.ts`). (5) The client joins the caller's signal with its own once per poll, not once per call. The polls are two-phase (getQueue, then lookups); at most max(16, ⌈5C / 16⌉) are in progress, and one makes room for the next once it has sent its last lookup, so the next getQueue goes out beside those lookups (see “Poll path beside commit 9bea266”). In the live row nearly every poll is a single getQueue, and each of the 16 polls at once (C = 32) keeps its place until that is answered: at most 16 of the 32 slots are busy, hence about 2 × the ideal there. In steady state, polls fall due spread over their interval and rarely meet the bound. The scheduler spreads first polls over up to 2 s; this benchmark leaves that out by running the poll jobs directly, each with its own abort signal as the scheduler gives it (in steady state each target's cycle starts when its own interval comes round).",
    '',
    "**The V8 flag.** The `trunk-exporter` command sets V8's `--optimize-for-size` at run time (`src/cli/v8Flags.ts`; see Memory), and `npm run bench` sets it the same way before the code under test loads. In this cycle it makes garbage collection about 40 % of the busy CPU (CPU profile of the documented row, 2026-11-21). On the same machine within the same hour the documented row measured 1.05 × without the flag and 1.11 × with it (two runs each, medians of 3 cycles), so the flag costs about 6 % of cycle time in exchange for the memory it saves.",
  ].join('\n');
  return { title: 'Cycle time', markdown };
}

async function measure(setting: CycleSetting, runs: number): Promise<CycleRun[]> {
  const { parseConfig } = await loadBuilt<typeof LoadModule>('config/load.js');
  const { silentLogger } = await loadBuilt<typeof LoggerModule>('log/logger.js');
  const { configuredTargets } = await loadBuilt<typeof TargetsModule>('config/targets.js');
  const { buildPollJobs } = await loadBuilt<typeof JobsModule>('poller/jobs/targetJobs.js');
  const { SnapshotStore } = await loadBuilt<typeof StoreModule>('snapshot/store.js');
  const { TrunkClient } = await loadBuilt<typeof ClientModule>('trunk/client.js');

  progress(
    `cycle time: ${setting.scale.queues} queues, ${setting.flavour} shape, L=${setting.latencyMs}ms, C=${setting.concurrency}`,
  );
  const simulator = await startSimulatorProcess({
    scale: setting.scale,
    flavour: setting.flavour,
    latencyMs: setting.latencyMs,
    churn: 'normal',
  });
  try {
    const config = await parseConfig(
      configYaml(setting.scale, {
        apiUrl: simulator.baseUrl,
        port: 0,
        maxConcurrentRequests: setting.concurrency,
        maxRequestsPerSecond: 1_000_000,
        mergeQueueIntervalSeconds: 3600,
        flakyTestsIntervalSeconds: 3600,
        ...(setting.pullRequestRecheckSeconds === undefined
          ? {}
          : { pullRequestRecheckSeconds: setting.pullRequestRecheckSeconds }),
      }),
      { source: 'bench.yaml', env: {} },
    );
    const calls = { total: 0, getQueue: 0 };
    const client = new TrunkClient({
      apiUrl: config.trunk.apiUrl,
      token: config.trunk.token,
      timeoutSeconds: 60,
      maxConcurrentRequests: setting.concurrency,
      maxRequestsPerSecond: 1_000_000,
      observer: {
        requestFinished(endpoint) {
          calls.total++;
          if (endpoint === 'getQueue') calls.getQueue++;
        },
        schemaMismatch() {},
        anomaly() {},
      },
      logger: silentLogger(),
    });
    const store = new SnapshotStore(3600);
    store.setTargets(configuredTargets(config));
    // One signal per job, as the scheduler gives each job its own controller.
    const jobs = buildPollJobs({ config, reader: client, store, logger: silentLogger() })
      .filter((job) => job.key.startsWith('merge_queue'))
      .map((job) => ({ job, signal: new AbortController().signal }));
    const results: CycleRun[] = [];
    for (let index = 0; index <= runs; index++) {
      calls.total = 0;
      calls.getQueue = 0;
      const started = performance.now();
      await Promise.all(jobs.map(({ job, signal }) => job.run(signal)));
      const seconds = (performance.now() - started) / 1000;
      const failed = store.statuses().filter((status) => status.up !== true).length;
      if (failed > 0) throw new Error(`${failed} targets failed their poll during the cycle`);
      const idealSeconds =
        (Math.ceil(calls.total / setting.concurrency) * setting.latencyMs) / 1000;
      // Run 0 opens the connections and warms the JIT; it is not reported.
      if (index > 0) {
        results.push({ seconds, calls: calls.total, getQueueCalls: calls.getQueue, idealSeconds });
        progress(
          `  run ${index}: ${format(calls.total)} calls in ${format(seconds, 2)} s, ideal ${format(idealSeconds, 2)} s`,
        );
      }
    }
    await client.close();
    return results;
  } finally {
    await simulator.stop();
  }
}
