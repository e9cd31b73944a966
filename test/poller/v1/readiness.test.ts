import { describe, expect, it } from 'vitest';
import { failingReadinessRules } from '../../../src/poller/v1/readiness.js';

describe('failingReadinessRules', () => {
  it('finds nothing when every documented signal holds', () => {
    expect(
      failingReadinessRules({
        doesBaseBranchMatch: true,
        hostMergeability: 'mergeable',
        requiresImpactedTargets: true,
        hasImpactedTargets: true,
      }),
    ).toEqual([]);
  });

  it('names each failing rule, in the documented order', () => {
    expect(
      failingReadinessRules({
        doesBaseBranchMatch: false,
        hostMergeability: 'not_mergeable',
        requiresImpactedTargets: true,
        hasImpactedTargets: false,
      }),
    ).toEqual(['base_branch_mismatch', 'not_mergeable', 'impacted_targets_missing']);
  });

  it("reads the live service's gitHubMergeability when hostMergeability is absent", () => {
    expect(failingReadinessRules({ gitHubMergeability: 'in_progress' })).toEqual(['not_mergeable']);
    expect(failingReadinessRules({ gitHubMergeability: 'mergeable' })).toEqual([]);
  });

  it('does not require impacted targets unless the queue requires them', () => {
    expect(
      failingReadinessRules({ requiresImpactedTargets: false, hasImpactedTargets: false }),
    ).toEqual([]);
  });

  it('counts no rule as failing when its signal was not sent', () => {
    expect(failingReadinessRules({})).toEqual([]);
  });
});
