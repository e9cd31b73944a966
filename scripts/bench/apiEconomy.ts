// Benchmark: Trunk API calls per merge-queue cycle against the naive count (one getSubmittedPullRequest
// per enqueued PR), in a steady state. The real poll jobs and TrunkClient poll the real simulator
// server over loopback; the simulated world moves one poll interval between cycles, and calls are
// counted where they arrive (the simulator's requestCounts). Also: quarantine calls per walk, with
// and without per-test detail.
//
// Runs on the built code (dist/): `npm run build && node scripts/bench/apiEconomy.ts [--quick]`
// prints the markdown section; `run()` is what the benchmark runner calls.
import { fileURLToPath } from 'node:url';
import { benchExporterConfig } from './benchConfig.ts';
import { loadBuilt } from './built.ts';

// Types only (erased when Node strips them): the values are loaded from dist/ below.
import type * as ConfigSecret from '../../src/secrets/secret.js';
import type * as ConfigTargets from '../../src/config/targets.js';
import type { ExporterConfig as Config } from '../../src/config/types.js';
import type * as Logging from '../../src/log/logger.js';
import type * as Readiness from '../../src/poller/v1/readiness.js';
import type * as TargetJobs from '../../src/poller/jobs/targetJobs.js';
import type * as SimulatorServer from '../../src/simulator/server.js';
import type { SimulatorFlavour as Flavour } from '../../src/simulator/responses.js';
import type * as SimulatorWorld from '../../src/simulator/world.js';
import type { SimulatorWorld as World } from '../../src/simulator/world.js';
import type * as Store from '../../src/snapshot/store.js';
import type { MergeQueueSnapshot } from '../../src/snapshot/types.js';
import type * as Client from '../../src/trunk/client.js';
import type * as Observer from '../../src/trunk/observer.js';

interface Modules {
  readonly secret: typeof ConfigSecret;
  readonly targets: typeof ConfigTargets;
  readonly targetJobs: typeof TargetJobs;
  readonly readiness: typeof Readiness;
  readonly store: typeof Store;
  readonly client: typeof Client;
  readonly observer: typeof Observer;
  readonly logger: typeof Logging;
  readonly server: typeof SimulatorServer;
  readonly world: typeof SimulatorWorld;
}

/** The compiled modules; a benchmark measures what ships, so it runs dist/, not the sources. */
async function loadModules(): Promise<Modules> {
  return {
    secret: await loadBuilt('secrets/secret.js'),
    targets: await loadBuilt('config/targets.js'),
    targetJobs: await loadBuilt('poller/jobs/targetJobs.js'),
    readiness: await loadBuilt('poller/v1/readiness.js'),
    store: await loadBuilt('snapshot/store.js'),
    client: await loadBuilt('trunk/client.js'),
    observer: await loadBuilt('trunk/observer.js'),
    logger: await loadBuilt('log/logger.js'),
    server: await loadBuilt('simulator/server.js'),
    world: await loadBuilt('simulator/world.js'),
  };
}

const TOKEN = 'bench-token';
const INTERVAL_SECONDS = 30;
const QUEUE_PATH = '/v1/getQueue';
const LOOKUP_PATH = '/v1/getSubmittedPullRequest';
const LIST_PATH = '/v1/flaky-tests/list-quarantined-tests';

interface Scenario {
  readonly flavour: Flavour;
  readonly recheckSeconds: number;
  readonly repositories: number;
  readonly cycles: number;
}

interface Result {
  readonly scenario: Scenario;
  readonly queues: number;
  readonly coldLookups: number;
  /** Per steady-state cycle (every cycle after the first). */
  readonly enqueued: number;
  readonly lookups: number;
  readonly previousRuleLookups: number;
  /** Lookups no rule can avoid: PRs needing details that are new or changed since the last cycle. */
  readonly floorLookups: number;
  readonly getQueue: number;
  /** Share of not_ready PR-cycles whose blocked reasons lagged behind the API. */
  readonly staleReadiness: number;
}

function simulatedRepositories(count: number) {
  return Array.from({ length: count }, (_, index) => ({
    host: 'github.com',
    owner: 'acme',
    name: `service-${index}`,
    branches: ['main', 'release'],
  }));
}

/** Starts the simulator and the poll jobs of one configuration; `run` polls every target once. */
async function setUp(
  modules: Modules,
  flavour: Flavour,
  polling: Partial<Config['polling']>,
  repositoryCount: number,
) {
  const repositories = simulatedRepositories(repositoryCount);
  const world = modules.world.createSimulatorWorld({ seed: 2026, flavour, repositories });
  const simulator = await modules.server.startSimulatorServer({ world, token: TOKEN });
  const config = benchExporterConfig({
    apiUrl: simulator.baseUrl,
    token: new modules.secret.Secret(TOKEN),
    timeoutSeconds: 10,
    mergeQueueIntervalSeconds: INTERVAL_SECONDS,
    repositories,
    flakyTests: true,
    polling,
  });
  const logger = modules.logger.silentLogger();
  const client = new modules.client.TrunkClient({
    apiUrl: config.trunk.apiUrl,
    token: config.trunk.token,
    timeoutSeconds: config.trunk.timeoutSeconds,
    maxConcurrentRequests: config.trunk.maxConcurrentRequests,
    maxRequestsPerSecond: config.trunk.maxRequestsPerSecond,
    observer: modules.observer.noopApiCallObserver,
    logger,
  });
  const store = new modules.store.SnapshotStore(config.polling.staleAfterSeconds);
  store.setTargets(modules.targets.configuredTargets(config));
  const jobs = modules.targetJobs.buildPollJobs({
    config,
    reader: client,
    store,
    logger,
    now: () => world.now(),
  });
  const controller = new AbortController();
  return {
    world,
    simulator,
    store,
    repositories,
    async run(kind: 'merge_queue' | 'flaky_tests'): Promise<void> {
      const selected = jobs.filter((job) => job.key.startsWith(`${kind}\u0000`));
      await Promise.all(selected.map((job) => job.run(controller.signal)));
    },
    async close(): Promise<void> {
      controller.abort();
      await client.close();
      await simulator.close();
    },
  };
}

/** Truth for one queue right now, read from the world directly (not over HTTP, so not counted). */
function queueTruth(
  modules: Modules,
  world: World,
  repo: { host: string; owner: string; name: string },
  branch: string,
) {
  const answer = world.getQueue(repo, branch);
  if (!answer.ok) throw new Error(answer.message);
  const items = answer.body.enqueuedPullRequests;
  const needingDetails = items.filter(
    (item) => item.state === undefined || item.state === 'not_ready',
  );
  const blocked = new Map<number, string>();
  for (const item of items) {
    const detail = world.getSubmittedPullRequest(repo, branch, item.prNumber);
    if (!detail.ok || detail.body.state !== 'not_ready') continue;
    blocked.set(
      item.prNumber,
      modules.readiness.failingReadinessRules(detail.body.readiness).join(','),
    );
  }
  return {
    enqueued: items.length,
    previousRule: needingDetails.length,
    /** Fingerprints of the PRs needing details, as the lookup memory compares them. */
    fingerprints: new Set(
      needingDetails.map(
        (item) => `${item.prNumber} ${item.stateChangedAt} ${item.prSha} ${item.state ?? ''}`,
      ),
    ),
    blocked,
  };
}

async function measure(modules: Modules, scenario: Scenario): Promise<Result> {
  const setup = await setUp(
    modules,
    scenario.flavour,
    { pullRequestRecheckSeconds: scenario.recheckSeconds },
    scenario.repositories,
  );
  try {
    const queues = setup.repositories.flatMap((repository) =>
      repository.branches.map((branch) => ({ repository, branch })),
    );
    let coldLookups = 0;
    let enqueued = 0;
    let previousRule = 0;
    let floor = 0;
    let previousFingerprints = new Map<string, ReadonlySet<string>>();
    let lookups = 0;
    let getQueue = 0;
    let notReadyChecks = 0;
    let stale = 0;
    for (let cycle = 0; cycle <= scenario.cycles; cycle++) {
      if (cycle > 0) setup.world.advance(setup.world.now() + INTERVAL_SECONDS);
      setup.simulator.resetRequestCounts();
      await setup.run('merge_queue');
      const counts = setup.simulator.requestCounts();
      const truths = new Map(
        queues.map(({ repository, branch }) => [
          `github.com/acme/${repository.name}:${branch}`,
          queueTruth(modules, setup.world, repository, branch),
        ]),
      );
      const fingerprints = new Map([...truths].map(([key, truth]) => [key, truth.fingerprints]));
      if (cycle === 0) {
        coldLookups = counts[LOOKUP_PATH] ?? 0;
        previousFingerprints = fingerprints;
        continue;
      }
      for (const [key, current] of fingerprints) {
        const before = previousFingerprints.get(key) ?? new Set<string>();
        floor += [...current].filter((fingerprint) => !before.has(fingerprint)).length;
      }
      previousFingerprints = fingerprints;
      lookups += counts[LOOKUP_PATH] ?? 0;
      getQueue += counts[QUEUE_PATH] ?? 0;
      const snapshots = new Map(
        setup.store
          .statuses()
          .flatMap(({ snapshot }) => (snapshot?.kind === 'merge_queue' ? [snapshot] : []))
          .map((snapshot: MergeQueueSnapshot) => [`${snapshot.repo}:${snapshot.branch}`, snapshot]),
      );
      for (const [key, truth] of truths) {
        enqueued += truth.enqueued;
        previousRule += truth.previousRule;
        const snapshot = snapshots.get(key);
        for (const [prNumber, reasons] of truth.blocked) {
          notReadyChecks += 1;
          const seen = snapshot?.pullRequests.find((pr) => pr.number === prNumber);
          if (seen?.blockedReasons.join(',') !== reasons) stale += 1;
        }
      }
    }
    const cycles = scenario.cycles;
    return {
      scenario,
      queues: queues.length,
      coldLookups,
      enqueued: enqueued / cycles,
      lookups: lookups / cycles,
      previousRuleLookups: previousRule / cycles,
      floorLookups: floor / cycles,
      getQueue: getQueue / cycles,
      staleReadiness: notReadyChecks === 0 ? 0 : stale / notReadyChecks,
    };
  } finally {
    await setup.close();
  }
}

/** List calls of one walk of every quarantine list, with and without per-test detail. */
async function quarantineCalls(modules: Modules, repositories: number) {
  const calls = async (flakyTestDetails: boolean) => {
    const setup = await setUp(modules, 'documented', { flakyTestDetails }, repositories);
    try {
      setup.simulator.resetRequestCounts();
      await setup.run('flaky_tests');
      const rows = setup.store
        .statuses()
        .reduce(
          (sum, { snapshot }) =>
            sum + (snapshot?.kind === 'flaky_tests' ? (snapshot.quarantine?.count ?? 0) : 0),
          0,
        );
      return { calls: setup.simulator.requestCounts()[LIST_PATH] ?? 0, rows };
    } finally {
      await setup.close();
    }
  };
  return { detailed: await calls(true), totalOnly: await calls(false) };
}

const fixed = (value: number, digits = 1) => value.toFixed(digits);
const percent = (value: number) => `${(value * 100).toFixed(1)} %`;

/** Runs the API-economy benchmark and returns its section of the report. */
export async function run(options: {
  quick: boolean;
}): Promise<{ title: string; markdown: string }> {
  const modules = await loadModules();
  const repositories = options.quick ? 4 : 10;
  const cycles = options.quick ? 40 : 240;
  const rechecks = options.quick ? [300] : [60, 300, 900];
  const results: Result[] = [];
  for (const flavour of ['documented', 'live'] as const) {
    for (const recheckSeconds of rechecks) {
      results.push(await measure(modules, { flavour, recheckSeconds, repositories, cycles }));
    }
  }
  const quarantine = await quarantineCalls(modules, repositories);

  const rows = results.map((r) => {
    const naiveCalls = r.getQueue + r.enqueued;
    const calls = r.getQueue + r.lookups;
    return (
      `| ${r.scenario.flavour} | ${r.scenario.recheckSeconds} s | ${fixed(r.enqueued)} | ` +
      `${fixed(r.previousRuleLookups)} | ${fixed(r.floorLookups)} | ${fixed(r.lookups)} | **${percent(1 - r.lookups / r.enqueued)}** | ` +
      `${fixed(naiveCalls)} | ${fixed(calls)} | ${percent(1 - calls / naiveCalls)} | ` +
      `${r.coldLookups} | ${percent(r.staleReadiness)} |`
    );
  });
  const first = results[0];
  const markdown = [
    `Steady state: ${first?.queues ?? 0} merge queues (${repositories} simulated repositories × 2 branches, ` +
      `seed 2026), polled every ${INTERVAL_SECONDS} s for ${cycles} cycles (${fixed((cycles * INTERVAL_SECONDS) / 3600, 1)} h ` +
      'of simulated time) after one cold-start cycle, by the real poll jobs and TrunkClient against the ' +
      'simulator server over loopback; calls counted at the simulator. Per cycle, summed over all queues. ' +
      '"Naive" is one lookup per enqueued PR; "before" is the previous rule (look up every PR whose ' +
      'queue item has no state or is `not_ready`). "Stale readiness" is the share of `not_ready` ' +
      'PR-cycles whose blocked reasons lagged behind the API (the price of rechecking slowly). ' +
      '"Floor" counts PRs needing details that were new or changed since the previous cycle: ' +
      'the lookups no rule can skip; the rest of "lookups now" are rechecks.',
    '',
    '| shape | recheck | PRs enqueued (naive lookups) | lookups before | floor (new or changed) | lookups now | fewer lookups than naive | naive calls | calls now | fewer calls | cold-start lookups | stale readiness |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    `Quarantine lists (${repositories} repositories, ${quarantine.detailed.rows} quarantined tests in all): ` +
      `a full walk at page size 100 takes ${quarantine.detailed.calls} calls; with ` +
      `\`polling.flakyTestDetails: false\` the totals take ${quarantine.totalOnly.calls} (one call of page size 1 per ` +
      `repository; same totals: ${quarantine.totalOnly.rows === quarantine.detailed.rows ? 'yes' : 'NO'}).`,
  ].join('\n');
  return { title: 'API economy: Trunk API calls per merge-queue cycle', markdown };
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const report = await run({ quick: process.argv.includes('--quick') });
  process.stdout.write(`## ${report.title}\n\n${report.markdown}\n`);
}
