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
import { createPullRequestFlow } from './pullRequestFlow.js';
import { drawSettings, type MergeQueueSettings } from './queueSettings.js';
import type { QueueState } from './queueState.js';
import { unitHash, type Random } from './random.js';
import { recordQueueState, recordTransition, type SimulatorStatistics } from './statistics.js';
import {
  createTestingHistory,
  outcomeOf,
  type TestingEnding,
  type TestingHistory,
} from './testingHistory.js';

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

/** Share of failed pull requests their author submits again, 2-20 minutes later, unchanged. */
const RESUBMIT_CHANCE = 0.15;

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
  /** Every stretch of testing that ended recently (v2's testing results). */
  readonly testing: Pick<TestingHistory, 'attempts'>;
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
  /** Scripted incidents: cancels an active pull request now. */
  cancel(pr: SimulatedPullRequest, now: number): void;
  /** Submits a pull request that left the queue again (same entry, to the back of the queue). */
  resubmit(pr: SimulatedPullRequest, now: number): void;
  /** Scripted incidents: starts testing a `pending` pull request now, whatever the free slots. */
  testNow(pr: SimulatedPullRequest, now: number, lastsSeconds: number, passes: boolean): void;
  /**
   * Scripted incidents: the provider stops answering until `until`: no status check reports, so
   * no stretch of testing ends, and no merge goes through.
   */
  stall(until: number): void;
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
  let stalledUntil = 0;
  const active: SimulatedPullRequest[] = [];
  const finished: SimulatedPullRequest[] = [];
  const byNumber = new Map<number, SimulatedPullRequest>();
  const history = createTestingHistory(currentTrip);
  const resubmissions: { readonly pr: SimulatedPullRequest; readonly at: number }[] = [];
  // Sized and churning queues are benchmarks' shapes: their own arrivals say what comes in.
  const resubmitsFailures = shape.pullRequests === undefined && shape.heavyChurn !== true;

  const transition = (
    pr: SimulatedPullRequest,
    to: PullRequestState,
    now: number,
    ending?: TestingEnding,
  ): void => {
    const from = pr.state;
    if (from === 'testing') {
      const told = ending ?? { outcome: outcomeOf(to), startedBisection: false };
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
      if (evicted !== undefined) byNumber.delete(evicted.number);
    }
    const trip = `${pr.id}:${pr.conclusions.length}`;
    if (to === 'failed' && resubmitsFailures && unitHash(`resubmit:${trip}`) < RESUBMIT_CHANCE) {
      const at = now + 120 + Math.floor(unitHash(`resubmit-delay:${trip}`) * 1080);
      resubmissions.push({ pr, at });
      resubmissions.sort((x, y) => x.at - y.at);
    }
  };

  const flow = createPullRequestFlow({
    random,
    settings,
    active,
    heavyChurn: shape.heavyChurn === true,
    state: () => state,
    stalledUntil: () => stalledUntil,
    transition,
    finish,
  });

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

  const arrive = (now: number): void => {
    const damping = Math.max(0.05, 1 - active.length / 24);
    if (random.chance(arrivalsPerStep * damping)) submit(now);
  };

  /** Puts `pr` in the queue in `not_ready`, as a submission does, and tells of it. */
  const enter = (pr: SimulatedPullRequest, now: number): void => {
    statistics.arrivals += 1;
    // An urgent pull request interrupts whatever is testing (trunk-api-notes.md "Priority").
    if (pr.priorityName === 'urgent') flow.restartTestingBehind(0, now);
    active.push(pr);
    active.sort(compareQueueOrder);
    byNumber.set(pr.number, pr);
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

  const resubmitDue = (now: number): void => {
    while (resubmissions.length > 0 && (resubmissions[0]?.at ?? Infinity) <= now) {
      const due = resubmissions.shift();
      if (due !== undefined && due.pr.state === 'failed') resubmit(due.pr, now);
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
    testing: history,
    find: (prNumber) => byNumber.get(prNumber),
    step(now, stepSeconds) {
      stepQueueState(now);
      resubmitDue(now);
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
      state = next;
      stateChangedAt = now;
      stateEndsAt = until;
      recordQueueState(statistics, next);
    },
    submit,
    fail(pr, now) {
      if (active.includes(pr)) flow.fail(pr, now);
    },
    cancel(pr, now) {
      if (active.includes(pr)) finish(pr, 'cancelled', now);
    },
    resubmit,
    testNow(pr, now, lastsSeconds, passes) {
      if (active.includes(pr) && pr.state === 'pending')
        flow.testNow(pr, now, lastsSeconds, passes);
    },
    stall(until) {
      stalledUntil = until;
    },
  };
}
