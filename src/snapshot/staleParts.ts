// A failing target keeps showing what it last read until that is older than staleAfterSeconds.
// Most snapshots are read whole, by one poll, and are as old as the target's last successful poll;
// a flaky-tests snapshot has parts (quarantined tests; flaky and broken ones; test collections)
// that through API v2 come from organization-wide lists, each of which can fail alone, so each
// part goes stale by when it was read.
import type { Snapshot, TargetStatus } from './types.js';

/** When each part of a failing target's snapshot was read; none while the target is up. */
export function partReadTimes(status: TargetStatus): number[] {
  const { snapshot } = status;
  if (status.up !== false || snapshot === undefined) return [];
  const times =
    snapshot.kind === 'flaky_tests'
      ? [snapshot.quarantine, snapshot.unhealthy, snapshot.collections].map(
          (part) => part && (part.readAt ?? status.lastSuccessAt),
        )
      : [status.lastSuccessAt];
  return times.filter((time) => time !== undefined);
}

/**
 * What `status` shows at `now`: its snapshot without the parts a failing target read more than
 * `staleAfterSeconds` before; undefined when no part is left.
 */
export function shownSnapshot(
  status: TargetStatus,
  now: number,
  staleAfterSeconds: number,
): Snapshot | undefined {
  const { snapshot } = status;
  if (status.up !== false || snapshot === undefined) return snapshot;
  const fresh = (readAt: number | undefined) =>
    readAt === undefined || !turnsStale(readAt, now, staleAfterSeconds);
  if (snapshot.kind === 'merge_queue') return fresh(status.lastSuccessAt) ? snapshot : undefined;
  const kept = <P extends { readonly readAt?: number | undefined }>(part: P | undefined) =>
    part && fresh(part.readAt ?? status.lastSuccessAt) ? part : undefined;
  const quarantine = kept(snapshot.quarantine);
  const unhealthy = kept(snapshot.unhealthy);
  const collections = kept(snapshot.collections);
  if (
    quarantine === snapshot.quarantine &&
    unhealthy === snapshot.unhealthy &&
    collections === snapshot.collections
  ) {
    return snapshot;
  }
  if (quarantine === undefined && unhealthy === undefined && collections === undefined) {
    return undefined;
  }
  return { ...snapshot, quarantine, unhealthy, collections };
}

/** Whether data read at `readAt` is stale at `now`. */
export function turnsStale(readAt: number, now: number, staleAfterSeconds: number): boolean {
  return now - readAt > staleAfterSeconds;
}
