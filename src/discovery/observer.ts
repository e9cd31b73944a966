import type { PollKind } from '../snapshot/types.js';

/**
 * What discovery reports. Implemented by the metrics layer, so discovery never imports prom-client
 * and tests can count without a registry.
 */
export interface DiscoveryObserver {
  /** Targets found by discovery (not configured) that this instance polls, by kind. */
  discoveredTargets(counts: Readonly<Record<PollKind, number>>): void;
  /** A list of the organization's merge queues was read at `at` (unix seconds). */
  discoverySucceeded(at: number): void;
}
