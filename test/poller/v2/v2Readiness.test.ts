import { describe, expect, it } from 'vitest';
import { notMergeableReasonCounts } from '../../../src/poller/v2/v2Readiness.js';
import { MAX_UNKNOWN_NOT_MERGEABLE_REASONS } from '../../../src/snapshot/types.js';
import type { V2PullRequest } from '../../../src/trunk/v2Schemas.js';

function row(number: number, codes: readonly string[]): V2PullRequest {
  return {
    number,
    queueEntry: {
      state: 'notReady',
      stateChangedAt: '2026-11-24T10:00:00Z',
      readiness: {
        mergeability: 'notMergeable',
        mergeabilityDetails: { reasons: codes.map((code) => ({ code })) },
      },
    },
  };
}

describe('notMergeableReasonCounts', () => {
  it('zero-fills the known codes, counts a PR once per code, and spells codes as v1 labels', () => {
    const counts = notMergeableReasonCounts([
      row(1, ['conflict', 'awaitingCheck', 'conflict']),
      row(2, ['conflict']),
      row(3, []),
    ]);
    expect(counts.get('conflict')).toBe(2);
    expect(counts.get('awaiting_check')).toBe(1);
    expect(counts.get('review_required')).toBe(0);
    expect(counts.has('awaitingCheck')).toBe(false);
  });

  it('keeps at most 20 unknown codes per queue, counting the rest as other', () => {
    const unknown = Array.from({ length: 25 }, (_, index) => `newReason${index}`);
    const counts = notMergeableReasonCounts([row(1, unknown), row(2, ['newReason0', 'other'])]);
    const extra = [...counts.keys()].filter((key) => key.startsWith('new_reason'));
    expect(extra).toHaveLength(MAX_UNKNOWN_NOT_MERGEABLE_REASONS);
    expect(counts.get('new_reason0')).toBe(2);
    // Five codes over the cap from PR 1, and PR 2's own `other`.
    expect(counts.get('other')).toBe(6);
  });
});
