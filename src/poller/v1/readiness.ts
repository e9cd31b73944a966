import type { BlockedReason } from '../../snapshot/types.js';
import type { Readiness } from '../../trunk/schemas.js';

/**
 * The readiness rules of trunk-api-v1.md 2.7 that this PR fails. A signal the API did not send is
 * not counted as failing: the exporter reports what it knows, not what it guesses.
 */
export function failingReadinessRules(readiness: Readiness): BlockedReason[] {
  const reasons: BlockedReason[] = [];
  if (readiness.doesBaseBranchMatch === false) reasons.push('base_branch_mismatch');
  // The interface document calls it hostMergeability, the live schema gitHubMergeability; any value
  // other than `mergeable` (not_mergeable, in_progress, unspecified) means the rule does not hold.
  const mergeability = readiness.hostMergeability ?? readiness.gitHubMergeability;
  if (mergeability !== undefined && mergeability !== 'mergeable') reasons.push('not_mergeable');
  if (readiness.requiresImpactedTargets === true && readiness.hasImpactedTargets === false) {
    reasons.push('impacted_targets_missing');
  }
  return reasons;
}
