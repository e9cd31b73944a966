// One simulated pull request in a merge queue: its fixed facts, its mutable state and readiness.
import { unitHash, type Random } from './random.js';
import { pickAuthor, pickPullRequestTitle } from './vocabulary.js';

/** Pull request states of trunk-api-v1.md section 3. */
export const PULL_REQUEST_STATES = [
  'not_ready',
  'pending',
  'testing',
  'tests_passed',
  'pending_failure',
  'merged',
  'failed',
  'cancelled',
] as const;
export type PullRequestState = (typeof PULL_REQUEST_STATES)[number];

/** States in which a pull request has left the queue. */
export type FinalPullRequestState = Extract<PullRequestState, 'merged' | 'failed' | 'cancelled'>;

/** The live schema's host mergeability values (trunk-api-notes.md). */
export type HostMergeability = 'unspecified' | 'in_progress' | 'mergeable' | 'not_mergeable';

export type PriorityName = 'urgent' | 'high' | 'medium' | 'low';

/** Trunk's named priorities: lower is more urgent. */
export const PRIORITY_VALUES: Readonly<Record<PriorityName, number>> = {
  urgent: 0,
  high: 10,
  medium: 100,
  low: 200,
};

/** The priority Trunk uses when a submission names none. */
export const DEFAULT_PRIORITY_NAME: PriorityName = 'medium';

export interface SimulatedReadiness {
  requiresImpactedTargets: boolean;
  hasImpactedTargets: boolean;
  doesBaseBranchMatch: boolean;
  mergeability: HostMergeability;
}

export interface SimulatedPullRequest {
  readonly id: string;
  readonly number: number;
  readonly title: string;
  readonly sha: string;
  readonly author: string;
  readonly baseBranch: string;
  readonly priorityName: PriorityName;
  /** True when the submission named no priority, so Trunk applied the default. */
  readonly usedDefaultPriority: boolean;
  readonly skipTheLine: boolean;
  readonly noBatch: boolean;
  /** Force-enqueued pull requests skip the readiness rule. */
  readonly forceEnqueued: boolean;
  /** First submission order: with `submittedAt`, the entry's place in v2's list. */
  readonly sequence: number;
  /** Latest submission order, for first-in-first-out among equal priorities. */
  queueSequence: number;
  /** Unix seconds of the first submission (v2's queue entry `createdAt`: the entry is reused). */
  readonly submittedAt: number;
  /** Unix seconds of the latest submission: a resubmission starts a new trip through the queue. */
  lastSubmittedAt: number;
  /** How each trip through the queue ended, oldest first; one more than trips when in the queue. */
  readonly conclusions: { readonly state: FinalPullRequestState; readonly at: number }[];
  /** The run of the current (or last) stretch of testing: its batch, and whether it bisects. */
  testingRun: { readonly batch: number; readonly isBisection: boolean };
  /** In a bisection of its batch's failure: its next stretches of testing are bisection steps. */
  bisecting: boolean;
  state: PullRequestState;
  /** Unix seconds of the last state change. */
  stateChangedAt: number;
  readonly readiness: SimulatedReadiness;
  /** Unix seconds when the current test run or pending-failure wait ends. */
  phaseEndsAt: number;
  /** Outcome of the current test run, drawn when it starts. */
  testWillPass: boolean;
  /** The pull request ahead that failed while this one waited in `pending_failure`, if any. */
  blamedOn: SimulatedPullRequest | undefined;
  /** Why the current test run fails, if it does: its webhook's `failure_reason`. */
  failureReason: FailureReason;
}

/**
 * Why a test run fails: the `failure_reason` of pull_request.failed (Svix's catalog of Trunk's
 * events shows the first) and the `failed` reasons of v2's queue-entry history for a required
 * check that failed and for a run past the queue's testing timeout.
 */
export const FAILURE_REASONS = ['TEST_RUN_REQUIRED_STATUS_FAILED', 'TEST_RUN_TIMEOUT'] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

export interface NewPullRequestParams {
  readonly number: number;
  readonly baseBranch: string;
  readonly sequence: number;
  readonly now: number;
  readonly requiresImpactedTargets: boolean;
}

/** The trip through the queue a pull request is on (0 for its first submission). */
export function currentTrip(pr: SimulatedPullRequest): number {
  return isFinalState(pr.state) ? pr.conclusions.length - 1 : pr.conclusions.length;
}

/** A freshly submitted pull request in `not_ready`, with priorities and flags drawn realistically. */
export function createPullRequest(
  random: Random,
  params: NewPullRequestParams,
): SimulatedPullRequest {
  const roll = random.next();
  // Mostly the default; high and low are common enough to show up, urgent is rare.
  const priorityName: PriorityName =
    roll < 0.008 ? 'urgent' : roll < 0.1 ? 'high' : roll < 0.18 ? 'low' : 'medium';
  const usedDefaultPriority = priorityName === DEFAULT_PRIORITY_NAME && random.chance(0.9);
  const urgent = priorityName === 'urgent';
  const mergeabilityRoll = random.next();
  return {
    id: random.uuid(),
    number: params.number,
    title: urgent ? `Hotfix: ${pickPullRequestTitle(random)}` : pickPullRequestTitle(random),
    sha: random.hex(40),
    author: pickAuthor(random),
    baseBranch: params.baseBranch,
    priorityName,
    usedDefaultPriority,
    skipTheLine: random.chance(0.01),
    noBatch: random.chance(0.05),
    forceEnqueued: random.chance(0.02),
    sequence: params.sequence,
    queueSequence: params.sequence,
    submittedAt: params.now,
    lastSubmittedAt: params.now,
    conclusions: [],
    testingRun: { batch: 0, isBisection: false },
    bisecting: false,
    state: 'not_ready',
    stateChangedAt: params.now,
    readiness: {
      requiresImpactedTargets: params.requiresImpactedTargets,
      // Hotfixes usually come with targets already computed; others wait for CI to upload them.
      hasImpactedTargets: urgent ? random.chance(0.8) : false,
      doesBaseBranchMatch: random.chance(0.97),
      mergeability:
        mergeabilityRoll < 0.02
          ? 'unspecified'
          : mergeabilityRoll < 0.7
            ? 'in_progress'
            : 'mergeable',
    },
    phaseEndsAt: params.now,
    testWillPass: true,
    blamedOn: undefined,
    failureReason: 'TEST_RUN_REQUIRED_STATUS_FAILED',
  };
}

/** The readiness rule of trunk-api-v1.md 2.7 (force-enqueued pull requests bypass it). */
export function isReadyToTest(pr: SimulatedPullRequest): boolean {
  if (pr.forceEnqueued) return true;
  const r = pr.readiness;
  return (
    r.doesBaseBranchMatch &&
    r.mergeability === 'mergeable' &&
    (!r.requiresImpactedTargets || r.hasImpactedTargets)
  );
}

/** Moves the readiness signals of a `not_ready` pull request one step towards (or away from) ready. */
export function evolveReadiness(random: Random, pr: SimulatedPullRequest): void {
  const r = pr.readiness;
  if (!r.hasImpactedTargets && random.chance(0.08)) r.hasImpactedTargets = true;
  if (!r.doesBaseBranchMatch && random.chance(0.02)) r.doesBaseBranchMatch = true;
  switch (r.mergeability) {
    case 'unspecified':
      r.mergeability = 'in_progress';
      break;
    case 'in_progress':
      // Usually resolves within a minute; sometimes the host finds a conflict.
      if (random.chance(0.3)) r.mergeability = random.chance(0.08) ? 'not_mergeable' : 'mergeable';
      break;
    case 'not_mergeable':
      // The author rebases after a while.
      if (random.chance(0.012)) r.mergeability = 'in_progress';
      break;
    case 'mergeable':
      break;
  }
}

/** Share of cancelled pull requests that left because their author closed them on the host. */
const CANCELLED_BY_CLOSING = 0.3;

/** Whether a cancellation of `pr` was its author closing it (a pure function of its id). */
export function closedByItsAuthor(pr: SimulatedPullRequest): boolean {
  return unitHash(`closed:${pr.id}`) < CANCELLED_BY_CLOSING;
}

/** Whether a state means the pull request has left the queue. */
export function isFinalState(state: PullRequestState): state is FinalPullRequestState {
  return state === 'merged' || state === 'failed' || state === 'cancelled';
}

/** Queue order: skip-the-line first, then priority value, then submission order. */
export function compareQueueOrder(a: SimulatedPullRequest, b: SimulatedPullRequest): number {
  if (a.skipTheLine !== b.skipTheLine) return a.skipTheLine ? -1 : 1;
  const byPriority = PRIORITY_VALUES[a.priorityName] - PRIORITY_VALUES[b.priorityName];
  return byPriority !== 0 ? byPriority : a.queueSequence - b.queueSequence;
}
