import { describe, expect, it } from 'vitest';
import { EMPTY_ENTRY_HISTORY, type EntryHistory } from '../../src/snapshot/entryHistoryTypes.js';
import { MAX_WEBHOOK_LABEL_VALUES, type WebhookCounts } from '../../src/snapshot/webhookCounts.js';
import type { PullRequestEvent, WebhookEvent } from '../../src/trunk/webhookEvents.js';
import { foldWebhookEvent, happenedBeforeCounting } from '../../src/webhooks/webhookCounting.js';

const REPO = { host: 'github.com', owner: 'acme', name: 'web' };

function failed(reason: string | undefined): PullRequestEvent {
  return {
    kind: 'pull_request',
    type: 'pull_request.failed',
    repo: REPO,
    repoName: 'github.com/acme/web',
    branch: 'main',
    prNumber: 1,
    failureReason: reason,
    batched: undefined,
    transitionSeconds: undefined,
  };
}

function statusChanged(from: string, to: string): WebhookEvent {
  return {
    kind: 'flaky_tests',
    type: 'v2.test_case.status_changed',
    repoName: 'github.com/acme/web',
    previousStatus: from,
    newStatus: to,
    transitionSeconds: undefined,
  };
}

function fold(events: readonly WebhookEvent[]): WebhookCounts {
  let counts: WebhookCounts | undefined;
  events.forEach((event, index) => {
    counts = foldWebhookEvent(counts, event, 1000 + index);
  });
  if (counts === undefined) throw new Error('no events');
  return counts;
}

describe('foldWebhookEvent', () => {
  it('keeps 20 failure reasons per target and counts the rest as other', () => {
    const reasons = Array.from({ length: MAX_WEBHOOK_LABEL_VALUES + 5 }, (_, i) => `REASON_${i}`);
    const counts = fold([...reasons, 'REASON_0', undefined].map(failed));
    expect(counts.failureReasons.size).toBe(MAX_WEBHOOK_LABEL_VALUES + 2);
    expect(counts.failureReasons.get('REASON_0')).toBe(2);
    // REASON_0 to REASON_19 keep their own series; later reasons are other; no reason is
    // `unknown` ("a null or unknown reason counts as unknown"), never other.
    expect(counts.failureReasons.get('REASON_19')).toBe(1);
    expect(counts.failureReasons.get('other')).toBe(5);
    expect(counts.failureReasons.get('unknown')).toBe(1);
    expect(counts.events.get('pull_request.failed')).toBe(MAX_WEBHOOK_LABEL_VALUES + 7);
    expect(counts.lastEvent).toEqual({
      type: 'pull_request.failed',
      receivedAt: 1000 + MAX_WEBHOOK_LABEL_VALUES + 6,
    });
  });

  it('caps failure reasons at 20 together with the reasons the queue-entry history counted', () => {
    // The history counted 15 reasons; then events fail PRs it never saw.
    const history: EntryHistory = {
      ...EMPTY_ENTRY_HISTORY,
      failed: new Map(Array.from({ length: 15 }, (_, i) => [`HISTORY_${String(i + 1)}`, 1])),
    };
    const reasons = ['E_1', 'E_2', 'E_3', 'E_4', 'E_5', 'E_6', 'HISTORY_2', undefined, 'E_1'];
    let counts: WebhookCounts | undefined;
    for (const [index, reason] of reasons.entries()) {
      counts = foldWebhookEvent(counts, failed(reason), 1000 + index, history);
    }
    // E_1 to E_5 make 20 named; E_6 is other; no reason is `unknown`, never other; HISTORY_2,
    // named by the history, keeps its own; E_1 stays named.
    expect(counts?.failureReasons).toEqual(
      new Map([
        ['E_1', 2],
        ['E_2', 1],
        ['E_3', 1],
        ['E_4', 1],
        ['E_5', 1],
        ['other', 1],
        ['HISTORY_2', 1],
        ['unknown', 1],
      ]),
    );
  });

  it('counts unknown event types as other and a failure without reason as unknown', () => {
    const counts = fold([
      { ...failed(undefined) },
      { ...failed('X'), type: 'pull_request.invented' },
    ]);
    expect([...counts.events]).toEqual([
      ['pull_request.failed', 1],
      ['other', 1],
    ]);
    expect([...counts.failureReasons]).toEqual([['unknown', 1]]);
  });

  it('bounds the statuses of status changes, from and to alike', () => {
    const statuses = Array.from({ length: 30 }, (_, i) => `status_${i}`);
    const counts = fold(statuses.map((status) => statusChanged('healthy', status)));
    const seen = new Set([...counts.statusChanges.values()].flatMap((c) => [c.first, c.second]));
    expect(seen.size).toBe(MAX_WEBHOOK_LABEL_VALUES + 1);
    expect(seen.has('other')).toBe(true);
    expect([...counts.statusChanges.values()].find((c) => c.second === 'other')?.count).toBe(
      30 - (MAX_WEBHOOK_LABEL_VALUES - 1),
    );
  });

  it('leaves the previous counts as they were', () => {
    const first = fold([failed('A')]);
    const second = foldWebhookEvent(first, failed('B'), 2000);
    expect([...first.failureReasons]).toEqual([['A', 1]]);
    expect([...second.failureReasons]).toEqual([
      ['A', 1],
      ['B', 1],
    ]);
  });
});

describe('happenedBeforeCounting', () => {
  const START = 1_767_225_600;
  const at = (seconds: number | undefined): PullRequestEvent => ({
    ...failed('TEST_RUN_TIMEOUT'),
    transitionSeconds: seconds,
  });

  it("is an event over the clocks' minute of slack before counting began; one without a time is current", () => {
    expect(happenedBeforeCounting(at(START - 61), START)).toBe(true);
    expect(happenedBeforeCounting(at(START - 59), START)).toBe(false);
    expect(happenedBeforeCounting(at(START + 5), START)).toBe(false);
    expect(happenedBeforeCounting(at(undefined), START)).toBe(false);
  });

  it('adds no failure reason for such an event, and still counts it as an event', () => {
    const counts = foldWebhookEvent(undefined, at(START - 600), START, undefined, true);
    expect([...counts.failureReasons]).toEqual([]);
    expect([...counts.events]).toEqual([['pull_request.failed', 1]]);
  });
});
