// Reasons, restarts and failing checks against the simulator's truth: a real exporter with only an
// API key discovers the demo's organization on loopback and polls it while the world runs twenty
// minutes, twenty seconds at a time (the incident cycle's failure bursts, eviction loop, failing `e2e`
// check and pushes to a target branch included). Its families must say exactly what the model's
// queues recorded, in the model's own terms:
//
// - failed, cancelled and restarts: each transition of an entry's timeline, by its reason ("`null`
//   for `testing` and `pendingFailure`, which carry no reason": `unknown` on the page), that the
//   exporter could see: it learns of an entry from the live list only, so a transition counts when
//   a poll listed the entry before it within the same stay (after the state it listed, up to the
//   stay's end). A pull request that came and went between two polls is nobody's to count.
// - check failures: each run the model concluded `failed` after the first poll, once per required
//   check that failed it ("each *required* check ... that concluded `failure` or `timeout` in a
//   failed run, once per run"); optional checks, which the view fails now and then, never.
//
// The exporter's clock is the world's (set at each step), as Trunk's and a deployment's agree.
import { isDeepStrictEqual } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createDemoWorld } from '../src/demo/demo.js';
import { isFinalState, type SimulatedPullRequest } from '../src/simulator/pullRequest.js';
import { repositoryKey } from '../src/simulator/repositories.js';
import { renderChecks } from '../src/simulator/v2Checks.js';
import { verificationRunId } from '../src/simulator/v2VerificationRuns.js';
import type { SimulatorWorld } from '../src/simulator/world.js';
import { select, type Sample } from './support/exposition.js';
import {
  configYaml,
  startTestExporter,
  type ExporterUnderTest,
} from './support/exporterHarness.js';
import { startTestSimulator, v2QueueIds } from './support/simulator.js';

const API_KEY = 'trunk_v2_reasons-truth-key';
const START_TIME = 1_795_860_990;
const STEP_SECONDS = 30;
const WORLD_SECONDS = 1200;
/** "entries sent back to `pending` from `testing`, `testsPassed` or `pendingFailure`". */
const RESTARTED_FROM = new Set(['testing', 'tests_passed', 'pending_failure']);

type Tally = Record<string, number>;
/** Per queue (`repo branch`), per family, counts by label value. */
type Counts = Record<string, { failed: Tally; cancelled: Tally; restarts: Tally; checks: Tally }>;

const FAMILIES = {
  failed: ['trunk_merge_queue_pull_requests_failed_total', 'reason'],
  cancelled: ['trunk_merge_queue_pull_requests_cancelled_total', 'reason'],
  restarts: ['trunk_merge_queue_restarts_total', 'cause'],
  checks: ['trunk_merge_queue_check_failures_total', 'check'],
} as const;

afterEach(() => {
  vi.useRealTimers();
});

const add = (tally: Tally, key: string) => {
  tally[key] = (tally[key] ?? 0) + 1;
};

/** The page's counts of each queue in `queues`; series at 0 left out (the truth has no zeros). */
function pageCounts(samples: readonly Sample[], queues: readonly string[]): Counts {
  const counts: Counts = {};
  for (const queue of queues) {
    const [repo = '', branch = ''] = queue.split(' ');
    const entry: Counts[string] = { failed: {}, cancelled: {}, restarts: {}, checks: {} };
    counts[queue] = entry;
    for (const [family, [name, label]] of Object.entries(FAMILIES)) {
      const tally = entry[family as keyof typeof FAMILIES];
      for (const { labels, value } of select(samples, name, { repo, branch })) {
        if (value > 0) tally[labels[label] ?? ''] = value;
      }
    }
  }
  return counts;
}

/**
 * What the world's queues recorded that the exporter could see, given when each pull request was
 * listed (its stateChangedAt at each step the polls read).
 */
function worldCounts(world: SimulatorWorld, listed: ReadonlyMap<SimulatedPullRequest, number[]>) {
  const counts: Counts = {};
  /** The states restarts came from. */
  const restartedFrom = new Set<string>();
  for (const { repository, model } of world.mergeQueues) {
    const entry = { failed: {}, cancelled: {}, restarts: {}, checks: {} };
    counts[`${repositoryKey(repository)} ${model.branch}`] = entry;
    for (const pr of [...model.active, ...model.concluded]) {
      const transitions = model.entries.timeline(pr.id)?.transitions ?? [];
      const listings = listed.get(pr) ?? [];
      for (const [index, to] of transitions.entries()) {
        const from = transitions[index - 1];
        // Listed before it, with no end of a stay in between.
        const seen = listings.some(
          (at) =>
            at < to.at &&
            !transitions.some((t) => isFinalState(t.state) && t.at > at && t.at < to.at),
        );
        if (from === undefined || !seen) continue;
        const reason = to.reason ?? 'unknown';
        if (to.state === 'failed') add(entry.failed, reason);
        if (to.state === 'cancelled') add(entry.cancelled, reason);
        if (to.state === 'pending' && RESTARTED_FROM.has(from.state)) {
          add(entry.restarts, reason);
          restartedFrom.add(from.state);
        }
      }
    }
    for (const run of model.verificationRuns.runs) {
      if (run.status !== 'failed' || run.updatedAt <= START_TIME) continue;
      for (const name of new Set(run.failing.map((check) => check.name))) {
        add(entry.checks, name);
      }
    }
  }
  return { counts, restartedFrom };
}

/** Until every queue had a poll that began after now: the one after a poll that ended after now. */
async function pollAfterNow(exporter: ExporterUnderTest, queues: readonly string[]) {
  const lastSuccess = (samples: readonly Sample[]) =>
    queues.map((queue) => {
      const [repo = '', branch = ''] = queue.split(' ');
      const [sample] = select(samples, 'trunk_exporter_last_success_timestamp_seconds', {
        repo,
        branch,
      });
      return sample?.value ?? 0;
    });
  const now = Date.now() / 1000;
  let ended: number[] = [];
  await exporter.waitFor(
    (samples) => (ended = lastSuccess(samples)).every((at) => at > now),
    'a poll of each queue ending',
  );
  await exporter.waitFor(
    (samples) => lastSuccess(samples).every((at, index) => at > (ended[index] ?? 0)),
    'a poll of each queue beginning',
  );
}

describe('reasons, restarts and failing checks against the simulator', () => {
  it('equal what each queue of the world recorded that the exporter could see', async () => {
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true, now: START_TIME * 1000 });
    // Seed 3: among its restarts, retests of entries whose failure an entry ahead caused.
    const { world } = createDemoWorld(3, START_TIME);
    const { simulator } = await startTestSimulator({ world, token: 'unused', apiKey: API_KEY });
    const exporter = await startTestExporter(
      configYaml({
        apiUrl: simulator.origin,
        token: null,
        apiKey: API_KEY,
        targets: '  []',
        polling: '  mergeQueueIntervalSeconds: 0.1\n  flakyTestsIntervalSeconds: 600',
      })
        .replace('targets:\n', 'discovery:\n  enabled: true\n  intervalSeconds: 600\ntargets:\n')
        .replace('\n  orgUrlSlug: acme', ''),
    );
    const queues = world.mergeQueues.map(
      ({ repository, model }) => `${repositoryKey(repository)} ${model.branch}`,
    );
    const listed = new Map<SimulatedPullRequest, number[]>();
    const list = () => {
      for (const { model } of world.mergeQueues) {
        for (const pr of model.active)
          listed.set(pr, [...(listed.get(pr) ?? []), pr.stateChangedAt]);
      }
    };
    await pollAfterNow(exporter, queues);
    list();
    for (let seconds = STEP_SECONDS; seconds <= WORLD_SECONDS; seconds += STEP_SECONDS) {
      world.advance(START_TIME + seconds);
      vi.setSystemTime((START_TIME + seconds) * 1000);
      await pollAfterNow(exporter, queues);
      list();
    }
    const { counts: truth, restartedFrom } = worldCounts(world, listed);
    // A reason shows one to two history reads after the poll that saw its change.
    const page = await exporter
      .waitFor(
        // Deep equality, not JSON text: the page lists a queue's reasons in its own order.
        (samples) => isDeepStrictEqual(pageCounts(samples, queues), truth),
        'the families to equal the truth',
      )
      .catch(() => exporter.samples());
    expect(pageCounts(page, queues)).toEqual(truth);

    // The twenty minutes have what the families are for.
    const all = (family: keyof Counts[string]) =>
      new Set(Object.values(truth).flatMap((counts) => Object.keys(counts[family])));
    expect([...all('failed')]).toEqual(
      expect.arrayContaining(['START_TEST_RUN_MERGE_CONFLICT', 'TEST_RUN_REQUIRED_STATUS_FAILED']),
    );
    expect([...all('restarts')]).toEqual(
      expect.arrayContaining(['MANUAL_PUSH_TO_TARGET_BRANCH', 'PREREQUISITE_MERGE_ITEM_FAILED']),
    );
    expect(all('restarts').size).toBeGreaterThanOrEqual(3);
    expect([...restartedFrom].sort()).toEqual(['pending_failure', 'testing']);
    expect(all('cancelled').size).toBeGreaterThanOrEqual(1);
    expect(truth['github.com/acme/api main']?.checks.e2e).toBeGreaterThanOrEqual(2);
    expect(all('checks').size).toBeGreaterThanOrEqual(2);
    // Failed runs whose optional checks failed too, which count nothing.
    const queueIds = await v2QueueIds(simulator, API_KEY);
    const optionalFailures = world.mergeQueues.flatMap(({ repository, model }) =>
      model.verificationRuns.runs
        .filter((run) => run.status === 'failed' && run.updatedAt > START_TIME)
        .flatMap((run) => {
          const id = verificationRunId(
            queueIds.get(`${repositoryKey(repository)} ${model.branch}`) ?? '',
            run.batch,
          );
          return renderChecks(repository, id, run).filter(
            ({ name, conclusion }) =>
              conclusion === 'failure' && !run.requiredStatuses.includes(name),
          );
        }),
    );
    expect(optionalFailures.length).toBeGreaterThan(0);
  }, 240_000);
});
