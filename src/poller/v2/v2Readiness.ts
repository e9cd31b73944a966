import {
  MAX_UNKNOWN_NOT_MERGEABLE_REASONS,
  NOT_MERGEABLE_REASONS,
  type BlockedReason,
} from '../../snapshot/types.js';
import type { V2PullRequest, V2Readiness } from '../../trunk/v2Schemas.js';
import { v1Value } from '../../trunk/v2Vocabulary.js';

/**
 * Readiness rules a v2 queue's list rows cannot tell: `hasImpactedTargets` is absent on every list
 * read (Trunk's definition: absence means "not answered here"), and a per-PR read costs one call of
 * the single-PR budget (5 per second) per not-ready PR on every poll.
 */
export const V2_UNKNOWN_BLOCKED_REASONS: readonly BlockedReason[] = ['impacted_targets_missing'];

/**
 * The readiness rules a v2 queue entry fails, as failingReadinessRules reads v1's: a signal the
 * API did not send is not counted as failing, and `impacted_targets_missing` is never told
 * (V2_UNKNOWN_BLOCKED_REASONS).
 */
export function failingV2ReadinessRules(readiness: V2Readiness): BlockedReason[] {
  const reasons: BlockedReason[] = [];
  if (readiness.doesBaseBranchMatch === false) reasons.push('base_branch_mismatch');
  const mergeability = readiness.mergeability;
  if (mergeability !== undefined && mergeability !== 'mergeable') reasons.push('not_mergeable');
  return reasons;
}

/**
 * PRs per host reason for not being mergeable: a PR counts once under each code it lists. Every
 * known code is present (0 when none); an unknown code gets its own entry up to
 * MAX_UNKNOWN_NOT_MERGEABLE_REASONS per queue, after which it counts as `other`.
 */
export function notMergeableReasonCounts(rows: readonly V2PullRequest[]): Map<string, number> {
  const counts = new Map<string, number>(NOT_MERGEABLE_REASONS.map((reason) => [reason, 0]));
  const known: ReadonlySet<string> = new Set(NOT_MERGEABLE_REASONS);
  let unknown = 0;
  for (const row of rows) {
    const reasons = row.queueEntry.readiness?.mergeabilityDetails?.reasons ?? [];
    for (const code of new Set(reasons.map((reason) => v1Value(reason.code)))) {
      if (code === '') continue;
      let label = code;
      if (!known.has(code) && !counts.has(code)) {
        if (unknown < MAX_UNKNOWN_NOT_MERGEABLE_REASONS) unknown += 1;
        else label = 'other';
      }
      counts.set(label, (counts.get(label) ?? 0) + 1);
    }
  }
  return counts;
}
