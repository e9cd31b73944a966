import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Registry } from 'prom-client';
import { z } from 'zod';
import { registerExporterMetrics } from '../../src/metrics/index.js';
import type { ExpositionFormat } from '../../src/metrics/exposition.js';
import { MetricsPage } from '../../src/metrics/metricsPage.js';
import type { SnapshotFamilies } from '../../src/metrics/snapshotFamilies.js';
import { createRegistry } from '../../src/metrics/registry.js';
import { startQueueFlow } from '../../src/flow/queueFlow.js';
import { EMPTY_ENTRY_HISTORY } from '../../src/snapshot/entryHistoryTypes.js';
import { SnapshotStore } from '../../src/snapshot/store.js';
import { BLOCKED_REASONS, QUEUE_SETTINGS } from '../../src/snapshot/types.js';
import type {
  FlakyTestsSnapshot,
  MergeQueueSnapshot,
  QueueSetting,
  Snapshot,
  Target,
} from '../../src/snapshot/types.js';
import type { ApiCallObserver } from '../../src/trunk/observer.js';
import { countTestingResults, startTestingAttempts } from '../../src/poller/v2/v2TestingResults.js';
import { emptyHistogram, observe } from '../../src/snapshot/histogram.js';
import { EXIT_OUTCOMES, type QueueFlow } from '../../src/snapshot/queueFlowTypes.js';
import { durationSeriesKey, type TestingAttempts } from '../../src/snapshot/testingAttemptTypes.js';
import { ENDPOINTS } from '../../src/trunk/schemas.js';
import { v2TestingResultSchema } from '../../src/trunk/v2Schemas.js';
import {
  checkVerificationRun,
  v2VerificationRunSchema,
} from '../../src/trunk/v2VerificationRunSchemas.js';
import { countVerificationRuns, startVerificationRuns } from '../../src/flow/verificationRuns.js';
import { renderPage } from './page.js';

// A scenario file (test/metrics/fixtures/*.json) is a sequence of poll outcomes recorded into a real
// SnapshotStore on a fake clock, plus API calls fed to the observer. Timestamps are ISO strings so
// the fixtures read like a timeline; snapshots leave out what the poll entry already says (kind,
// repo, branch, takenAt).

const FIXTURE_DIR = join(import.meta.dirname, 'fixtures');

/** Intervals used in every scenario's HELP texts. */
export const MERGE_QUEUE_INTERVAL_SECONDS = 30;
export const FLAKY_TESTS_INTERVAL_SECONDS = 3600;
export const TEST_VERSION = '1.2.3-test';

const isoSeconds = z
  .string()
  .refine((text) => !Number.isNaN(Date.parse(text)), 'expected an ISO 8601 date-time')
  .transform((text) => Date.parse(text) / 1000);

const targetSchema = z.strictObject({
  kind: z.enum(['merge_queue', 'flaky_tests']),
  repo: z.string(),
  branch: z.string(),
});

const pullRequestSchema = z.strictObject({
  number: z.number().int(),
  state: z.string(),
  priorityName: z.string(),
  priorityValue: z.number(),
  stateChangedAt: isoSeconds.nullable(),
  sha: z.string().default('0123456789abcdef0123456789abcdef01234567'),
  skipTheLine: z.boolean().default(false),
  blockedReasons: z.array(z.enum(BLOCKED_REASONS)).default([]),
});

const settingsSchema = z.strictObject(
  Object.fromEntries(QUEUE_SETTINGS.map((setting) => [setting, z.boolean()])) as Record<
    QueueSetting,
    z.ZodBoolean
  >,
);

const mergeQueueSnapshotSchema = z.strictObject({
  state: z.string(),
  mode: z.string(),
  mergeMethod: z.string(),
  directMergeMode: z.string(),
  optimizationMode: z.string(),
  concurrency: z.number(),
  testingTimeoutSeconds: z.number(),
  pendingFailureDepth: z.number(),
  bisectionConcurrency: z.number(),
  batchingMaxWaitSeconds: z.number(),
  batchingMinSize: z.number(),
  requiredStatuses: z.number(),
  settings: settingsSchema,
  pullRequests: z.array(pullRequestSchema),
  readinessKnown: z.boolean(),
  /** API v2: the readiness rules its list rows cannot tell. */
  unknownBlockedReasons: z.array(z.enum(BLOCKED_REASONS)).optional(),
  /** API v2 only: PRs per host reason for not being mergeable. */
  notMergeableReasons: z.record(z.string(), z.number()).optional(),
});

const flakyTestsSnapshotSchema = z.strictObject({
  quarantined: z.number(),
  byCodeowner: z.record(z.string(), z.number()),
  oldestQuarantinedAt: isoSeconds.nullable(),
  quarantinedRecently: z.record(z.string(), z.number()).optional(),
  quarantinedOlderThan: z.record(z.string(), z.number()).optional(),
  /** API v2 only: flaky and broken tests, each map by status. */
  unhealthy: z
    .strictObject({
      byStatus: z.record(z.string(), z.number()),
      byCodeowner: z.record(z.string(), z.record(z.string(), z.number())),
      oldestSince: z.record(z.string(), isoSeconds),
      recently: z.record(z.string(), z.record(z.string(), z.number())),
      /** What they cost over Trunk's window: per status, the sums. */
      cost: z
        .strictObject({
          window: z.string(),
          byStatus: z.record(
            z.string(),
            z.strictObject({
              failedRuns: z.number(),
              runs: z.number(),
              pullRequestsImpacted: z.number(),
            }),
          ),
        })
        .optional(),
    })
    .optional(),
  /** API v2 only: the organization's test collections, read with the poll. */
  collections: z
    .array(
      z.strictObject({ name: z.string(), testCases: z.number(), quarantineEnabled: z.boolean() }),
    )
    .optional(),
});

/** A pull request a poll saw leave, with the time it spent in the queue. */
const exitSchema = z.strictObject({
  number: z.number().int(),
  outcome: z.enum(EXIT_OUTCOMES),
  enteredAt: isoSeconds,
  leftAt: isoSeconds,
});

/** A testing attempt a poll read, with how long it tested. */
const attemptSchema = z.strictObject({
  number: z.number().int(),
  outcome: z.string(),
  bisection: z.boolean(),
  seconds: z.number(),
  endedAt: isoSeconds,
});

const pollSchema = z.union([
  z.strictObject({
    at: isoSeconds,
    target: targetSchema,
    durationSeconds: z.number(),
    snapshot: z.union([mergeQueueSnapshotSchema, flakyTestsSnapshotSchema]),
    /**
     * API v2 only: the rows the poll's read of testing results returned (as Trunk sends them); the
     * first poll that has the field starts counting the queue's testing attempts.
     */
    testingResults: z.array(v2TestingResultSchema).optional(),
    /**
     * API v2 only: the rows the poll's read of verification runs returned (as Trunk sends them),
     * read as the client reads them.
     */
    verificationRuns: z
      .array(v2VerificationRunSchema.transform((run) => checkVerificationRun(run, () => undefined)))
      .optional(),
    /** API v2 only: what the queue-entry histories counted by then, by family and reason. */
    entryHistory: z
      .strictObject({
        failed: z.record(z.string(), z.number()),
        cancelled: z.record(z.string(), z.number()),
        restarts: z.record(z.string(), z.number()),
        shown: z.boolean(),
      })
      .optional(),
    /**
     * Exits and testing attempts observed with their pull request as the exemplar, as src/flow
     * and src/poller are to observe them (issue 39 item 4); the first poll that has the field
     * starts the queue's ledger.
     */
    exits: z.array(exitSchema).optional(),
    attempts: z.array(attemptSchema).optional(),
  }),
  z.strictObject({
    at: isoSeconds,
    target: targetSchema,
    durationSeconds: z.number(),
    error: z.string(),
  }),
]);

const endpointSchema = z.enum(Object.values(ENDPOINTS));

const scenarioSchema = z.strictObject({
  about: z.string(),
  staleAfterSeconds: z.number().positive(),
  topCodeowners: z.number().int().nonnegative(),
  targets: z.array(targetSchema),
  polls: z.array(pollSchema),
  renderAt: isoSeconds,
  apiCalls: z
    .array(
      z.strictObject({ endpoint: endpointSchema, code: z.string(), durationSeconds: z.number() }),
    )
    .default([]),
  schemaMismatches: z.array(endpointSchema).default([]),
});

export type Scenario = z.infer<typeof scenarioSchema>;
type Poll = Scenario['polls'][number];

/** Reads and validates test/metrics/fixtures/<name>.json. */
export function loadScenario(name: string): Scenario {
  const text = readFileSync(join(FIXTURE_DIR, `${name}.json`), 'utf8');
  const parsed = scenarioSchema.safeParse(JSON.parse(text));
  if (!parsed.success) {
    throw new Error(`fixture ${name}.json is invalid:\n${z.prettifyError(parsed.error)}`);
  }
  return parsed.data;
}

export interface ReplayedScenario {
  readonly registry: Registry;
  readonly store: SnapshotStore;
  /** The families registerExporterMetrics renders from the store alone. */
  readonly snapshotMetrics: SnapshotFamilies;
  /** The production page over the registry and the store, one for the whole replay. */
  readonly page: MetricsPage;
  /** The page in `format` (default Prometheus text) as a scrape gets it; `gzip` goes through gzip. */
  readonly render: (format?: ExpositionFormat, options?: { gzip?: boolean }) => Promise<string>;
  readonly apiCallObserver: ApiCallObserver;
  /** What a reload does to the metrics. */
  readonly applySettings: ReturnType<typeof registerExporterMetrics>['applySettings'];
  /** Moves the store's clock (unix seconds). */
  readonly setClock: (seconds: number) => void;
  /** Records the next poll not yet replayed, at its time; false when none is left. */
  readonly recordNextPoll: () => boolean;
  /** Moves the clock to the scenario's renderAt. */
  readonly finish: () => void;
}

export interface ReplayOptions {
  /** Replay only the first N polls (default: all), with the clock left at the last one replayed. */
  readonly polls?: number;
  /** Process metrics make a page nondeterministic, so goldens leave them out. */
  readonly defaultMetrics?: boolean;
}

/** A scenario's targets and polls, once per repository `github.com/acme/repo-<n>`. */
export function acrossRepositories(base: Scenario, count: number): Scenario {
  const repos = Array.from({ length: count }, (_unused, index) => `github.com/acme/repo-${index}`);
  return {
    ...base,
    targets: repos.flatMap((repo) => base.targets.map((target) => ({ ...target, repo }))),
    // Interleaved by time, as a real scheduler records them.
    polls: base.polls.flatMap((poll) =>
      repos.map((repo) => ({ ...poll, target: { ...poll.target, repo } })),
    ),
  };
}

/** Registers every metric on a fresh registry and records the scenario into a real store. */
export function replayScenario(scenario: Scenario, options: ReplayOptions = {}): ReplayedScenario {
  let clock = scenario.polls[0]?.at ?? scenario.renderAt;
  const store = new SnapshotStore(scenario.staleAfterSeconds, () => clock);
  store.setTargets(scenario.targets);
  const registry = createRegistry({ defaultMetrics: options.defaultMetrics ?? false });
  const { apiCallObserver, snapshotMetrics, applySettings } = registerExporterMetrics({
    registry,
    store,
    version: TEST_VERSION,
    mergeQueueIntervalSeconds: MERGE_QUEUE_INTERVAL_SECONDS,
    flakyTestsIntervalSeconds: FLAKY_TESTS_INTERVAL_SECONDS,
    topCodeowners: scenario.topCodeowners,
  });
  for (const call of scenario.apiCalls) {
    apiCallObserver.requestFinished(call.endpoint, call.code, call.durationSeconds);
  }
  for (const endpoint of scenario.schemaMismatches) apiCallObserver.schemaMismatch(endpoint);

  let next = 0;
  const recordNextPoll = (): boolean => {
    const poll = scenario.polls[next];
    if (poll === undefined) return false;
    next++;
    clock = poll.at;
    recordPoll(store, poll);
    return true;
  };
  const finish = (): void => {
    clock = scenario.renderAt;
  };
  const count = options.polls ?? scenario.polls.length;
  while (next < count && recordNextPoll());
  if (options.polls === undefined) finish();
  const page = new MetricsPage({ registry, store, snapshotMetrics });
  return {
    registry,
    store,
    snapshotMetrics,
    page,
    render: (format, renderOptions) => renderPage(page, format, renderOptions),
    apiCallObserver,
    applySettings,
    setClock: (seconds) => {
      clock = seconds;
    },
    recordNextPoll,
    finish,
  };
}

function recordPoll(store: SnapshotStore, poll: Poll): void {
  const target: Target = poll.target;
  if ('error' in poll) {
    store.recordFailure(target, poll.error, poll.durationSeconds);
    return;
  }
  const snapshot = withVerificationRuns(store, poll, toSnapshot(target, poll.at, poll.snapshot));
  const byReason = poll.entryHistory;
  if (byReason !== undefined && snapshot.kind === 'merge_queue') {
    const entryHistory = {
      ...EMPTY_ENTRY_HISTORY,
      failed: new Map(Object.entries(byReason.failed)),
      cancelled: new Map(Object.entries(byReason.cancelled)),
      restarts: new Map(Object.entries(byReason.restarts)),
      shown: byReason.shown,
    };
    const flow = { ...startQueueFlow(snapshot), entryHistory };
    store.recordSuccess(target, snapshot, poll.durationSeconds, flow);
    return;
  }
  if (snapshot.kind !== 'merge_queue') {
    store.recordSuccess(target, snapshot, poll.durationSeconds);
    return;
  }
  const { testingResults: rows, exits, attempts: observed } = poll;
  let attempts: TestingAttempts | undefined;
  if (rows !== undefined || observed !== undefined) {
    attempts =
      store.testingAttempts(target) ??
      startTestingAttempts(poll.at, snapshot.settings.batch === true);
    if (rows !== undefined) attempts = countTestingResults(attempts, rows, poll.at).attempts;
    if (observed !== undefined) attempts = withAttempts(attempts, observed);
  }
  const flow =
    exits === undefined ? undefined : withExits(store.queueFlow(target), snapshot, exits);
  store.recordSuccess(target, snapshot, poll.durationSeconds, flow, attempts);
}

type Exit = z.infer<typeof exitSchema>;
type Attempt = z.infer<typeof attemptSchema>;

/** The queue's ledger (started by the first poll that gives exits) with `exits` counted. */
function withExits(
  ledger: QueueFlow | undefined,
  snapshot: MergeQueueSnapshot,
  exits: readonly Exit[],
): QueueFlow {
  const flow = ledger ?? startQueueFlow(snapshot);
  const exited = new Map(flow.counts.exited);
  const timeInQueue = new Map(flow.counts.timeInQueue);
  for (const { number, outcome, enteredAt, leftAt } of exits) {
    exited.set(outcome, (exited.get(outcome) ?? 0) + 1);
    const histogram = timeInQueue.get(outcome) ?? emptyHistogram();
    timeInQueue.set(
      outcome,
      observe(histogram, leftAt - enteredAt, { pullRequest: number, timestampSeconds: leftAt }),
    );
  }
  return { ...flow, counts: { ...flow.counts, exited, timeInQueue } };
}

/** The testing attempts with `observed` counted in their (zero-filled) series. */
function withAttempts(attempts: TestingAttempts, observed: readonly Attempt[]): TestingAttempts {
  const durations = new Map(attempts.counts.durations);
  for (const { number, outcome, bisection, seconds, endedAt } of observed) {
    const key = durationSeriesKey(outcome, bisection);
    const series = durations.get(key);
    if (series === undefined) throw new Error(`no zero-filled series for ${outcome}/${bisection}`);
    const histogram = observe(series.histogram, seconds, {
      pullRequest: number,
      timestampSeconds: endedAt,
    });
    durations.set(key, { ...series, histogram });
  }
  return { ...attempts, counts: { ...attempts.counts, durations } };
}

/** The snapshot with the runs its poll read counted, from the previous poll's (or a start). */
function withVerificationRuns(
  store: SnapshotStore,
  poll: Extract<Poll, { snapshot: unknown }>,
  snapshot: Snapshot,
): Snapshot {
  if (poll.verificationRuns === undefined || snapshot.kind !== 'merge_queue') return snapshot;
  const last = store.lastSnapshot(poll.target);
  const runs =
    (last?.kind === 'merge_queue' ? last.verificationRuns : undefined) ??
    startVerificationRuns(poll.at, poll.at - 86_400, snapshot.settings.batch === true);
  const verificationRuns = countVerificationRuns(
    runs,
    poll.verificationRuns,
    poll.at,
    poll.at + 60,
  );
  return { ...snapshot, verificationRuns: verificationRuns.runs };
}

function toSnapshot(
  target: Target,
  takenAt: number,
  data: Extract<Poll, { snapshot: unknown }>['snapshot'],
): Snapshot {
  if (target.kind === 'merge_queue') {
    if (!('pullRequests' in data)) throw new Error('merge_queue poll needs a queue snapshot');
    const { notMergeableReasons, ...rest } = data;
    const snapshot: MergeQueueSnapshot = {
      ...rest,
      ...(notMergeableReasons === undefined
        ? {}
        : { notMergeableReasons: new Map(Object.entries(notMergeableReasons)) }),
      kind: 'merge_queue',
      repo: target.repo,
      branch: target.branch,
      takenAt,
      pullRequests: data.pullRequests.map((pr) => ({
        ...pr,
        stateChangedAt: pr.stateChangedAt ?? undefined,
      })),
    };
    return snapshot;
  }
  if (!('byCodeowner' in data)) throw new Error('flaky_tests poll needs a quarantine snapshot');
  const snapshot: FlakyTestsSnapshot = {
    kind: 'flaky_tests',
    repo: target.repo,
    takenAt,
    quarantine: {
      count: data.quarantined,
      byCodeowner: new Map(Object.entries(data.byCodeowner)),
      oldestQuarantinedAt: data.oldestQuarantinedAt ?? undefined,
      quarantinedRecently: new Map(Object.entries(data.quarantinedRecently ?? {})),
      quarantinedOlderThan: new Map(Object.entries(data.quarantinedOlderThan ?? {})),
    },
    ...(data.unhealthy === undefined
      ? {}
      : {
          unhealthy: {
            byStatus: new Map(Object.entries(data.unhealthy.byStatus)),
            byCodeowner: new Map(
              Object.entries(data.unhealthy.byCodeowner).map(([status, owners]) => [
                status,
                new Map(Object.entries(owners)),
              ]),
            ),
            oldestSince: new Map(Object.entries(data.unhealthy.oldestSince)),
            recently: new Map(
              Object.entries(data.unhealthy.recently).map(([status, windows]) => [
                status,
                new Map(Object.entries(windows)),
              ]),
            ),
            ...(data.unhealthy.cost === undefined
              ? {}
              : {
                  cost: {
                    window: data.unhealthy.cost.window,
                    byStatus: new Map(Object.entries(data.unhealthy.cost.byStatus)),
                  },
                }),
          },
        }),
    ...(data.collections === undefined
      ? {}
      : { collections: { collections: data.collections, readAt: takenAt } }),
  };
  return snapshot;
}
