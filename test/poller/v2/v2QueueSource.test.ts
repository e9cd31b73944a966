// Where a poll's read of concluded entries starts: no later than the last change the previous poll
// saw of any PR gone since, on Trunk's clock ("concludedAfter").
import { describe, expect, it } from 'vitest';
import { exitReadSince } from '../../../src/poller/v2/v2QueueSource.js';

const T = 1_800_000_000;

describe('exitReadSince', () => {
  it('starts at the earliest last change of 200,000 PRs gone at once', () => {
    // More PRs than a call takes arguments: PR #n last changed at T − n, so #199999 is earliest.
    const prNumbers = Array.from({ length: 200_000 }, (_, n) => n);
    const pullRequests = prNumbers.map((number) => ({ number, stateChangedAt: T - number }));
    expect(exitReadSince({ since: T, prNumbers }, { pullRequests })).toBe(T - 199_999);
  });

  it('starts at the plan when the last poll saw none of them', () => {
    expect(exitReadSince({ since: T, prNumbers: [7] }, undefined)).toBe(T);
  });
});
