// Counts of what happened in the simulated world. Responses only show the present; these let tests
// and the demo check that the model actually moves (restarts, failures, list churn).
import type { QueueState } from './queueState.js';
import type { PullRequestState } from './pullRequest.js';

/** Cumulative event counts since the world was created (warm-up included). */
export interface SimulatorStatistics {
  /** Pull requests submitted to any queue, resubmissions included. */
  arrivals: number;
  /** Pull requests submitted again after they left a queue. */
  resubmissions: number;
  /** Pull request transitions keyed `from->to`, e.g. `testing->pending` for restarts. */
  readonly transitions: Record<string, number>;
  /** How often each queue state was entered. */
  readonly queueStatesEntered: Partial<Record<QueueState, number>>;
  quarantineAdded: number;
  quarantineRemoved: number;
  quarantineStatusChanges: number;
  /** Status changes of tests that are not quarantined. */
  testStatusChanges: number;
}

/** Empty counters. */
export function createStatistics(): SimulatorStatistics {
  return {
    arrivals: 0,
    resubmissions: 0,
    transitions: {},
    queueStatesEntered: {},
    quarantineAdded: 0,
    quarantineRemoved: 0,
    quarantineStatusChanges: 0,
    testStatusChanges: 0,
  };
}

/** Counts one pull request transition. */
export function recordTransition(
  statistics: SimulatorStatistics,
  from: PullRequestState,
  to: PullRequestState,
): void {
  const key = `${from}->${to}`;
  statistics.transitions[key] = (statistics.transitions[key] ?? 0) + 1;
}

/** Counts one queue state change. */
export function recordQueueState(statistics: SimulatorStatistics, state: QueueState): void {
  statistics.queueStatesEntered[state] = (statistics.queueStatesEntered[state] ?? 0) + 1;
}

/** A deep copy, so callers cannot alter the world's counters. */
export function copyStatistics(statistics: SimulatorStatistics): SimulatorStatistics {
  return {
    ...statistics,
    transitions: { ...statistics.transitions },
    queueStatesEntered: { ...statistics.queueStatesEntered },
  };
}
