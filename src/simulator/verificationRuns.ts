// A merge queue's verification runs (v2's `VerificationRun`): the CI runs its testing makes. The
// pull requests that start testing together (a batch) share one, the run their testing results
// name; it concludes once each has left testing: `failed` when one failed, else `succeeded` when
// one passed, else `cancelled` (the engine abandoned it: restarted or removed). Which required
// checks failed it is drawn when its first pull request fails, from the stream of the queue's
// records; the other checks follow from its status (v2Checks.ts). Kept like the testing results:
// 45 days, VERIFICATION_RUNS.
import type { SimulatedPullRequest } from './pullRequest.js';
import type { Random } from './random.js';
import type { TestingOutcome } from './testingHistory.js';

export type RunStatus = 'inProgress' | 'succeeded' | 'failed' | 'cancelled';

/** The conclusions a simulated check reaches (the definition's `CheckConclusion`, less `neutral`). */
export type CheckConclusion = 'success' | 'failure' | 'timeout' | 'cancelled' | 'skipped';

export interface CheckOutcome {
  readonly name: string;
  readonly conclusion: CheckConclusion;
}

export interface VerificationRun {
  /** The batch number its pull requests share (`testingRun.batch`): the run's id in the queue. */
  readonly batch: number;
  /** Creation order in the queue: with `createdAt`, the run's place in its list. */
  readonly sequence: number;
  /** Unix seconds. */
  readonly createdAt: number;
  /** Unix seconds of its last change: its conclusion, once it concluded. */
  readonly updatedAt: number;
  readonly status: RunStatus;
  /** One of its pull requests is testing in a bisection of an earlier failed batch. */
  readonly isBisection: boolean;
  /** The queue's required checks when it started. */
  readonly requiredStatuses: readonly string[];
  readonly tested: readonly SimulatedPullRequest[];
  /** Those of `tested` whose testing on it passed. */
  readonly passed: readonly SimulatedPullRequest[];
  /** Pull requests ahead, testing or passed, that its test branch was built on. */
  readonly dependent: readonly SimulatedPullRequest[];
  /** The required checks that failed it (`failure`, or `timeout` past the testing timeout). */
  readonly failing: readonly CheckOutcome[];
}

/** How far back runs are kept: the window of v2's testing results. */
export const VERIFICATION_RUN_SECONDS = 45 * 86_400;
/** At most this many runs per queue (runs in progress are never dropped). */
export const VERIFICATION_RUNS = 1000;

/** Share of failed runs that two required checks failed. */
const TWO_CHECKS_FAILED = 0.1;

/** What the runs need of their queue. */
export interface RunsQueue {
  /** The stream of the queue's records (not the queue's own). */
  readonly random: Random;
  /** The required check a scripted incident fails every run on at `now`, if any. */
  failingCheck(now: number): string | undefined;
}

export interface VerificationRuns {
  /** Kept runs in creation order. */
  readonly runs: readonly VerificationRun[];
  /** The kept run of `batch`. */
  run(batch: number): VerificationRun | undefined;
  /** `pr` starts testing on the run of its `testingRun`: a new run, or its batch's. */
  start(
    pr: SimulatedPullRequest,
    now: number,
    requiredStatuses: readonly string[],
    dependent: readonly SimulatedPullRequest[],
  ): VerificationRun;
  /** `pr`'s testing on its run ended with `outcome` at `now`. */
  end(pr: SimulatedPullRequest, outcome: TestingOutcome, now: number): void;
}

type Run = { -readonly [K in keyof VerificationRun]: VerificationRun[K] } & {
  tested: SimulatedPullRequest[];
  passed: SimulatedPullRequest[];
  dependent: SimulatedPullRequest[];
  /** Its pull requests still testing on it. */
  testing: number;
  failed: boolean;
};

/** A queue's runs, none yet. */
export function createVerificationRuns(queue: RunsQueue): VerificationRuns {
  const { random } = queue;
  const runs: Run[] = [];
  const byBatch = new Map<number, Run>();
  let sequence = 0;

  const failingChecks = (run: Run, pr: SimulatedPullRequest, now: number): CheckOutcome[] => {
    const required = run.requiredStatuses;
    if (required.length === 0) return [];
    // A run that hung is failed by the queue's timeout, whatever its checks would have said.
    if (pr.failureReason === 'TEST_RUN_TIMEOUT') {
      return [{ name: random.pick(required), conclusion: 'timeout' }];
    }
    const scripted = queue.failingCheck(now);
    if (scripted !== undefined && required.includes(scripted)) {
      return [{ name: scripted, conclusion: 'failure' }];
    }
    const names = new Set([random.pick(required)]);
    if (random.chance(TWO_CHECKS_FAILED)) names.add(random.pick(required));
    return [...names].map((name) => ({ name, conclusion: 'failure' }));
  };

  const drop = (index: number): void => {
    const [dropped] = runs.splice(index, 1);
    if (dropped !== undefined) byBatch.delete(dropped.batch);
  };

  /** Drops the oldest concluded runs past the cap, and concluded runs past the window. */
  const evict = (now: number): void => {
    while (runs.length > VERIFICATION_RUNS) {
      const oldest = runs.findIndex((run) => run.status !== 'inProgress');
      if (oldest === -1) return;
      drop(oldest);
    }
    // Runs are in creation order: only when the first is old can any be.
    if ((runs[0]?.createdAt ?? now) >= now - VERIFICATION_RUN_SECONDS) return;
    for (let index = runs.length - 1; index >= 0; index--) {
      const run = runs[index];
      if (
        run?.status !== 'inProgress' &&
        (run?.updatedAt ?? now) < now - VERIFICATION_RUN_SECONDS
      ) {
        drop(index);
      }
    }
  };

  return {
    runs,
    run: (batch) => byBatch.get(batch),
    start(pr, now, requiredStatuses, dependent) {
      const { batch, isBisection } = pr.testingRun;
      let run = byBatch.get(batch);
      if (run === undefined) {
        sequence += 1;
        run = {
          batch,
          sequence,
          createdAt: now,
          updatedAt: now,
          status: 'inProgress',
          isBisection,
          // The queue replaces its list when it changes, never edits it: no copy needed.
          requiredStatuses,
          tested: [],
          passed: [],
          dependent: [],
          failing: [],
          testing: 0,
          failed: false,
        };
        runs.push(run);
        byBatch.set(batch, run);
        evict(now);
      }
      run.tested.push(pr);
      run.testing += 1;
      run.isBisection ||= isBisection;
      run.updatedAt = now;
      const tested = run.tested;
      const fresh = dependent.filter((d) => !tested.includes(d) && !run.dependent.includes(d));
      run.dependent.push(...fresh);
      return run;
    },
    end(pr, outcome, now) {
      const run = byBatch.get(pr.testingRun.batch);
      if (run?.status !== 'inProgress') return;
      run.testing -= 1;
      run.updatedAt = now;
      if (outcome === 'passed') run.passed.push(pr);
      if (outcome === 'failed' && !run.failed) {
        run.failed = true;
        run.failing = failingChecks(run, pr, now);
      }
      if (run.testing > 0) return;
      run.status = run.failed ? 'failed' : run.passed.length > 0 ? 'succeeded' : 'cancelled';
      // A check a scripted incident fails fails every run that concludes meanwhile, also one that
      // another check failed before the incident began (a long bisection run): the incident's
      // "fails every run the queue concludes", which its alert counts on.
      const scripted = queue.failingCheck(now);
      if (
        run.failed &&
        scripted !== undefined &&
        run.requiredStatuses.includes(scripted) &&
        !run.failing.some((check) => check.name === scripted)
      ) {
        run.failing = [...run.failing, { name: scripted, conclusion: 'failure' }];
      }
    },
  };
}
