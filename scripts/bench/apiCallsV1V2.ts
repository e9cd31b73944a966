// Benchmark: Trunk API calls per merge-queue cycle through API v1 (the token) and API v2 (the key)
// for the same simulated world: 1,000 queues of 30 PRs (500 repositories × 2 branches), polled by
// the real poll jobs and TrunkClient against the real simulator over loopback, the world moving one
// poll interval between cycles. Calls are counted where they arrive (the simulator's requestCounts).
//
// Runs on the built code (dist/): `npm run build && node scripts/bench/apiCallsV1V2.ts [--quick]`
// prints the markdown section; `run()` is what a benchmark runner calls.
import { fileURLToPath } from 'node:url';
import { benchExporterConfig, type BenchConfigOptions } from './benchConfig.ts';
import { loadBuilt } from './built.ts';
import { readTable, tallyReads } from './readTally.ts';

import type * as ConfigSecret from '../../src/secrets/secret.js';
import type * as ConfigTargets from '../../src/config/targets.js';
import type * as Logging from '../../src/log/logger.js';
import type * as TargetJobs from '../../src/poller/jobs/targetJobs.js';
import type * as ExitRead from '../../src/poller/v2/v2ExitLookup.js';
import type * as QueueDirectory from '../../src/poller/v2/v2QueueDirectory.js';
import type * as TestDirectory from '../../src/poller/v2/v2TestDirectory.js';
import type * as EntryHistoryRead from '../../src/poller/v2/v2QueueEntryHistoryRead.js';
import type * as V2Reads from '../../src/poller/v2/v2Reads.js';
import type * as SimulatorServer from '../../src/simulator/server.js';
import type * as SimulatorWorld from '../../src/simulator/world.js';
import type * as Store from '../../src/snapshot/store.js';
import type * as Client from '../../src/trunk/client.js';
import type * as V2Client from '../../src/trunk/v2Client.js';
import type * as Observer from '../../src/trunk/observer.js';

const TOKEN = 'bench-token';
const API_KEY = 'trunk_v2_bench-key';
const INTERVAL_SECONDS = 30;
const PULL_REQUESTS_PER_QUEUE = 30;

async function loadModules() {
  return {
    secret: await loadBuilt<typeof ConfigSecret>('secrets/secret.js'),
    targets: await loadBuilt<typeof ConfigTargets>('config/targets.js'),
    targetJobs: await loadBuilt<typeof TargetJobs>('poller/jobs/targetJobs.js'),
    exitRead: await loadBuilt<typeof ExitRead>('poller/v2/v2ExitLookup.js'),
    directory: await loadBuilt<typeof QueueDirectory>('poller/v2/v2QueueDirectory.js'),
    tests: await loadBuilt<typeof TestDirectory>('poller/v2/v2TestDirectory.js'),
    history: await loadBuilt<typeof EntryHistoryRead>('poller/v2/v2QueueEntryHistoryRead.js'),
    v2Reads: await loadBuilt<typeof V2Reads>('poller/v2/v2Reads.js'),
    store: await loadBuilt<typeof Store>('snapshot/store.js'),
    client: await loadBuilt<typeof Client>('trunk/client.js'),
    v2Client: await loadBuilt<typeof V2Client>('trunk/v2Client.js'),
    observer: await loadBuilt<typeof Observer>('trunk/observer.js'),
    logger: await loadBuilt<typeof Logging>('log/logger.js'),
    server: await loadBuilt<typeof SimulatorServer>('simulator/server.js'),
    world: await loadBuilt<typeof SimulatorWorld>('simulator/world.js'),
  };
}
type Modules = Awaited<ReturnType<typeof loadModules>>;

interface CycleCounts {
  readonly queues: number;
  readonly enqueued: number;
  /** Per steady-state cycle, by endpoint (the simulator's names). */
  readonly byEndpoint: Record<string, number>;
  readonly total: number;
  /** Testing-results reads the simulator answered with a 404 for want of a route. */
  readonly unservedTestingReads: boolean;
  /** API v2: per steady-state cycle, by the read that made them (readTally.ts). */
  readonly byRead: Record<string, number>;
  /** API v2: pull requests the queue-entry histories asked for, per steady-state cycle. */
  readonly historyIds: number;
}

type ReadsOff = NonNullable<BenchConfigOptions['readsOff']>;

const TESTING_RESULTS = '/v2/merge-queues/{id}/testing-results';
/** A testing-results path the simulator counted as itself: it has no route for the endpoint. */
const UNROUTED_TESTING_RESULTS = /^\/v2\/merge-queues\/[^/{}]+\/testing-results$/;

async function measure(
  modules: Modules,
  api: 'v1' | 'v2',
  repositoryCount: number,
  cycles: number,
  readsOff: ReadsOff = [],
): Promise<CycleCounts> {
  const repositories = Array.from({ length: repositoryCount }, (_, index) => ({
    host: 'github.com',
    owner: 'acme',
    name: `service-${index}`,
    branches: ['main', 'release'],
    pullRequestsPerQueue: PULL_REQUESTS_PER_QUEUE,
  }));
  const world = modules.world.createSimulatorWorld({
    seed: 2026,
    flavour: 'documented',
    repositories,
  });
  const simulator = await modules.server.startSimulatorServer({
    world,
    token: TOKEN,
    apiKey: API_KEY,
  });
  const secret = (value: string) => new modules.secret.Secret(value);
  const config = benchExporterConfig({
    apiUrl: simulator.origin,
    token: api === 'v1' ? secret(TOKEN) : undefined,
    apiKey: api === 'v2' ? secret(API_KEY) : undefined,
    timeoutSeconds: 30,
    mergeQueueIntervalSeconds: INTERVAL_SECONDS,
    repositories,
    flakyTests: false,
    readsOff,
  });
  const logger = modules.logger.silentLogger();
  const client = new modules.client.TrunkClient({
    apiUrl: config.trunk.apiUrl,
    token: config.trunk.token,
    apiKey: config.trunk.apiKey,
    timeoutSeconds: config.trunk.timeoutSeconds,
    maxConcurrentRequests: config.trunk.maxConcurrentRequests,
    maxRequestsPerSecond: config.trunk.maxRequestsPerSecond,
    observer: modules.observer.noopApiCallObserver,
    logger,
  });
  const reads = tallyReads(client, modules.v2Reads);
  const v2 = new modules.v2Client.TrunkV2Client(client);
  const store = new modules.store.SnapshotStore(config.polling.staleAfterSeconds);
  const targets = modules.targets.configuredTargets(config);
  store.setTargets(targets);
  // The simulated clock: the list of queues is read once per simulated interval, as in production.
  const now = () => world.now();
  const jobs = modules.targetJobs.buildPollJobs({
    config,
    reader: client,
    store,
    logger,
    now,
    v2: {
      reader: v2,
      directory: new modules.directory.V2QueueDirectory(v2, INTERVAL_SECONDS, now),
      tests: new modules.tests.V2TestDirectory(
        { lister: v2, maxAgeSeconds: 300, lookupsAtATime: 4 },
        now,
      ),
      history: new modules.history.QueueEntryHistoryReads(
        v2,
        { maxAgeSeconds: INTERVAL_SECONDS, staleAfterSeconds: config.polling.staleAfterSeconds },
        now,
      ),
    },
  });
  const controller = new AbortController();
  const byEndpoint: Record<string, number> = {};
  let enqueued = 0;
  let unservedTestingReads = false;
  try {
    for (let cycle = 0; cycle <= cycles; cycle++) {
      if (cycle > 0) world.advance(world.now() + INTERVAL_SECONDS);
      simulator.resetRequestCounts();
      await Promise.all(jobs.map((job) => job.run(controller.signal)));
      // Counted from here on: the histories' calls go on after the polls that asked for them.
      if (cycle === 0) reads.reset();
      if (cycle === 0) continue;
      for (const [path, count] of Object.entries(simulator.requestCounts())) {
        // Each unrouted path is counted on its own: one endpoint, whatever the queue.
        const unrouted = UNROUTED_TESTING_RESULTS.test(path);
        unservedTestingReads ||= unrouted;
        const endpoint = unrouted ? TESTING_RESULTS : path;
        byEndpoint[endpoint] = (byEndpoint[endpoint] ?? 0) + count;
      }
      enqueued += store
        .statuses()
        .reduce(
          (sum, { snapshot }) =>
            sum + (snapshot?.kind === 'merge_queue' ? snapshot.pullRequests.length : 0),
          0,
        );
    }
  } finally {
    controller.abort();
    await client.close();
    await simulator.close();
  }
  const perCycle = Object.fromEntries(
    Object.entries(byEndpoint).map(([endpoint, count]) => [endpoint, count / cycles]),
  );
  return {
    queues: targets.length,
    enqueued: enqueued / cycles / targets.length,
    byEndpoint: perCycle,
    total: Object.values(perCycle).reduce((sum, count) => sum + count, 0),
    unservedTestingReads,
    byRead: Object.fromEntries(
      Object.entries(reads.calls()).map(([read, count]) => [read, count / cycles]),
    ),
    historyIds: reads.historyIds() / cycles,
  };
}

const fixed = (value: number, digits = 2) => value.toFixed(digits);

/** Runs the benchmark and returns its section of the report. */
export async function run(options: {
  quick: boolean;
  /** API v2 reads turned off (all on by default, as `npm run bench` runs it). */
  readsOff?: ReadsOff;
}): Promise<{ title: string; markdown: string }> {
  const modules = await loadModules();
  const repositories = options.quick ? 50 : 500;
  const cycles = options.quick ? 5 : 10;
  // Two whole periods of the quiet queues' exit reads, which every v2 cycle average must include.
  const periodic = modules.exitRead.PERIODIC_EXIT_READ_POLLS;
  const v2Cycles = options.quick ? periodic : 2 * periodic;
  const v1 = await measure(modules, 'v1', repositories, cycles);
  const v2 = await measure(modules, 'v2', repositories, v2Cycles, options.readsOff);
  const row = (name: string, counts: CycleCounts) =>
    `| ${name} | ${counts.queues} | ${fixed(counts.enqueued, 1)} | ${Object.entries(
      counts.byEndpoint,
    )
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([endpoint, count]) => `\`${endpoint}\` ${fixed(count, 1)}`)
      .join(', ')} | ${fixed(counts.total, 1)} | **${fixed(counts.total / counts.queues)}** |`;
  const listPages = v2.byEndpoint['/v2/merge-queues'] ?? 0;
  const testingReads = v2.byEndpoint[TESTING_RESULTS] ?? 0;
  const unserved = v2.unservedTestingReads
    ? ' **The simulator does not serve testing results yet**: each read was answered 404 and counted where it arrived, one call per read, as a served read is while fewer than 100 attempts end between two reads; run this benchmark again once it serves them.'
    : '';
  const markdown = [
    `${v1.queues} merge queues (${repositories} simulated repositories × 2 branches, ${PULL_REQUESTS_PER_QUEUE} PRs each, seed 2026, documented shape), ` +
      `polled every ${INTERVAL_SECONDS} s of simulated time for ${cycles} cycles (v1) and ${v2Cycles} cycles (v2) after one cold cycle, by the real poll jobs and TrunkClient against the simulator over loopback; ` +
      'calls counted at the simulator, per steady-state cycle. v1: the token (getQueue, then getSubmittedPullRequest for new or changed PRs that need it and for each PR that left). ' +
      `v2: the API key, every read on (the organization's list of queues, read once per interval for every queue; one paged pull-requests read per queue; the concluded entries of a queue whose PRs left or one is back in \`notReady\`; its testing results when a stretch of testing ended (a PR left \`testing\` or reached \`testsPassed\`), and both for any queue not read for ${periodic} cycles; its verification runs when a stretch of testing began or ended or a run in progress has no PR in \`testing\` on it; the queue-entry histories of the PRs the polls saw change, 50 a call, once per interval for the organization). ` +
      `Discovery reads the same list of queues: with \`discovery.intervalSeconds\` ≥ the merge-queue interval it adds no call (the list read within the interval is reused), else ${fixed(listPages, 0)} page(s) per read.`,
    '',
    '| API | queues | PRs per queue | calls per cycle, by endpoint | calls per cycle | calls per queue per cycle |',
    '| --- | --- | --- | --- | --- | --- |',
    row('v1 (token)', v1),
    row('v2 (API key)', v2),
    '',
    `v2 needs ${fixed(v2.total / v2.queues)} calls per queue per cycle against v1's ${fixed(v1.total / v1.queues)} (${fixed(v1.total / v2.total, 1)}× fewer calls), of which ${fixed(testingReads / v2.queues)} read testing results.${unserved}`,
    '',
    ...readTable(modules.v2Reads, { ...v2, cycles: v2Cycles, intervalSeconds: INTERVAL_SECONDS }),
  ].join('\n');
  return { title: 'API calls per cycle: API v1 and API v2', markdown };
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const off = process.argv.find((arg) => arg.startsWith('--off='));
  const report = await run({
    quick: process.argv.includes('--quick'),
    readsOff: (off?.slice('--off='.length).split(',') ?? []) as ReadsOff,
  });
  process.stdout.write(`## ${report.title}\n\n${report.markdown}\n`);
}
