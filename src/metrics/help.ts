// HELP texts say how fresh a value can be, and from which call on each API: a gauge refreshed every
// hour must not be read like one refreshed every scrape, nor a v1 call looked for in v2 logs.
import { ENDPOINTS } from '../trunk/schemas.js';
import { V2_ENDPOINTS } from '../trunk/v2Schemas.js';

/** What refreshes a family on each API; an API left out cannot (the family says so). */
export interface Refreshers {
  /** The API v1 operation, e.g. `getQueue`. */
  readonly v1?: string;
  /** The API v2 read, e.g. `GET /v2/merge-queues`. */
  readonly v2?: string;
}

/** The calls that refresh the exporter's families, on each API. */
export const REFRESHED_BY = {
  /** A queue's state and settings. */
  queue: { v1: ENDPOINTS.getQueue, v2: `GET /${V2_ENDPOINTS.listMergeQueues}` },
  /** The PRs in a queue, their states, priorities and timestamps. */
  pullRequests: { v1: ENDPOINTS.getQueue, v2: `GET /${V2_ENDPOINTS.listQueuePullRequests}` },
  /** A not-ready PR's readiness. */
  readiness: {
    v1: ENDPOINTS.getSubmittedPullRequest,
    v2: `GET /${V2_ENDPOINTS.listQueuePullRequests}`,
  },
  /** A repository's flaky and broken tests (API v2 only). */
  unhealthyTests: { v2: `GET /${V2_ENDPOINTS.listTests}?status=flaky,broken` },
  /** The organization's test collections (API v2 only). */
  testCollections: { v2: `GET /${V2_ENDPOINTS.listTestCollections}` },
  /** A repository's quarantined tests. */
  quarantinedTests: {
    v1: ENDPOINTS.listQuarantinedTests,
    v2: `GET /${V2_ENDPOINTS.listTests}?quarantineState=quarantined`,
  },
} as const satisfies Record<string, Refreshers>;

/**
 * HELP suffix naming what refreshes the family on each API and its interval, e.g. "Refreshed by
 * polling getQueue (API v1) or GET /v2/merge-queues (API v2) every 30s."
 */
export function refreshedBy(by: Refreshers, intervalSeconds: number): string {
  const calls = [
    ...(by.v1 === undefined ? [] : [`${by.v1} (API v1)`]),
    ...(by.v2 === undefined ? [] : [`${by.v2} (API v2)`]),
  ];
  return `Refreshed by polling ${calls.join(' or ')} every ${formatInterval(intervalSeconds)}.`;
}

/** Formats a duration the way Prometheus configuration does: 30s, 5m, 1h30m, 0.5s. */
export function formatInterval(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds <= 0) return `${seconds}s`;
  if (!Number.isInteger(seconds)) return `${seconds}s`;
  const parts: string[] = [];
  let rest = seconds;
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  if (rest > 0) parts.push(`${rest}s`);
  return parts.join('');
}
