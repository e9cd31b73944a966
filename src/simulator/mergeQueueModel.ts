// One simulated merge queue (repository + target branch): settings, queue state and the pull
// requests moving through it, following "Meaning of the states" in trunk-api-notes.md.
import {
  compareQueueOrder,
  createPullRequest,
  currentTrip,
  isFinalState,
  type FinalPullRequestState,
  type PullRequestState,
  type SimulatedPullRequest,
} from './pullRequest.js';
import type { EntryHistory } from './entryHistory.js';
import { createEntryRecorder, type TransitionCause } from './entryRecorder.js';
import { createPullRequestFlow } from './pullRequestFlow.js';
import { drawSettings, type MergeQueueSettings } from './queueSettings.js';
import type { QueueState } from './queueState.js';
import type { Random } from './random.js';
import { createResubmissions } from './resubmissions.js';
import { createQueueStateCycle } from './queueStateCycle.js';
import { recordTransition, type SimulatorStatistics } from './statistics.js';
import {
  createTestingHistory,
  outcomeOf,
  type TestingEnding,
  type TestingHistory,
} from './testingHistory.js';
import type { ScriptedQueue } from './scriptedQueue.js';
import type { VerificationRuns } from './verificationRuns.js';

export type { MergeQueueSettings } from './queueSettings.js';
export type { QueueState } from './queueState.js';

/** Finished pull requests kept so getSubmittedPullRequest can still answer for them. */
const FINISHED_HISTORY = 200;

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

/** Heavy churn: a new pull request most steps (and a few percent cancelled: pullRequestFlow.ts). */
const HEAVY_CHURN_ARRIVALS_PER_STEP = 0.6;

/** A merge queue as the world, its scripts and the API views read it. */
export interface MergeQueueModel extends ScriptedQueue {
  readonly branch: string;
  readonly settings: MergeQueueSettings;
  readonly state: QueueState;
  /** Unix seconds of the last change of the queue's state (and so of its mode). */
  readonly stateChangedAt: number;
  /** Pull requests in the queue, in queue order. */
  readonly active: readonly SimulatedPullRequest[];
  /** The most recent pull requests that left the queue (at most FINISHED_HISTORY), oldest first. */
  readonly concluded: readonly SimulatedPullRequest[];
  /** Every stretch of testing that ended recently (v2's testing results). */
  readonly testing: Pick<TestingHistory, 'attempts'>;
  /** Its entries' transitions and why they happened (v2's queue-entry history). */
  readonly entries: Pick<EntryHistory, 'timeline'>;
  /** The CI runs of its testing (v2's verification runs). */
  readonly verificationRuns: Pick<VerificationRuns, 'runs' | 'run'>;
  /** A pull request submitted to this queue, in it or recently finished. */
  find(prNumber: number): SimulatedPullRequest | undefined;
  /** Moves the queue forward by one step ending at `now`. */
  step(now: number, stepSeconds: number): void;
}

/** What a queue is made of. */
export interface MergeQueueModelOptions {
  /** The queue's own stream: everything its pull requests do. */
  readonly random: Random;
  /** A stream for what its records add (reasons, checks), so the queue's own draws stay as they were. */
  readonly recordsRandom: Random;
  readonly branch: string;
  readonly nextPullRequestNumber: PullRequestNumberSource;
  readonly statistics: SimulatorStatistics;
  readonly shape?: MergeQueueShape | undefined;
  /** The queue's not-ready timeout (v2's `notReadyTimeoutMinutes`). */
  readonly notReadyTimeoutMinutes: number;
  readonly onChange?: PullRequestChangeListener | undefined;
}

/** A merge queue with its own random stream; its state changes only through `step`. */
export function createMergeQueueModel(options: MergeQueueModelOptions): MergeQueueModel {
  const { random, branch, nextPullRequestNumber, statistics, onChange } = options;
  const shape = options.shape ?? {};
  const settings = drawSettings(random);
  // Busy branches get more submissions; the arrival rate shrinks as the queue grows, like
  // developers holding back when the queue is long, which keeps it around 3-15 pull requests.
  const naturalArrivals = branch === 'release' ? 0.018 : random.pick([0.026, 0.03, 0.034]);
  const arrivalsPerStep = shape.heavyChurn ? HEAVY_CHURN_ARRIVALS_PER_STEP : naturalArrivals;
  const queueState = createQueueStateCycle(random, settings, statistics);
  let sequence = 0;
  let stalledUntil = 0;
  let failingCheck = { name: '', until: 0 };
  let scriptedRuns = 0;
  const active: SimulatedPullRequest[] = [];
  const finished: SimulatedPullRequest[] = [];
  const byNumber = new Map<number, SimulatedPullRequest>();
  const history = createTestingHistory(currentTrip);
  // Sized and churning queues are benchmarks' shapes: their own arrivals say what comes in.
  const resubmissions = createResubmissions(
    shape.pullRequests === undefined && shape.heavyChurn !== true,
  );

  const records = createEntryRecorder({
    random: options.recordsRandom,
    settings,
    active,
    notReadyTimeoutSeconds: options.notReadyTimeoutMinutes * 60,
    failingCheck: (now) => (now < failingCheck.until ? failingCheck.name : undefined),
  });

  const transition = (
    pr: SimulatedPullRequest,
    to: PullRequestState,
    now: number,
    ending?: TestingEnding,
    cause?: TransitionCause,
  ): void => {
    const from = pr.state;
    const told =
      from === 'testing'
        ? (ending ?? { outcome: outcomeOf(to), startedBisection: false })
        : undefined;
    records.moving(pr, to, now, told?.outcome, cause);
    if (told !== undefined) {
      history.record(pr, told, pr.stateChangedAt, now);
      if (told.outcome === 'passed') pr.bisecting = false;
    }
    recordTransition(statistics, from, to);
    pr.state = to;
    pr.stateChangedAt = now;
    onChange?.(pr, from, now);
  };

  const finish = (pr: SimulatedPullRequest, to: FinalPullRequestState, now: number): void => {
    transition(pr, to, now);
    pr.conclusions.push({ state: to, at: now });
    pr.bisecting = false;
    active.splice(active.indexOf(pr), 1);
    finished.push(pr);
    if (finished.length > FINISHED_HISTORY) {
      const evicted = finished.shift();
      if (evicted !== undefined) {
        byNumber.delete(evicted.number);
        records.history.forget(evicted);
      }
    }
    if (to === 'failed') resubmissions.failed(pr, now);
  };

  const flow = createPullRequestFlow({
    random,
    settings,
    active,
    heavyChurn: shape.heavyChurn === true,
    state: () => queueState.state,
    stalledUntil: () => stalledUntil,
    failsEveryRun: (now) => now < failingCheck.until,
    transition,
    finish,
  });

  const arrive = (now: number): void => {
    const damping = Math.max(0.05, 1 - active.length / 24);
    if (random.chance(arrivalsPerStep * damping)) submit(now);
  };

  /** Puts `pr` in the queue in `not_ready`, as a submission does, and tells of it. */
  const enter = (pr: SimulatedPullRequest, now: number): void => {
    statistics.arrivals += 1;
    // An urgent pull request interrupts whatever is testing (trunk-api-notes.md "Priority").
    if (pr.priorityName === 'urgent') {
      flow.restartTestingBehind(0, now, { reason: 'SKIP_THE_LINE_INTERRUPTED' });
    }
    active.push(pr);
    active.sort(compareQueueOrder);
    byNumber.set(pr.number, pr);
    records.submitted(pr, now);
    onChange?.(pr, undefined, now);
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
    enter(pr, now);
    return pr;
  };

  const resubmit = (pr: SimulatedPullRequest, now: number): void => {
    const index = finished.indexOf(pr);
    // Only a pull request that left the queue and is still remembered can come back.
    if (!isFinalState(pr.state) || index === -1) return;
    finished.splice(index, 1);
    sequence += 1;
    pr.queueSequence = sequence;
    pr.lastSubmittedAt = now;
    pr.state = 'not_ready';
    pr.stateChangedAt = now;
    statistics.resubmissions += 1;
    enter(pr, now);
  };

  return {
    branch,
    settings,
    get state() {
      return queueState.state;
    },
    get stateChangedAt() {
      return queueState.changedAt;
    },
    active,
    concluded: finished,
    testing: history,
    entries: records.history,
    verificationRuns: records.runs,
    find: (prNumber) => byNumber.get(prNumber),
    step(now, stepSeconds) {
      queueState.step(now);
      for (const pr of resubmissions.due(now)) if (pr.state === 'failed') resubmit(pr, now);
      // A sized queue gets its arrivals from the refill below, so its length stays exact.
      if (shape.pullRequests === undefined) arrive(now);
      for (const pr of [...active]) {
        // A pull request changes state at most once per step, so every state shows for a step.
        if (active.includes(pr) && pr.stateChangedAt !== now) flow.step(pr, now, stepSeconds);
      }
      flow.assignTestSlots(now);
      while (shape.pullRequests !== undefined && active.length < shape.pullRequests) submit(now);
    },
    holdState(next, now, until) {
      queueState.hold(next, now, until);
    },
    submit,
    fail(pr, now) {
      if (active.includes(pr)) flow.fail(pr, now);
    },
    cancel(pr, now) {
      if (active.includes(pr)) finish(pr, 'cancelled', now);
    },
    resubmit,
    testNow(prs, now, lastsSeconds, passes) {
      const waiting = prs.filter((pr) => active.includes(pr) && pr.state === 'pending');
      if (waiting.length > 0) flow.testNow(waiting, now, lastsSeconds, passes);
    },
    place(pr, to, now) {
      if (!active.includes(pr)) return;
      // A run of the script's own, numbered apart from the queue's batches.
      if (to === 'testing') pr.testingRun = { batch: -++scriptedRuns, isBisection: false };
      records.moving(pr, to, now, undefined);
      pr.state = to;
      pr.stateChangedAt = now;
    },
    failRequiredCheck(name, until) {
      failingCheck = { name, until };
      if (!settings.requiredStatuses.includes(name)) {
        settings.requiredStatuses = [...settings.requiredStatuses, name];
      }
    },
    pushToTargetBranch(now) {
      flow.restartTestingBehind(0, now, { reason: 'MANUAL_PUSH_TO_TARGET_BRANCH' });
    },
    stall(until) {
      stalledUntil = until;
    },
  };
}
