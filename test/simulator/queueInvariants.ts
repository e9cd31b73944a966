// Rules one observed step of a merge queue must obey, checked from two consecutive getQueue
// answers (live flavour, so items carry `state`) and getSubmittedPullRequest for PRs that left.
import { isFinalState } from '../../src/simulator/pullRequest.js';
import type { EnqueuedPullRequestBody } from '../../src/simulator/responses.js';
import type { SimulatedRepository } from '../../src/simulator/repositories.js';
import type { SimulatorWorld } from '../../src/simulator/world.js';

export interface QueueObservation {
  readonly state: string;
  readonly mode: string;
  readonly items: readonly EnqueuedPullRequestBody[];
}

export interface StepFindings {
  readonly violations: string[];
  /** Final states of the pull requests that left the queue in this step. */
  readonly finalStates: string[];
  /** testing -> pending transitions, by cause. */
  readonly restarts: { urgent: number; failureAhead: number; other: number };
}

/** Compares two observations one model step apart and reports broken rules and what happened. */
export function checkQueueStep(
  world: SimulatorWorld,
  repo: SimulatedRepository,
  branch: string,
  before: QueueObservation,
  after: QueueObservation,
): StepFindings {
  const key = `${repo.name}/${branch}`;
  const findings: StepFindings = {
    violations: [],
    finalStates: [],
    restarts: { urgent: 0, failureAhead: 0, other: 0 },
  };
  const violation = (pr: number, message: string) =>
    findings.violations.push(`${key} #${pr} at ${world.now()}: ${message}`);
  const now = new Map(after.items.map((pr) => [pr.prNumber, pr]));
  const beforeNumbers = new Set(before.items.map((pr) => pr.prNumber));
  const stepTime = new Date(world.now() * 1000).toISOString();
  // The queue state changes first in a step, so the state after it held for the whole step.
  const paused = after.state === 'paused';
  const stopped = after.state !== 'running';
  const urgentArrived = after.items.some(
    (pr) => pr.priorityName === 'urgent' && !beforeNumbers.has(pr.prNumber),
  );

  const finalStates = new Map<number, string>();
  for (const old of before.items) {
    if (now.has(old.prNumber)) continue;
    const left = world.getSubmittedPullRequest(repo, branch, old.prNumber);
    if (!left.ok) throw new Error(left.message);
    if (left.body.isCurrentlySubmittedToQueue || !isFinalState(left.body.state)) {
      violation(old.prNumber, `left the queue as ${left.body.state}`);
    }
    finalStates.set(old.prNumber, left.body.state);
    findings.finalStates.push(left.body.state);
  }
  const firstFailedIndex = before.items.findIndex(
    (pr) => finalStates.get(pr.prNumber) === 'failed',
  );

  for (const [index, old] of before.items.entries()) {
    const current = now.get(old.prNumber);
    const final = finalStates.get(old.prNumber);
    if (current !== undefined && current.state !== old.state) {
      if (current.stateChangedAt !== stepTime) violation(old.prNumber, 'stale stateChangedAt');
      if (paused && current.state !== 'pending') {
        violation(old.prNumber, `${old.state} -> ${current.state} while paused`);
      }
      if (stopped && current.state === 'testing') {
        violation(old.prNumber, `started testing while ${after.state}`);
      }
    }
    if (old.state === 'testing' && current !== undefined) {
      // An urgent arrival restarts everything testing (trunk-api-notes.md "Priority"); in single
      // mode a failure restarts everything testing behind it, which was tested on top of it.
      const failureAhead =
        after.mode === 'single' && firstFailedIndex !== -1 && firstFailedIndex < index;
      if ((urgentArrived || failureAhead) && current.state !== 'pending') {
        violation(old.prNumber, `not restarted (urgent: ${urgentArrived})`);
      }
      if (current.state === 'pending') {
        if (urgentArrived) findings.restarts.urgent += 1;
        else if (failureAhead) findings.restarts.failureAhead += 1;
        else findings.restarts.other += 1;
      }
    }
    if (paused && final !== undefined && final !== 'cancelled') {
      violation(old.prNumber, `${final} while paused`);
    }
    if (final === 'merged') {
      // Merges happen in order: nothing ahead is still in the testing pipeline. A PR ahead may
      // have started testing in this step, after the merge.
      const blocking = before.items
        .slice(0, index)
        .flatMap((ahead) => now.get(ahead.prNumber) ?? [])
        .filter(
          (ahead) =>
            ahead.state === 'tests_passed' ||
            ahead.state === 'pending_failure' ||
            (ahead.state === 'testing' && ahead.stateChangedAt !== stepTime),
        );
      if (blocking.length > 0) violation(old.prNumber, `merged ahead of ${blocking.length}`);
    }
  }
  return findings;
}
