// What scripted incidents (incidents.ts, and tests) may do to a merge queue on top of its random
// model: each hook changes the queue as the engine would, drawing nothing from the queue's stream.
import type { SimulatedPullRequest } from './pullRequest.js';
import type { QueueState } from './queueState.js';

/** The hooks of a merge queue for scripts. */
export interface ScriptedQueue {
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
  /**
   * Submits a pull request that left the queue again (same entry, to the back of the queue): its
   * author does so for some failures, and scripts for theirs.
   */
  resubmit(pr: SimulatedPullRequest, now: number): void;
  /**
   * Scripted incidents: starts testing the `pending` pull requests of `prs` now on one run,
   * whatever the free slots.
   */
  testNow(
    prs: readonly SimulatedPullRequest[],
    now: number,
    lastsSeconds: number,
    passes: boolean,
  ): void;
  /**
   * Scripted incidents: puts an active pull request in `state` now (`testing`: on a run of its
   * own), as the engine would, but telling no listener.
   */
  place(pr: SimulatedPullRequest, state: 'pending' | 'testing', now: number): void;
  /**
   * Scripted incidents: until `until`, every run of the queue that ends fails on the required
   * check `name`, which the queue requires from now on.
   */
  failRequiredCheck(name: string, until: number): void;
  /** Scripted incidents: someone pushes to the target branch: every testing entry restarts. */
  pushToTargetBranch(now: number): void;
  /**
   * Scripted incidents: the provider stops answering until `until`: no status check reports, so
   * no stretch of testing ends, and no merge goes through.
   */
  stall(until: number): void;
}
