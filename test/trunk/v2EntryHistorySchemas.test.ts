// Pages of `GET /v2/queue-entry-history` as Trunk's definition allows them: "Ids are normalized to
// lowercase in the response", `reason` is "`null` for `testing` and `pendingFailure`" and "an open
// set", and a transition that cannot be read costs itself, not its pull request's timeline.
import { describe, expect, it } from 'vitest';
import type { ApiAnomalyKind } from '../../src/trunk/observer.js';
import {
  checkEntryHistoryPage,
  v2EntryHistoryPageSchema,
} from '../../src/trunk/v2EntryHistorySchemas.js';

function checked(body: unknown) {
  const anomalies: Partial<Record<ApiAnomalyKind, number>> = {};
  const page = checkEntryHistoryPage(v2EntryHistoryPageSchema.parse(body), (kind, count) => {
    anomalies[kind] = (anomalies[kind] ?? 0) + count;
  });
  return { page, anomalies };
}

describe('queue-entry history pages', () => {
  it('keeps each usable transition oldest first, drops the unusable ones and counts them', () => {
    const id = '6F1D2C3B-4A59-4E6F-8A7B-9C0D1E2F3A4B';
    const { page, anomalies } = checked({
      data: [
        {
          pullRequestId: id,
          transitions: [
            {
              pullRequestId: id,
              state: 'failed',
              changedAt: '2026-07-28T11:20:00.000Z',
              reason: 'TEST_RUN_TIMEOUT',
            },
            {
              pullRequestId: id,
              state: 'testing',
              changedAt: '2026-07-28T11:10:00.000Z',
              reason: null,
            },
            {
              pullRequestId: id,
              state: 'pending',
              changedAt: 'yesterday',
              reason: 'MERGE_ITEM_NOW_READY',
            },
            { pullRequestId: id, changedAt: '2026-07-28T11:00:00.000Z', reason: null },
            {
              pullRequestId: id,
              state: 'pending',
              changedAt: '2026-07-28T11:05:00.000Z',
              reason: 42,
            },
          ],
        },
        { transitions: [] },
        { pullRequestId: '7a2e3d4c-5b60-4f71-9b8c-0d1e2f3a4b5c', transitions: [] },
      ],
      nextCursor: null,
      hasMore: false,
    });
    const at = (iso: string) => Date.parse(iso) / 1000;
    expect(page.data).toEqual([
      {
        pullRequestId: id.toLowerCase(),
        transitions: [
          { state: 'pending', at: at('2026-07-28T11:05:00.000Z'), reason: undefined },
          { state: 'testing', at: at('2026-07-28T11:10:00.000Z'), reason: undefined },
          { state: 'failed', at: at('2026-07-28T11:20:00.000Z'), reason: 'TEST_RUN_TIMEOUT' },
        ],
      },
      { pullRequestId: '7a2e3d4c-5b60-4f71-9b8c-0d1e2f3a4b5c', transitions: [] },
    ]);
    // The group without an id and the transition without a state; the one that cannot be placed.
    expect(anomalies).toEqual({ invalid_item: 2, invalid_field: 1 });
  });

  it('drops a transition that names another pull request ("what you group by"), counts it, and keeps one that names none', () => {
    // The pullRequestId of a transition is "constant on a single pull request's history".
    const id = '9c4a5f6e-7d82-4b93-9dae-2f3a4b5c6d7e';
    const other = '0d5b6a7f-8e93-4ca4-8ebf-3a4b5c6d7e8f';
    const { page, anomalies } = checked({
      data: [
        {
          pullRequestId: id,
          transitions: [
            {
              pullRequestId: id,
              state: 'testing',
              changedAt: '2026-07-28T11:10:00.000Z',
              reason: null,
            },
            {
              pullRequestId: other,
              state: 'failed',
              changedAt: '2026-07-28T11:15:00.000Z',
              reason: 'MISFILED',
            },
            { state: 'failed', changedAt: '2026-07-28T11:20:00.000Z', reason: 'TEST_RUN_TIMEOUT' },
          ],
        },
      ],
      nextCursor: null,
      hasMore: false,
    });
    expect(page.data[0]?.transitions.map(({ state, reason }) => [state, reason])).toEqual([
      ['testing', undefined],
      ['failed', 'TEST_RUN_TIMEOUT'],
    ]);
    expect(anomalies).toEqual({ invalid_item: 1 });
  });

  it('keeps a transition listed twice once, and counts the copy', () => {
    // The same state, instant and reason twice is one transition ("every transition"), not two.
    const id = '8b3f4e5d-6c71-4a82-8c9d-1e2f3a4b5c6d';
    const failed = { state: 'failed', changedAt: '2026-07-28T11:20:00.000Z', reason: 'PR_CLOSED' };
    const testing = { state: 'testing', changedAt: '2026-07-28T11:10:00.000Z', reason: null };
    const { page, anomalies } = checked({
      data: [{ pullRequestId: id, transitions: [testing, failed, testing, failed] }],
      nextCursor: null,
      hasMore: false,
    });
    expect(page.data[0]?.transitions.map(({ state }) => state)).toEqual(['testing', 'failed']);
    expect(anomalies).toEqual({ invalid_item: 2 });
  });
});
