// One build's side of the paired benchmark (pairedCycle.ts): that build's poll jobs and TrunkClient
// against its own simulator process (this checkout's simulator, the same for both builds), one
// merge-queue cycle per "run" line on stdin, its figures as a JSON line on stdout. The modules are
// loaded from `<build>/dist/`, each at the first of its known paths that the build has: the poller
// moved into folders (poller/jobs, poller/v2) in commit 99fb365.
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import type * as LoadModule from '../../src/config/load.js';
import type * as TargetsModule from '../../src/config/targets.js';
import type * as V8FlagsModule from '../../src/cli/v8Flags.js';
import type * as LoggerModule from '../../src/log/logger.js';
import type * as JobsModule from '../../src/poller/jobs/targetJobs.js';
import type * as QueueDirectoryModule from '../../src/poller/v2/v2QueueDirectory.js';
import type * as TestDirectoryModule from '../../src/poller/v2/v2TestDirectory.js';
import type * as StoreModule from '../../src/snapshot/store.js';
import type * as ClientModule from '../../src/trunk/client.js';
import type * as V2ClientModule from '../../src/trunk/v2Client.js';
import { startSimulatorProcess } from './processes.ts';
import { configYaml, type Scale } from './scale.ts';

/** The row both builds run. */
export interface PairedRow {
  readonly api: 'v1' | 'v2';
  readonly queues: number;
  readonly latencyMs: number;
  readonly concurrency: number;
  /** v2: simulated seconds the world moves on before each cycle (the merge-queue interval). */
  readonly intervalSeconds: number;
  /** The build's `reads:` section; none when undefined. */
  readonly reads: Readonly<Record<string, string>> | undefined;
}

/** One cycle as a child measured it. */
export interface CycleFigures {
  readonly seconds: number;
  /** Requests the simulator answered during the cycle, by endpoint. */
  readonly byEndpoint: Readonly<Record<string, number>>;
  readonly calls: number;
  /** User + system CPU of the child process during the cycle, in microseconds. */
  readonly cpuMicros: number;
  readonly floorSeconds: number;
}

/** Loads `<root>/dist/<path>` for the first of `paths` the build has. */
async function loadFirst<T>(root: string, paths: readonly string[]): Promise<T> {
  for (const path of paths) {
    try {
      return (await import(pathToFileURL(resolve(root, 'dist', path)).href)) as T;
    } catch (error) {
      if ((error as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    }
  }
  throw new Error(`${root}/dist has none of ${paths.join(', ')}; run "npm run build" there`);
}

/** The modules of the build at `root`, at their paths now and before the folders. */
async function loadBuild(root: string) {
  const jobs = await loadFirst<typeof JobsModule>(root, [
    'poller/jobs/targetJobs.js',
    'poller/targetJobs.js',
  ]);
  return {
    config: await loadFirst<typeof LoadModule>(root, ['config/load.js']),
    logger: await loadFirst<typeof LoggerModule>(root, ['log/logger.js']),
    jobs,
    // Older builds exported configuredTargets from the poll jobs' module.
    targets: await loadFirst<typeof TargetsModule>(root, ['config/targets.js']).catch(
      () => jobs as unknown as typeof TargetsModule,
    ),
    store: await loadFirst<typeof StoreModule>(root, ['snapshot/store.js']),
    client: await loadFirst<typeof ClientModule>(root, ['trunk/client.js']),
    v2Client: await loadFirst<typeof V2ClientModule>(root, ['trunk/v2Client.js']),
    queueDirectory: await loadFirst<typeof QueueDirectoryModule>(root, [
      'poller/v2/v2QueueDirectory.js',
      'poller/v2QueueDirectory.js',
    ]),
    testDirectory: await loadFirst<typeof TestDirectoryModule>(root, [
      'poller/v2/v2TestDirectory.js',
      'poller/v2TestDirectory.js',
    ]),
  };
}

/** Runs one build's side until stdin says anything but "run". */
export async function runChild(root: string, row: PairedRow): Promise<void> {
  // As the trunk-exporter command does, before the code under test loads.
  const require = createRequire(import.meta.url);
  const flags = require(resolve(root, 'dist/cli/v8Flags.js')) as typeof V8FlagsModule;
  flags.applyExporterV8Flags();
  const build = await loadBuild(root);
  const scale: Scale = {
    queues: row.queues,
    pullRequestsPerQueue: 30,
    flakyRepositories: 0,
    quarantinedTests: 0,
  };
  const simulator = await startSimulatorProcess({
    scale,
    flavour: 'documented',
    latencyMs: row.latencyMs,
    churn: 'normal',
    control: true,
  });
  const command = async (line: string, answer: RegExp): Promise<string> => {
    const reply = simulator.waitFor(answer);
    simulator.child.stdin?.write(`${line}\n`);
    return (await reply)[1] ?? '';
  };
  const config = await build.config.parseConfig(
    configYaml(scale, {
      apiUrl: simulator.baseUrl,
      port: 0,
      maxConcurrentRequests: row.concurrency,
      maxRequestsPerSecond: 1_000_000,
      mergeQueueIntervalSeconds: row.intervalSeconds,
      flakyTestsIntervalSeconds: 3600,
      // v1: every PR looked up on every poll (the documented row); v2 reads no PR on its own.
      ...(row.api === 'v1' ? { pullRequestRecheckSeconds: 0 } : {}),
      api: row.api,
      targets: 'listed',
      reads: row.reads,
    })
      // Nothing is served here, and builds older than the key reject it.
      .replace(/^ *maxConnectionsPerAddress:.*\n/m, ''),
    { source: 'bench.yaml', env: {} },
  );
  // v2's clock is the world's: its reads ask for what happened since the previous poll.
  let worldNow = Number(await command('advance 0', /NOW (\S+)\n/));
  const now = () => worldNow;
  const logger = build.logger.silentLogger();
  const options = {
    apiUrl: config.trunk.apiUrl,
    token: config.trunk.token,
    apiKey: config.trunk.apiKey,
    timeoutSeconds: 60,
    maxConcurrentRequests: row.concurrency,
    maxRequestsPerSecond: 1_000_000,
    // Builds between fairness and 99fb365 were told how many targets share the client.
    targets: () => row.queues,
    observer: { requestFinished() {}, schemaMismatch() {}, anomaly() {} },
    logger,
  };
  const client = new build.client.TrunkClient(options);
  const v2 = new build.v2Client.TrunkV2Client(client);
  const store = new build.store.SnapshotStore(3600);
  store.setTargets(build.targets.configuredTargets(config));
  const jobs = build.jobs
    .buildPollJobs({
      config,
      reader: client,
      store,
      logger,
      ...(row.api === 'v2' ? { now } : {}),
      v2: {
        reader: v2,
        directory: new build.queueDirectory.V2QueueDirectory(v2, row.intervalSeconds, now),
        tests: new build.testDirectory.V2TestDirectory(
          { lister: v2, maxAgeSeconds: 3600, lookupsAtATime: 4 },
          now,
        ),
      },
    })
    .filter((job) => job.key.startsWith('merge_queue'))
    .map((job) => ({ job, signal: new AbortController().signal }));

  process.stdout.write('READY\n');
  let first = true;
  for await (const line of createInterface({ input: process.stdin })) {
    if (line !== 'run') break;
    if (row.api === 'v2' && !first) {
      worldNow = Number(await command(`advance ${row.intervalSeconds}`, /NOW (\S+)\n/));
    }
    first = false;
    await command('counts', /COUNTS (.*)\n/);
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    await Promise.all(jobs.map(({ job, signal }) => job.run(signal)));
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const failed = store.statuses().filter((status) => status.up !== true).length;
    if (failed > 0) throw new Error(`${failed} targets failed their poll during the cycle`);
    const byEndpoint = JSON.parse(await command('counts', /COUNTS (.*)\n/)) as Record<
      string,
      number
    >;
    const calls = Object.values(byEndpoint).reduce((sum, count) => sum + count, 0);
    const figures: CycleFigures = {
      seconds,
      byEndpoint,
      calls,
      cpuMicros: cpu.user + cpu.system,
      floorSeconds: (Math.ceil(calls / row.concurrency) * row.latencyMs) / 1000,
    };
    process.stdout.write(`${JSON.stringify(figures)}\n`);
  }
  await client.close();
  await simulator.stop();
}
