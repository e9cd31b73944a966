// How pull requests move through a queue's testing: test slots and batches, runs that pass, fail
// or hang, bisection of a failed batch, retests and in-order merges ("Meaning of the states" in
// trunk-api-notes.md). The queue (mergeQueueModel.ts) owns who is in it and its own state.
import {
  evolveReadiness,
  isReadyToTest,
  type FinalPullRequestState,
  type PullRequestState,
  type SimulatedPullRequest,
} from './pullRequest.js';
import type { TransitionCause } from './entryRecorder.js';
import type { MergeQueueSettings } from './queueSettings.js';
import type { ScriptedQueue } from './scriptedQueue.js';
import type { QueueState } from './queueState.js';
import { unitHash, type Random } from './random.js';
import type { TestingEnding } from './testingHistory.js';

/** Share of failed batches (with other pull requests still testing) that Trunk bisects. */
const BISECTION_CHANCE = 0.8;

/** Heavy churn: a few percent of pull requests cancelled per step. */
const HEAVY_CHURN_CANCEL_CHANCE = 0.04;

/** What the flow needs of its queue. */
export interface FlowQueue {
  readonly random: Random;
  readonly settings: MergeQueueSettings;
  /** In queue order. */
  readonly active: readonly SimulatedPullRequest[];
  readonly heavyChurn: boolean;
  state(): QueueState;
  /** Until when (unix seconds) no testing ends and nothing merges: a scripted stall. */
  stalledUntil(): number;
  /** Whether a scripted incident fails every run that ends at `now`. */
  failsEveryRun(now: number): boolean;
  transition(
    pr: SimulatedPullRequest,
    to: PullRequestState,
    now: number,
    ending?: TestingEnding,
    cause?: TransitionCause,
  ): void;
  /** Takes a pull request out of the queue in a final state. */
  finish(pr: SimulatedPullRequest, to: FinalPullRequestState, now: number): void;
}

export interface PullRequestFlow {
  /** Moves one pull request by one step ending at `now`. */
  step(pr: SimulatedPullRequest, now: number, stepSeconds: number): void;
  /** Starts testing what may start now. */
  assignTestSlots(now: number): void;
  /** Restarts the testing of the pull requests from `index` on (an urgent arrival, a failure). */
  restartTestingBehind(index: number, now: number, cause: TransitionCause): void;
  /** Fails a pull request out of the queue, restarting what was tested on top of it. */
  fail(pr: SimulatedPullRequest, now: number): void;
  /** Starts testing on one run as told, drawing nothing from the random stream (scripts). */
  testNow: ScriptedQueue['testNow'];
}

/** The testing flow of `queue`. */
export function createPullRequestFlow(queue: FlowQueue): PullRequestFlow {
  const { random, settings, active } = queue;
  let batches = 0;
  // A pull request changes state at most once per step, so every state is visible for a step.
  const changedIn = (pr: SimulatedPullRequest, now: number): boolean => pr.stateChangedAt === now;
  const testingCount = (): number => active.filter((pr) => pr.state === 'testing').length;
  const ahead = (pr: SimulatedPullRequest): SimulatedPullRequest[] =>
    active.slice(0, active.indexOf(pr));

  const startTesting = (pr: SimulatedPullRequest, now: number, batch = ++batches): void => {
    pr.testingRun = { batch, isBisection: pr.bisecting };
    queue.transition(pr, 'testing', now);
    pr.blamedOn = undefined;
    if (random.chance(0.02)) {
      // A hung CI run: the queue gives up at the testing timeout.
      pr.phaseEndsAt = now + settings.testingTimeoutMinutes * 60;
      pr.testWillPass = false;
      pr.failureReason = 'TEST_RUN_TIMEOUT';
    } else {
      pr.phaseEndsAt = now + random.int(3 * 60, 15 * 60);
      pr.testWillPass = random.chance(0.85);
      pr.failureReason = 'TEST_RUN_REQUIRED_STATUS_FAILED';
    }
  };

  /** Retest after a failure: straight back to testing when a slot is free and starting is allowed. */
  const retest = (pr: SimulatedPullRequest, now: number): void => {
    if (queue.state() === 'running' && testingCount() < settings.concurrency) {
      startTesting(pr, now);
    } else {
      const prerequisite = pr.blamedOn;
      queue.transition(pr, 'pending', now, undefined, {
        // Unblamed, it is retried by hand: the failure looked flaky.
        reason: prerequisite ? 'PREREQUISITE_MERGE_ITEM_FAILED' : 'TESTS_RESTARTED_BY_USER',
        prerequisite,
      });
    }
  };

  const restartTestingBehind = (index: number, now: number, cause: TransitionCause): void => {
    for (const pr of active.slice(index)) {
      if (pr.state === 'testing' && !changedIn(pr, now)) {
        queue.transition(pr, 'pending', now, undefined, cause);
      }
    }
  };

  const fail = (pr: SimulatedPullRequest, now: number): void => {
    const index = active.indexOf(pr);
    queue.finish(pr, 'failed', now);
    if (settings.mode !== 'single') return;
    // In single mode everything behind was tested on top of the failed pull request.
    restartTestingBehind(index, now, {
      reason: 'PREREQUISITE_MERGE_ITEM_FAILED',
      prerequisite: pr,
    });
    for (const behind of active.slice(index)) {
      if (behind.state === 'pending_failure') behind.blamedOn = pr;
    }
  };

  /**
   * A failed stretch of testing. In a batching queue, the pull requests tested in the same batch
   * are usually bisected: their testing stops (it failed with the batch) and they test again. The
   * run's failure split the batch of each of them, so each row says so (`startedBisection`).
   */
  const failTesting = (pr: SimulatedPullRequest, now: number): void => {
    const batch = pr.testingRun.batch;
    const rest = settings.batch
      ? active.filter(
          (other) =>
            other !== pr &&
            other.state === 'testing' &&
            other.testingRun.batch === batch &&
            !changedIn(other, now),
        )
      : [];
    const bisects = rest.length > 0 && unitHash(`bisect:${pr.id}:${now}`) < BISECTION_CHANCE;
    queue.transition(pr, 'pending_failure', now, { outcome: 'failed', startedBisection: bisects });
    pr.phaseEndsAt = now + random.int(60, 4 * 60);
    if (!bisects) return;
    pr.bisecting = true;
    for (const other of rest) {
      other.bisecting = true;
      queue.transition(
        other,
        'pending',
        now,
        { outcome: 'failed', startedBisection: true },
        { reason: 'BISECTION_REQUIRED' },
      );
    }
  };

  const step = (pr: SimulatedPullRequest, now: number, stepSeconds: number): void => {
    const paused = queue.state() === 'paused';
    const stalled = now < queue.stalledUntil();
    const cancelChance = queue.heavyChurn
      ? HEAVY_CHURN_CANCEL_CHANCE
      : pr.state === 'not_ready' && !pr.readiness.doesBaseBranchMatch
        ? 0.01
        : 0.00015;
    if (random.chance(cancelChance)) {
      queue.finish(pr, 'cancelled', now);
      return;
    }
    switch (pr.state) {
      case 'not_ready':
        evolveReadiness(random, pr);
        if (isReadyToTest(pr)) queue.transition(pr, 'pending', now);
        return;
      case 'testing':
        if (paused || stalled) pr.phaseEndsAt += stepSeconds;
        else if (now >= pr.phaseEndsAt) {
          if (pr.testWillPass && !queue.failsEveryRun(now))
            queue.transition(pr, 'tests_passed', now);
          else failTesting(pr, now);
        } else if (random.chance(0.0003)) queue.transition(pr, 'pending', now);
        return;
      case 'pending_failure':
        if (paused) pr.phaseEndsAt += stepSeconds;
        else if (now >= pr.phaseEndsAt) {
          if (pr.blamedOn !== undefined) retest(pr, now);
          else if (ahead(pr).some((p) => p.state === 'testing' || p.state === 'pending_failure')) {
            return; // Still waiting to learn whether a pull request ahead caused the failure.
          } else if (random.chance(0.1)) retest(pr, now);
          else fail(pr, now);
        }
        return;
      case 'tests_passed': {
        if (paused || stalled || !random.chance(0.6)) return;
        const blocked = ahead(pr).some(
          (p) =>
            p.state === 'testing' || p.state === 'pending_failure' || p.state === 'tests_passed',
        );
        if (!blocked) queue.finish(pr, 'merged', now);
        return;
      }
      case 'pending':
      case 'merged':
      case 'failed':
      case 'cancelled':
        return;
    }
  };

  /**
   * A batching queue starts a batch once `batchingMinSize` pull requests wait or the oldest has
   * waited `batchingMaxWaitTimeMinutes`; those started together are one batch. A pull request
   * that may not batch tests alone, at once.
   */
  const assignTestSlots = (now: number): void => {
    // Paused, draining and switching_modes all start nothing new.
    if (queue.state() !== 'running') return;
    let waiting = active.filter((pr) => pr.state === 'pending' && !changedIn(pr, now));
    if (settings.batch) {
      const batchable = waiting.filter((pr) => !pr.noBatch);
      const oldest = Math.min(...batchable.map((pr) => pr.stateChangedAt));
      const due =
        batchable.length >= settings.batchingMinSize ||
        now - oldest >= settings.batchingMaxWaitTimeMinutes * 60;
      if (!due) waiting = waiting.filter((pr) => pr.noBatch);
    }
    const batch = ++batches;
    let testing = testingCount();
    for (const pr of waiting) {
      if (testing >= settings.concurrency) return;
      startTesting(pr, now, settings.batch && !pr.noBatch ? batch : ++batches);
      testing += 1;
    }
  };

  return {
    step,
    assignTestSlots,
    restartTestingBehind,
    fail,
    testNow(prs, now, lastsSeconds, passes) {
      const batch = ++batches;
      for (const pr of prs) {
        pr.testingRun = { batch, isBisection: pr.bisecting };
        queue.transition(pr, 'testing', now);
        pr.blamedOn = undefined;
        pr.phaseEndsAt = now + lastsSeconds;
        pr.testWillPass = passes;
        pr.failureReason = 'TEST_RUN_REQUIRED_STATUS_FAILED';
      }
    },
  };
}
