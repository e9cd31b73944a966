// A flaky-tests target through API v2: its snapshot from the organization's lists (V2TestDirectory),
// the quarantined tests computed as v1's walk computes them (or read through v1 when its token is
// configured too), and the flaky and broken tests, which only v2 lists.
import type { ApiAnomalyKind } from '../../trunk/observer.js';
import { V2_ENDPOINTS, type V2Endpoint } from '../../trunk/v2Schemas.js';
import {
  OTHER_STATUS,
  UNHEALTHY_STATUSES,
  UNHEALTHY_WINDOWS,
  type FlakyTestsSnapshot,
  type QuarantinedTests,
  type UnhealthyTests,
} from '../../snapshot/types.js';
import { countOwners, earliest, quarantineAgeCounts } from '../testCounts.js';
import { parseTimestampSeconds } from '../timestamps.js';
import type { ReadOptions } from '../readOptions.js';
import type { RepositoryTests, V2TestDirectory } from './v2TestDirectory.js';

interface V2FlakyTestsPollRequest {
  readonly directory: V2TestDirectory;
  /** `host/owner/name`. */
  readonly repoName: string;
  readonly options: ReadOptions;
  readonly now: () => number;
  /** Where a status outside UNHEALTHY_STATUSES is counted (trunk_exporter_api_anomalies_total). */
  readonly reportAnomaly: (endpoint: V2Endpoint, kind: ApiAnomalyKind, count: number) => void;
  /**
   * Reads the quarantined tests through API v1 instead of the organization's list (a v1 token and
   * its orgUrlSlug configured beside the key); the flaky and broken tests only v2 lists.
   */
  readonly quarantineThroughV1?: () => Promise<QuarantinedTests>;
}

/** A flaky-tests poll through API v2: its snapshot and, when a part could not be read, why. */
export interface V2FlakyTestsPoll {
  readonly snapshot: FlakyTestsSnapshot;
  /** Set when one part could not be read (or is the last good read of a list whose read failed). */
  readonly unread?: { readonly message: string; readonly error: unknown };
}

/** A part of the snapshot, and the error of a read of its list that failed after it was read. */
interface ReadOfPart<T> {
  readonly part: T;
  readonly failure: unknown;
}

/**
 * One flaky-tests target's snapshot from the organization's lists (V2TestDirectory): its quarantined
 * tests and its flaky and broken ones, each from its own list, so one failing leaves the other
 * part as read. Fails only when neither part can be read.
 */
export async function pollFlakyTestsV2(
  request: V2FlakyTestsPollRequest,
): Promise<V2FlakyTestsPoll> {
  const { directory, repoName, options } = request;
  const [quarantine, unhealthy] = await Promise.allSettled([
    request.quarantineThroughV1 === undefined
      ? directory
          .quarantinedTestsOf(repoName, options)
          .then((read) => ({ part: quarantinedTests(read), failure: read.failure }))
      : request
          .quarantineThroughV1()
          .then((part) => ({ part: { ...part, readAt: request.now() }, failure: undefined })),
    directory.unhealthyTestsOf(repoName, options).then((read) => ({
      part: unhealthySummary(read, request.reportAnomaly),
      failure: read.failure,
    })),
  ]);
  if (quarantine.status === 'rejected' && unhealthy.status === 'rejected') throw quarantine.reason;
  const unread = [
    unreadPart('quarantined tests', quarantine),
    unreadPart('flaky and broken tests', unhealthy),
  ].filter((part) => part !== undefined);
  return {
    snapshot: {
      kind: 'flaky_tests',
      repo: repoName,
      takenAt: request.now(),
      quarantine: quarantine.status === 'fulfilled' ? quarantine.value.part : undefined,
      unhealthy: unhealthy.status === 'fulfilled' ? unhealthy.value.part : undefined,
    },
    ...(unread.length === 0
      ? {}
      : {
          unread: {
            message: unread.map(({ message }) => message).join('; '),
            error: unread[0]?.error,
          },
        }),
  };
}

/** Why a part was not read now, when it was not: it could not be, or only its last good read is. */
function unreadPart<T>(
  what: string,
  read: PromiseSettledResult<ReadOfPart<T>>,
): { readonly message: string; readonly error: unknown } | undefined {
  if (read.status === 'rejected') {
    return { message: `${what}: ${messageOf(read.reason)}`, error: read.reason };
  }
  if (read.value.failure === undefined) return undefined;
  return {
    message: `${what}: ${messageOf(read.value.failure)} (their last list read stays until polling.staleAfterSeconds)`,
    error: read.value.failure,
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The quarantined tests of one read of the organization's list, counted as v1's walk counts them. */
function quarantinedTests({ tests, readAt }: RepositoryTests): QuarantinedTests {
  const byCodeowner = new Map<string, number>();
  const quarantineTimes: number[] = [];
  for (const test of tests) {
    countOwners(byCodeowner, test.codeowners);
    // Older answers lack quarantinedSince: statusSince says since when the test is as it is.
    const since = parseTimestampSeconds(test.quarantinedSince ?? test.statusSince ?? undefined);
    if (since !== undefined) quarantineTimes.push(since);
  }
  return {
    count: tests.length,
    byCodeowner,
    oldestQuarantinedAt: earliest(quarantineTimes),
    ...quarantineAgeCounts(quarantineTimes, readAt),
    readAt,
  };
}

/**
 * The flaky and broken tests by status: counts (each known status present, 0 when none), owners,
 * the earliest statusSince and how many began within each window. A status Trunk adds is `other`
 * and counted as an anomaly.
 */
function unhealthySummary(
  { tests, readAt }: RepositoryTests,
  reportAnomaly: V2FlakyTestsPollRequest['reportAnomaly'],
): UnhealthyTests {
  const known: ReadonlySet<string> = new Set(UNHEALTHY_STATUSES);
  const byStatus = new Map<string, number>(UNHEALTHY_STATUSES.map((status) => [status, 0]));
  const byCodeowner = new Map<string, Map<string, number>>();
  const since = new Map<string, number[]>();
  let unknown = 0;
  for (const test of tests) {
    let status = test.status ?? OTHER_STATUS;
    if (!known.has(status)) {
      unknown += 1;
      status = OTHER_STATUS;
    }
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    let owners = byCodeowner.get(status);
    if (owners === undefined) byCodeowner.set(status, (owners = new Map<string, number>()));
    countOwners(owners, test.codeowners);
    const at = parseTimestampSeconds(test.statusSince ?? undefined);
    if (at === undefined) continue;
    const times = since.get(status);
    if (times === undefined) since.set(status, [at]);
    else times.push(at);
  }
  if (unknown > 0) reportAnomaly(V2_ENDPOINTS.listTests, 'unknown_value', unknown);
  const oldestSince = new Map<string, number>();
  const recently = new Map<string, Map<string, number>>();
  for (const status of byStatus.keys()) {
    const times = since.get(status) ?? [];
    const oldest = earliest(times);
    if (oldest !== undefined) oldestSince.set(status, oldest);
    recently.set(
      status,
      new Map(
        UNHEALTHY_WINDOWS.map(([window, seconds]) => [
          window,
          // A timestamp ahead of the exporter's clock counts as recent.
          times.filter((at) => readAt - at <= seconds).length,
        ]),
      ),
    );
  }
  return { byStatus, byCodeowner, oldestSince, recently, readAt };
}
