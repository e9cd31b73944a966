// What each kind of scripted incident does to the world (incidents.ts schedules them): through the
// models' incident hooks only, drawing nothing from their streams. Some keep state from their start
// to their end (the pull requests of a burst, the repository whose API is out).
import type { SimulatedPullRequest } from './pullRequest.js';
import type { ScriptableWorld } from './world.js';

export type IncidentKind =
  | 'paused'
  | 'draining'
  | 'stuck_testing'
  | 'failure_burst'
  | 'quarantine_jump'
  | 'api_outage'
  | 'eviction_loop'
  | 'stalled_queue'
  | 'test_broken'
  | 'required_check_failing'
  | 'target_branch_pushes';

/** Where an incident happens and for how long. */
export interface IncidentTarget {
  readonly kind: IncidentKind;
  /** `host/owner/name`. */
  readonly repo: string;
  /** '' for repository-wide incidents (quarantine, outage). */
  readonly branch: string;
  readonly lastsSeconds: number;
}

/** How far past its testing timeout the stuck pull request already is when it appears. */
const STUCK_PAST_TIMEOUT_SECONDS = 35 * 60;
/** Pull requests submitted and then failed together in a failure burst. */
export const FAILURE_BURST_SIZE = 6;
/** Tests quarantined at once in a quarantine jump (the alert's threshold is 10). */
export const QUARANTINE_JUMP_SIZE = 15;
/** How long each testing of the pull request in an eviction loop lasts before it fails. */
export const EVICTION_TESTING_SECONDS = 45;
/** How long its author waits after a failure before submitting it again. */
export const EVICTION_RESUBMIT_SECONDS = 30;

/** The required check that fails every run of its queue in a `required_check_failing` incident. */
export const FAILING_REQUIRED_CHECK = 'e2e';
/** How often someone pushes to the target branch during a `target_branch_pushes` incident. */
export const TARGET_BRANCH_PUSH_EVERY_SECONDS = 60;

export interface IncidentEffects {
  /** The incident begins at `now`. */
  start(incident: IncidentTarget, now: number, world: ScriptableWorld): void;
  /** Every step while it lasts, after its start (`since` seconds ago). */
  during(incident: IncidentTarget, since: number, now: number, world: ScriptableWorld): void;
  /** It ends at `now`. */
  end(incident: IncidentTarget, now: number, world: ScriptableWorld): void;
  /** The repository whose API answers 503 now, if an outage is under way. */
  outageRepo(): string | undefined;
}

/** The effects of the incidents of one cycle, with the state they keep. */
export function createIncidentEffects(): IncidentEffects {
  let burst: SimulatedPullRequest[] = [];
  let jumpedTests: readonly string[] = [];
  let outageRepo: string | undefined;
  let evicted: SimulatedPullRequest | undefined;
  /** The test that turns broken: the same one every cycle, chosen at the first. */
  let breaking: string | undefined;

  const start = (incident: IncidentTarget, now: number, world: ScriptableWorld): void => {
    const until = now + incident.lastsSeconds;
    const queue = world.queue(incident.repo, incident.branch);
    switch (incident.kind) {
      case 'paused':
      case 'draining':
        queue?.holdState(incident.kind, now, until);
        return;
      case 'stuck_testing': {
        if (queue === undefined) return;
        // A CI run that hung long ago and that the queue never timed out; it fails when released.
        const pr = makeReady(queue.submit(now));
        queue.place(pr, 'testing', now);
        pr.stateChangedAt =
          now - queue.settings.testingTimeoutMinutes * 60 - STUCK_PAST_TIMEOUT_SECONDS;
        pr.phaseEndsAt = until;
        pr.testWillPass = false;
        return;
      }
      case 'failure_burst':
        if (queue === undefined) return;
        burst = Array.from({ length: FAILURE_BURST_SIZE }, () => {
          const pr = makeReady(queue.submit(now));
          queue.place(pr, 'pending', now);
          return pr;
        });
        return;
      case 'quarantine_jump': {
        const list = world.quarantine(incident.repo);
        if (list === undefined) return;
        list.release(jumpedTests);
        jumpedTests = list.quarantineBatch(now, QUARANTINE_JUMP_SIZE);
        return;
      }
      case 'api_outage':
        outageRepo = incident.repo;
        return;
      case 'eviction_loop':
        evicted = queue === undefined ? undefined : makeReady(queue.submit(now));
        return;
      case 'stalled_queue':
        queue?.stall(until);
        return;
      case 'test_broken': {
        const tests = world.tests(incident.repo);
        breaking ??= tests?.tests.find((test) => test.status === 'HEALTHY')?.testCaseId;
        if (breaking !== undefined) tests?.setStatus(breaking, 'BROKEN', now);
        return;
      }
      case 'required_check_failing':
        queue?.failRequiredCheck(FAILING_REQUIRED_CHECK, until);
        return;
      case 'target_branch_pushes':
        queue?.pushToTargetBranch(now);
        return;
    }
  };

  const during = (
    incident: IncidentTarget,
    since: number,
    now: number,
    world: ScriptableWorld,
  ): void => {
    if (
      incident.kind === 'target_branch_pushes' &&
      since % TARGET_BRANCH_PUSH_EVERY_SECONDS === 0
    ) {
      world.queue(incident.repo, incident.branch)?.pushToTargetBranch(now);
    }
    if (incident.kind !== 'eviction_loop' || evicted === undefined) return;
    const queue = world.queue(incident.repo, incident.branch);
    if (queue === undefined) return;
    const pr = evicted;
    // One state change per step: each waits for the step after the last change.
    const settled = pr.stateChangedAt < now;
    switch (pr.state) {
      case 'pending':
        if (settled) queue.testNow([pr], now, EVICTION_TESTING_SECONDS, false);
        return;
      case 'testing':
        // Started by the queue itself: it fails all the same.
        pr.testWillPass = false;
        pr.phaseEndsAt = Math.min(pr.phaseEndsAt, pr.stateChangedAt + EVICTION_TESTING_SECONDS);
        return;
      case 'pending_failure':
        if (settled) queue.fail(pr, now);
        return;
      case 'failed':
        if (now - pr.stateChangedAt >= EVICTION_RESUBMIT_SECONDS) {
          queue.resubmit(pr, now);
          makeReady(pr);
        }
        return;
      case 'not_ready':
      case 'tests_passed':
      case 'merged':
      case 'cancelled':
        return;
    }
  };

  const end = (incident: IncidentTarget, now: number, world: ScriptableWorld): void => {
    if (incident.kind === 'failure_burst') {
      const queue = world.queue(incident.repo, incident.branch);
      for (const pr of burst) queue?.fail(pr, now);
      burst = [];
    } else if (incident.kind === 'api_outage' && outageRepo === incident.repo) {
      outageRepo = undefined;
    } else if (incident.kind === 'eviction_loop') {
      // Its author gives up: a loop still in the queue is cancelled.
      if (evicted !== undefined) world.queue(incident.repo, incident.branch)?.cancel(evicted, now);
      evicted = undefined;
    } else if (incident.kind === 'test_broken' && breaking !== undefined) {
      world.tests(incident.repo)?.setStatus(breaking, 'HEALTHY', now);
    }
    // Queue states, stalls, failing checks and pushes end on their own; the stuck pull request
    // fails when its run ends.
  };

  return { start, during, end, outageRepo: () => outageRepo };
}

/** Readiness met, so the pull request may test (scripted pull requests skip the readiness wait). */
function makeReady(pr: SimulatedPullRequest): SimulatedPullRequest {
  pr.readiness.doesBaseBranchMatch = true;
  pr.readiness.mergeability = 'mergeable';
  pr.readiness.hasImpactedTargets = true;
  return pr;
}
