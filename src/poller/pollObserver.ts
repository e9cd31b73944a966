import type { PollKind } from '../snapshot/types.js';

/**
 * What the poller reports about its own schedule. Implemented by the metrics layer, so the poller
 * never imports prom-client and tests can count without a registry.
 */
export interface PollObserver {
  /** A poll of a target of this kind was still running when its interval had passed. */
  pollOverran(kind: PollKind): void;
}
