// 200 answers that match the schema but carry odd data: a PR number listed twice in one queue, and
// timestamps that are not RFC 3339 date-times or lie outside 2000-2100. Each is counted in
// trunk_exporter_api_anomalies_total, and none reaches a number.
import { describe, expect, it } from 'vitest';
import type { Fault } from '../../src/simulator/faults.js';
import { select, sum } from '../support/exposition.js';
import { WEB, callsTo, pollFailures, startFaultRig, until, untilUp } from './harness.js';

type QueueItem = Record<string, unknown>;

/** The world's queue with `change` applied to a copy of its items. */
function itemsWith(change: (items: QueueItem[]) => QueueItem[]): Fault {
  return {
    kind: 'answer',
    answer: (_request, real) => {
      const queue = structuredClone(real) as { enqueuedPullRequests: QueueItem[] };
      queue.enqueuedPullRequests = change(queue.enqueuedPullRequests);
      return queue;
    },
  };
}

const web = { repo: WEB, branch: 'main' };

describe('a PR number listed twice in one queue', () => {
  it('counts the PR once with its latest entry, as duplicate_pr anomalies, and no flow on an unchanging queue', async () => {
    const rig = await startFaultRig({ flavour: 'live' });
    await rig.subject.waitUntilReady();
    const healthy = await rig.subject.samples();
    // Each of the first two PRs again, after itself, in another state it left long ago.
    rig.faults.inject(
      'getQueue',
      itemsWith((items) => {
        expect(items.length).toBeGreaterThanOrEqual(2);
        return items.flatMap((item, index) =>
          index < 2
            ? [
                item,
                {
                  ...item,
                  state: item.state === 'pending' ? 'testing' : 'pending',
                  stateChangedAt: '2020-01-01T00:00:00Z',
                },
              ]
            : [item],
        );
      }),
      { repo: WEB, times: Infinity },
    );

    const faulted = () => callsTo(rig.faults, 'getQueue', WEB).filter((call) => call.fault);
    await until(() => faulted().length >= 5, 'five polls of the doubled queue');
    await rig.subject.waitFor(
      (current) =>
        sum(current, 'trunk_exporter_api_anomalies_total', { kind: 'duplicate_pr' }) >= 8,
      'the duplicates counted',
    );
    // Polls go on while these are read: at most one poll of the queue (its own polls never
    // overlap) has been answered and not yet counted, and none counted that was not answered.
    const answeredBefore = faulted().length;
    const samples = await rig.subject.samples();
    const answeredAfter = faulted().length;
    const duplicates = sum(samples, 'trunk_exporter_api_anomalies_total', {
      endpoint: 'getQueue',
      kind: 'duplicate_pr',
    });
    expect(duplicates).toBeGreaterThanOrEqual(2 * (answeredBefore - 1));
    expect(duplicates).toBeLessThanOrEqual(2 * answeredAfter);
    const byState = (page: typeof samples) =>
      select(page, 'trunk_merge_queue_pull_requests', web).filter((sample) => sample.value > 0);
    expect(byState(samples)).toEqual(byState(healthy));
    expect(sum(samples, 'trunk_merge_queue_state_transitions_total', web)).toBe(0);
    await untilUp(rig.subject, web);
    expect(pollFailures(rig.subject, WEB)).toEqual([]);
  });
});

describe('timestamps', () => {
  it.each(['Tue 5', '2024-02-30', '2024-02-01T10:00:00'])(
    'stateChangedAt %j: never exported, counted as invalid_field, the PR and the target stay',
    async (value) => {
      const rig = await startFaultRig();
      await rig.subject.waitUntilReady();
      const healthy = await rig.subject.samples();
      let listed = 0;
      rig.faults.inject(
        'getQueue',
        itemsWith((items) => {
          listed = items.length;
          return items.map((item) => ({ ...item, stateChangedAt: value }));
        }),
        { repo: WEB, times: Infinity },
      );

      // Two polls' worth: the first poll's snapshot is recorded before the second is parsed.
      const samples = await rig.subject.waitFor(
        (current) =>
          sum(current, 'trunk_exporter_api_anomalies_total', {
            endpoint: 'getQueue',
            kind: 'invalid_field',
          }) >=
            2 * listed && listed > 0,
        'two polls of invalid timestamps',
      );
      expect(
        select(samples, 'trunk_merge_queue_oldest_state_change_timestamp_seconds', web),
      ).toEqual([]);
      expect(sum(samples, 'trunk_merge_queue_pull_requests', web)).toBe(
        sum(healthy, 'trunk_merge_queue_pull_requests', web),
      );
      expect(sum(samples, 'trunk_exporter_api_schema_mismatches_total')).toBe(0);
      await untilUp(rig.subject, web);
      expect(pollFailures(rig.subject, WEB)).toEqual([]);
    },
  );

  it('outside 2000-2100: never exported, counted as timestamp_out_of_range, the target stays up', async () => {
    const rig = await startFaultRig();
    await rig.subject.waitUntilReady();
    const healthy = await rig.subject.samples();
    expect(
      select(healthy, 'trunk_merge_queue_oldest_state_change_timestamp_seconds', web),
    ).not.toEqual([]);
    let listed = 0;
    rig.faults.inject(
      'getQueue',
      itemsWith((items) => {
        listed = items.length;
        return items.map((item, index) => ({
          ...item,
          stateChangedAt: index === 0 ? '2150-01-01T00:00:00Z' : '1970-01-01T00:00:01Z',
        }));
      }),
      { repo: WEB, times: Infinity },
    );

    const samples = await rig.subject.waitFor(
      (current) =>
        sum(current, 'trunk_exporter_api_anomalies_total', {
          endpoint: 'getQueue',
          kind: 'timestamp_out_of_range',
        }) >=
          2 * listed && listed > 0,
      'two polls of out-of-range timestamps',
    );
    expect(select(samples, 'trunk_merge_queue_oldest_state_change_timestamp_seconds', web)).toEqual(
      [],
    );
    expect(sum(samples, 'trunk_merge_queue_pull_requests', web)).toBe(
      sum(healthy, 'trunk_merge_queue_pull_requests', web),
    );
    expect(sum(samples, 'trunk_exporter_api_schema_mismatches_total')).toBe(0);
    await untilUp(rig.subject, web);
  });
});
