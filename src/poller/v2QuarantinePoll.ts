// Quarantined tests through API v2: one flaky-tests target's snapshot from the organization's list
// (V2TestDirectory), computed as v1's walk computes it.
import { NO_CODEOWNER, type FlakyTestsSnapshot } from '../snapshot/types.js';
import { quarantineAgeCounts } from './flakyTestsPoll.js';
import { parseTimestampSeconds } from './timestamps.js';
import type { ReadOptions } from './trunkReader.js';
import type { V2TestDirectory } from './v2TestDirectory.js';

/** One flaky-tests target's snapshot from the organization's list (V2TestDirectory). */
export async function pollQuarantinedTestsV2(request: {
  readonly directory: V2TestDirectory;
  /** `host/owner/name`. */
  readonly repoName: string;
  readonly options: ReadOptions;
  readonly now: () => number;
}): Promise<FlakyTestsSnapshot> {
  const tests = await request.directory.quarantinedTestsOf(request.repoName, request.options);
  const byCodeowner = new Map<string, number>();
  const quarantineTimes: number[] = [];
  for (const test of tests) {
    const named = test.codeowners.filter((owner) => owner !== '');
    const owners = named.length > 0 ? new Set(named) : [NO_CODEOWNER];
    for (const owner of owners) byCodeowner.set(owner, (byCodeowner.get(owner) ?? 0) + 1);
    // Older answers lack quarantinedSince: statusSince says since when the test is as it is.
    const since = parseTimestampSeconds(test.quarantinedSince ?? test.statusSince ?? undefined);
    if (since !== undefined) quarantineTimes.push(since);
  }
  const takenAt = request.now();
  let oldest: number | undefined;
  for (const at of quarantineTimes) if (oldest === undefined || at < oldest) oldest = at;
  return {
    kind: 'flaky_tests',
    repo: request.repoName,
    takenAt,
    quarantined: tests.length,
    byCodeowner,
    oldestQuarantinedAt: oldest,
    ...quarantineAgeCounts(quarantineTimes, takenAt),
  };
}
