// One simulated merge queue (repository + target branch): settings, queue state and the pull
// requests moving through it, following "Meaning of the states" in trunk-api-notes.md.
import {
  compareQueueOrder,
  createPullRequest,
  evolveReadiness,
  isReadyToTest,
  type FinalPullRequestState,
  type PullRequestState,
  type SimulatedPullRequest,
} from './pullRequest.js';
import type { Random } from './random.js';
import type { QueueState } from './queueState.js';
import { recordQueueState, recordTransition, type SimulatorStatistics } from './statistics.js';

export type { QueueState } from './queueState.js';

/** Fields of trunk-api-v1.md 2.5 other than state, branch and the pull requests. */
export interface MergeQueueSettings {
  mode: 'single' | 'parallel';
  readonly concurrency: number;
  readonly testingTimeoutMinutes: number;
  readonly canOptimisticallyMerge: boolean;
  readonly pendingFailureDepth: number;
  readonly batch: boolean;
  readonly batchingMaxWaitTimeMinutes: number;
  readonly batchingMinSize: number;
  readonly createPrsForTestingBranches: boolean;
  readonly commentsEnabled: boolean;
  readonly commandsEnabled: boolean;
  readonly statusCheckEnabled: boolean;
  readonly bisectionConcurrency: number;
  readonly requiredStatuses: readonly string[];
  readonly directMergeMode: 'off' | 'always';
  readonly optimizationMode: 'off' | 'bisection_skip_redundant_tests';
  readonly mergeMethod: 'merge_commit' | 'squash' | 'rebase';
}

/** Finished pull requests kept so getSubmittedPullRequest can still answer for them. */
const FINISHED_HISTORY = 200;

const STATUS_NAMES = ['ci/build', 'ci/unit-tests', 'ci/integration', 'lint', 'e2e'];

/** Allocates pull request numbers for a repository; shared by the repository's queues. */
export type PullRequestNumberSource = (random: Random) => number;

/**
 * Told of every state change of a pull request in the queue (`from` undefined for a submission),
 * after it happened: the world turns them into webhook events.
 */
export type PullRequestChangeListener = (
  pr: SimulatedPullRequest,
  from: PullRequestState | undefined,
  now: number,
) => void;

/** How a queue deviates from its natural behaviour, for benchmarks and soak runs. */
export interface MergeQueueShape {
  /** Refill the queue to this many pull requests at the end of every step. */
  readonly pullRequests?: number | undefined;
  /** Pull requests arrive and get cancelled many times more often: series come and go. */
  readonly heavyChurn?: boolean | undefined;
}

/** Heavy churn: a new pull request most steps, and a few percent cancelled per step. */
const HEAVY_CHURN_ARRIVALS_PER_STEP = 0.6;
const HEAVY_CHURN_CANCEL_CHANCE = 0.04;

export interface MergeQueueModel {
  readonly branch: string;
  readonly settings: MergeQueueSettings;
  readonly state: QueueState;
  /** Unix seconds of the last change of the queue's state (and so of its mode). */
  readonly stateChangedAt: number;
  /** Pull requests in the queue, in queue order. */
  readonly active: readonly SimulatedPullRequest[];
  /** The most recent pull requests that left the queue (at most FINISHED_HISTORY), oldest first. */
  readonly concluded: readonly SimulatedPullRequest[];
  /** A pull request submitted to this queue, in it or recently finished. */
  find(prNumber: number): SimulatedPullRequest | undefined;
  /** Moves the queue forward by one step ending at `now`. */
  step(now: number, stepSeconds: number): void;
  /** Scripted incidents: enters `next` at `now` and stays in it until `until` (unix seconds). */
  holdState(
    next: Exclude<QueueState, 'running' | 'switching_modes'>,
    now: number,
    until: number,
  ): void;
  /** Scripted incidents: submits a new pull request now (in `not_ready`, like any submission). */
  submit(now: number): SimulatedPullRequest;
  /** Scripted incidents: fails an active pull request now, as a failed test run would. */
  fail(pr: SimulatedPullRequest, now: number): void;
}

/** Draws stable, plausible settings for a new queue. */
function drawSettings(random: Random): MergeQueueSettings {
  const batch = random.chance(0.3);
  const methodRoll = random.next();
  return {
    mode: random.chance(0.4) ? 'parallel' : 'single',
    concurrency: random.int(2, 5),
    testingTimeoutMinutes: random.pick([30, 45, 60, 90]),
    canOptimisticallyMerge: random.chance(0.5),
    pendingFailureDepth: random.int(0, 3),
    batch,
    batchingMaxWaitTimeMinutes: batch ? random.pick([5, 10, 15]) : 0,
    batchingMinSize: batch ? random.int(2, 4) : 1,
    createPrsForTestingBranches: random.chance(0.7),
    commentsEnabled: random.chance(0.9),
    commandsEnabled: random.chance(0.9),
    statusCheckEnabled: random.chance(0.8),
    bisectionConcurrency: random.int(1, 4),
    requiredStatuses: STATUS_NAMES.filter((_name, index) => index === 0 || random.chance(0.5)),
    directMergeMode: random.chance(0.8) ? 'off' : 'always',
    optimizationMode: random.chance(0.7) ? 'off' : 'bisection_skip_redundant_tests',
    mergeMethod: methodRoll < 0.6 ? 'squash' : methodRoll < 0.85 ? 'merge_commit' : 'rebase',
  };
}

/** A merge queue with its own random stream; its state changes only through `step`. */
export function createMergeQueueModel(
  random: Random,
  branch: string,
  nextPullRequestNumber: PullRequestNumberSource,
  statistics: SimulatorStatistics,
  shape: MergeQueueShape = {},
  onChange?: PullRequestChangeListener,
): MergeQueueModel {
  const settings = drawSettings(random);
  // Busy branches get more submissions; the arrival rate shrinks as the queue grows, like
  // developers holding back when the queue is long, which keeps it around 3-15 pull requests.
  const naturalArrivals = branch === 'release' ? 0.018 : random.pick([0.026, 0.03, 0.034]);
  const arrivalsPerStep = shape.heavyChurn ? HEAVY_CHURN_ARRIVALS_PER_STEP : naturalArrivals;
  let state: QueueState = 'running';
  let stateChangedAt = 0;
  let stateEndsAt = 0;
  let sequence = 0;
  const active: SimulatedPullRequest[] = [];
  const finished: SimulatedPullRequest[] = [];
  const byNumber = new Map<number, SimulatedPullRequest>();

  // A pull request changes state at most once per step, so every state is visible for a step.
  const changedIn = (pr: SimulatedPullRequest, now: number): boolean => pr.stateChangedAt === now;

  const transition = (pr: SimulatedPullRequest, to: PullRequestState, now: number): void => {
    const from = pr.state;
    recordTransition(statistics, from, to);
    pr.state = to;
    pr.stateChangedAt = now;
    onChange?.(pr, from, now);
  };

  const finish = (pr: SimulatedPullRequest, to: FinalPullRequestState, now: number): void => {
    transition(pr, to, now);
    active.splice(active.indexOf(pr), 1);
    finished.push(pr);
    if (finished.length > FINISHED_HISTORY) {
      const evicted = finished.shift();
      if (evicted !== undefined) byNumber.delete(evicted.number);
    }
  };

  const enterQueueState = (
    next: QueueState,
    now: number,
    minMinutes: number,
    maxMinutes: number,
  ) => {
    state = next;
    stateChangedAt = now;
    stateEndsAt = now + random.int(minMinutes * 60, maxMinutes * 60);
    recordQueueState(statistics, next);
  };

  const stepQueueState = (now: number): void => {
    if (state !== 'running') {
      if (now < stateEndsAt) return;
      // A mode change is what `switching_modes` is for; it ends in the other mode.
      if (state === 'switching_modes') {
        settings.mode = settings.mode === 'single' ? 'parallel' : 'single';
      }
      state = 'running';
      stateChangedAt = now;
      recordQueueState(statistics, state);
      return;
    }
    const roll = random.next();
    if (roll < 0.00012) enterQueueState('paused', now, 5, 40);
    else if (roll < 0.00018) enterQueueState('draining', now, 10, 45);
    else if (roll < 0.00021) enterQueueState('switching_modes', now, 1, 3);
  };

  const testingCount = (): number => active.filter((pr) => pr.state === 'testing').length;

  const startTesting = (pr: SimulatedPullRequest, now: number): void => {
    transition(pr, 'testing', now);
    pr.blamedOnPullRequestAhead = false;
    if (random.chance(0.02)) {
      // A hung CI run: the queue gives up at the testing timeout.
      pr.phaseEndsAt = now + settings.testingTimeoutMinutes * 60;
      pr.testWillPass = false;
      pr.failureReason = 'TEST_RUN_TIMED_OUT';
    } else {
      pr.phaseEndsAt = now + random.int(3 * 60, 15 * 60);
      pr.testWillPass = random.chance(0.85);
      pr.failureReason = 'TEST_RUN_REQUIRED_STATUS_FAILED';
    }
  };

  /** Retest after a failure: straight back to testing when a slot is free and starting is allowed. */
  const retest = (pr: SimulatedPullRequest, now: number): void => {
    if (state === 'running' && testingCount() < settings.concurrency) startTesting(pr, now);
    else transition(pr, 'pending', now);
  };

  const restartTestingBehind = (index: number, now: number): void => {
    for (const pr of active.slice(index)) {
      if (pr.state === 'testing' && !changedIn(pr, now)) transition(pr, 'pending', now);
    }
  };

  const arrive = (now: number): void => {
    const damping = Math.max(0.05, 1 - active.length / 24);
    if (random.chance(arrivalsPerStep * damping)) submit(now);
  };

  const submit = (now: number): SimulatedPullRequest => {
    sequence += 1;
    const pr = createPullRequest(random, {
      number: nextPullRequestNumber(random),
      baseBranch: branch,
      sequence,
      now,
      requiresImpactedTargets: settings.mode === 'parallel',
    });
    statistics.arrivals += 1;
    // An urgent pull request interrupts whatever is testing (trunk-api-notes.md "Priority").
    if (pr.priorityName === 'urgent') restartTestingBehind(0, now);
    active.push(pr);
    active.sort(compareQueueOrder);
    byNumber.set(pr.number, pr);
    onChange?.(pr, undefined, now);
    return pr;
  };

  const ahead = (pr: SimulatedPullRequest): SimulatedPullRequest[] =>
    active.slice(0, active.indexOf(pr));

  const failPullRequest = (pr: SimulatedPullRequest, now: number): void => {
    const index = active.indexOf(pr);
    finish(pr, 'failed', now);
    if (settings.mode !== 'single') return;
    // In single mode everything behind was tested on top of the failed pull request.
    restartTestingBehind(index, now);
    for (const behind of active.slice(index)) {
      if (behind.state === 'pending_failure') behind.blamedOnPullRequestAhead = true;
    }
  };

  const stepPullRequest = (pr: SimulatedPullRequest, now: number, stepSeconds: number): void => {
    const paused = state === 'paused';
    const cancelChance = shape.heavyChurn
      ? HEAVY_CHURN_CANCEL_CHANCE
      : pr.state === 'not_ready' && !pr.readiness.doesBaseBranchMatch
        ? 0.01
        : 0.00015;
    if (random.chance(cancelChance)) {
      finish(pr, 'cancelled', now);
      return;
    }
    switch (pr.state) {
      case 'not_ready':
        evolveReadiness(random, pr);
        if (isReadyToTest(pr)) transition(pr, 'pending', now);
        return;
      case 'testing':
        if (paused) pr.phaseEndsAt += stepSeconds;
        else if (now >= pr.phaseEndsAt) {
          if (pr.testWillPass) transition(pr, 'tests_passed', now);
          else {
            transition(pr, 'pending_failure', now);
            pr.phaseEndsAt = now + random.int(60, 4 * 60);
          }
        } else if (random.chance(0.0003)) transition(pr, 'pending', now);
        return;
      case 'pending_failure':
        if (paused) pr.phaseEndsAt += stepSeconds;
        else if (now >= pr.phaseEndsAt) {
          if (pr.blamedOnPullRequestAhead) retest(pr, now);
          else if (ahead(pr).some((p) => p.state === 'testing' || p.state === 'pending_failure')) {
            return; // Still waiting to learn whether a pull request ahead caused the failure.
          } else if (random.chance(0.1)) retest(pr, now);
          else failPullRequest(pr, now);
        }
        return;
      case 'tests_passed': {
        if (paused || !random.chance(0.6)) return;
        const blocked = ahead(pr).some(
          (p) =>
            p.state === 'testing' || p.state === 'pending_failure' || p.state === 'tests_passed',
        );
        if (!blocked) finish(pr, 'merged', now);
        return;
      }
      case 'pending':
      case 'merged':
      case 'failed':
      case 'cancelled':
        return;
    }
  };

  const assignTestSlots = (now: number): void => {
    // Paused, draining and switching_modes all start nothing new.
    if (state !== 'running') return;
    let testing = testingCount();
    for (const pr of active) {
      if (testing >= settings.concurrency) return;
      if (pr.state === 'pending' && !changedIn(pr, now)) {
        startTesting(pr, now);
        testing += 1;
      }
    }
  };

  return {
    branch,
    settings,
    get state() {
      return state;
    },
    get stateChangedAt() {
      return stateChangedAt;
    },
    active,
    concluded: finished,
    find: (prNumber) => byNumber.get(prNumber),
    step(now, stepSeconds) {
      stepQueueState(now);
      // A sized queue gets its arrivals from the refill below, so its length stays exact.
      if (shape.pullRequests === undefined) arrive(now);
      for (const pr of [...active]) {
        if (active.includes(pr) && !changedIn(pr, now)) stepPullRequest(pr, now, stepSeconds);
      }
      assignTestSlots(now);
      while (shape.pullRequests !== undefined && active.length < shape.pullRequests) submit(now);
    },
    holdState(next, now, until) {
      state = next;
      stateChangedAt = now;
      stateEndsAt = until;
      recordQueueState(statistics, next);
    },
    submit,
    fail(pr, now) {
      if (active.includes(pr)) failPullRequest(pr, now);
    },
  };
}
