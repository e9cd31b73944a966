// A merge queue's settings (trunk-api-v1.md 2.5), drawn once per queue.
import type { Random } from './random.js';

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
  /** The checks a run must pass; a scripted incident may add one (`failRequiredCheck`). */
  requiredStatuses: readonly string[];
  readonly directMergeMode: 'off' | 'always';
  readonly optimizationMode: 'off' | 'bisection_skip_redundant_tests';
  readonly mergeMethod: 'merge_commit' | 'squash' | 'rebase';
}

/** The checks every run of a queue reports; those not required are optional (they fail no run). */
export const STATUS_NAMES: readonly string[] = [
  'ci/build',
  'ci/unit-tests',
  'ci/integration',
  'lint',
  'e2e',
];

/** Draws stable, plausible settings for a new queue. */
export function drawSettings(random: Random): MergeQueueSettings {
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
