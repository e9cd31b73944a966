// Which exemplars the page writes. A histogram's bucket keeps the exemplar of its latest observation
// however old; the page writes it for an hour after the latest poll that could count the event it
// names (the testing results and the concluded entries are read at most PERIODIC_EXIT_READ_POLLS
// polls late): Prometheus scrapes it many times in that hour and holds it after, so writing it on
// every later scrape would only add bytes to the page.
import { PERIODIC_EXIT_READ_POLLS } from '../poller/v2/v2ExitLookup.js';
import type { TargetStatus } from '../snapshot/types.js';
import type { FamilySettings } from './family.js';

/** How long an exemplar is written after the last poll that could count its event, in seconds. */
export const EXEMPLAR_AFTER_COUNTED_SECONDS = 3600;

/**
 * Unix seconds from which a target's exemplars are written: the events a poll of the last hour
 * could have counted (a HistogramSample's exemplarsSince).
 */
export function recentExemplarsSince(status: TargetStatus, settings: FamilySettings): number {
  const polledAt = status.lastSuccessAt ?? Number.POSITIVE_INFINITY;
  const latestRead = PERIODIC_EXIT_READ_POLLS * settings.mergeQueueIntervalSeconds;
  return polledAt - latestRead - EXEMPLAR_AFTER_COUNTED_SECONDS;
}
