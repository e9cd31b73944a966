// A target's status is made of parts, each filled by its own reads (declared in poller/), and each
// hidden alone once its data is too old to show. A failing target keeps showing what it last read
// until that is older than staleAfterSeconds. Gauges (the queue, the quarantined tests, the flaky
// and broken tests) go stale with their target: when it is down, or when their own read failed.
// Counts (the flow ledger, the testing attempts) only count what was seen and are kept while the
// target is down; they go stale only when their own read keeps failing, since the counts it would
// have added are then missing.
import { SNAPSHOT_PARTS, type Snapshot, type SnapshotPart, type TargetStatus } from './types.js';

interface PartShape {
  /** A gauge: stale with its target too (when it is down), not only by its own read. */
  readonly withTarget: boolean;
  readonly shown: (status: TargetStatus) => boolean;
  readonly hidden: (status: TargetStatus) => TargetStatus;
}

/** A flaky-tests snapshot without one part; undefined when no part is left. */
function withoutTestPart(
  snapshot: Snapshot | undefined,
  part: 'quarantine' | 'unhealthy' | 'collections',
) {
  if (snapshot?.kind !== 'flaky_tests') return snapshot;
  const rest = { ...snapshot, [part]: undefined };
  const empty =
    rest.quarantine === undefined && rest.unhealthy === undefined && rest.collections === undefined;
  return empty ? undefined : rest;
}

const PARTS: Readonly<Record<SnapshotPart, PartShape>> = {
  queue: {
    withTarget: true,
    shown: ({ snapshot }) => snapshot?.kind === 'merge_queue',
    hidden: (status) => ({ ...status, snapshot: undefined }),
  },
  flow: {
    withTarget: false,
    shown: ({ queueFlow }) => queueFlow !== undefined,
    hidden: (status) => ({ ...status, queueFlow: undefined }),
  },
  testing: {
    withTarget: false,
    shown: ({ testingAttempts }) => testingAttempts !== undefined,
    hidden: (status) => ({ ...status, testingAttempts: undefined }),
  },
  quarantine: {
    withTarget: true,
    shown: ({ snapshot }) => snapshot?.kind === 'flaky_tests' && snapshot.quarantine !== undefined,
    hidden: (status) => ({ ...status, snapshot: withoutTestPart(status.snapshot, 'quarantine') }),
  },
  unhealthy: {
    withTarget: true,
    shown: ({ snapshot }) => snapshot?.kind === 'flaky_tests' && snapshot.unhealthy !== undefined,
    hidden: (status) => ({ ...status, snapshot: withoutTestPart(status.snapshot, 'unhealthy') }),
  },
  collections: {
    withTarget: true,
    shown: ({ snapshot }) => snapshot?.kind === 'flaky_tests' && snapshot.collections !== undefined,
    hidden: (status) => ({ ...status, snapshot: withoutTestPart(status.snapshot, 'collections') }),
  },
};

/** The shown parts of `status` that are failing, each with when it was last read whole. */
function failingParts(status: TargetStatus): [SnapshotPart, number][] {
  const failing: [SnapshotPart, number][] = [];
  for (const part of SNAPSHOT_PARTS) {
    const { withTarget, shown } = PARTS[part];
    const read = status.partReads?.[part];
    if (!shown(status) || !((withTarget && status.up === false) || read?.failure !== undefined)) {
      continue;
    }
    const readAt = read?.readAt ?? status.lastSuccessAt;
    if (readAt !== undefined) failing.push([part, readAt]);
  }
  return failing;
}

/** When each failing part of a status was last read whole: the times at which parts may turn stale. */
export function partReadTimes(status: TargetStatus): number[] {
  return failingParts(status).map(([, readAt]) => readAt);
}

/** What `status` shows at `now`: without the failing parts read more than `staleAfterSeconds` before. */
export function shownStatus(
  status: TargetStatus,
  now: number,
  staleAfterSeconds: number,
): TargetStatus {
  let shown = status;
  for (const [part, readAt] of failingParts(status)) {
    if (turnsStale(readAt, now, staleAfterSeconds)) shown = PARTS[part].hidden(shown);
  }
  return shown;
}

/** Whether data read at `readAt` is stale at `now`. */
export function turnsStale(readAt: number, now: number, staleAfterSeconds: number): boolean {
  return now - readAt > staleAfterSeconds;
}
