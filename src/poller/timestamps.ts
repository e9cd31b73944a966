import { exportableSeconds } from '../trunk/timestamps.js';

/**
 * Unix seconds of an RFC 3339 timestamp, or undefined when it is absent, malformed or outside
 * 2000-2100 (the client has counted that as an API anomaly): such a value is never exported.
 */
export function parseTimestampSeconds(value: string | null | undefined): number | undefined {
  return exportableSeconds(value);
}

/** One millisecond, the resolution of Trunk's timestamps: the least one time can be after another. */
export const TIMESTAMP_RESOLUTION_SECONDS = 0.001;

/** Unix seconds as an ISO 8601 instant (UTC), as request filters and log lines give times. */
export function isoTime(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toISOString();
}
