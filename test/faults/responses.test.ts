// 200 answers that are not what the interface promises: malformed JSON, wrong types, missing
// fields (schema mismatches that keep the last good values), and unknown enum values (which are not
// mismatches but label values of their own).
import { describe, expect, it } from 'vitest';
import type { Fault } from '../../src/simulator/faults.js';
import { select, sum } from '../support/exposition.js';
import { API, WEB, callsTo, pollFailures, startFaultRig, until, untilUp } from './harness.js';

/** The world's queue with `change` applied to a copy. */
function queueWith(change: (queue: Record<string, unknown>) => void): Fault {
  return {
    kind: 'answer',
    answer: (_request, real) => {
      const queue = structuredClone(real) as Record<string, unknown>;
      change(queue);
      return queue;
    },
  };
}

describe('schema mismatches', () => {
  it.each<[string, Fault, string]>([
    [
      'malformed JSON',
      { kind: 'raw', body: '{"state": "running", "branch": "main", ' },
      'response is not JSON: "{"state": "running", "branch": "main","',
    ],
    [
      // The queue's state is what it is counted by. A setting of another type (concurrency
      // "eight") costs only itself: test/trunk/tolerantResponses.test.ts.
      'a wrong type',
      queueWith((queue) => {
        queue.state = 8;
      }),
      'response does not match the schema: state: expected string, received number',
    ],
    [
      'a missing required field',
      queueWith((queue) => {
        delete queue.enqueuedPullRequests;
      }),
      'response does not match the schema: enqueuedPullRequests: expected array, received undefined',
    ],
    [
      // 8 million of them fit in trunk.maxResponseBytes and took seconds of CPU at every poll.
      'a list of more PRs than any merge queue holds',
      queueWith((queue) => {
        queue.enqueuedPullRequests = Array.from({ length: 50_001 }, () => ({}));
      }),
      'response does not match the schema: enqueuedPullRequests: more than 50000 items, far more than a merge queue holds',
    ],
  ])(
    '%s: counted per poll, not retried, target_up 0 and last good values kept',
    async (_name, fault, detail) => {
      const rig = await startFaultRig();
      await rig.subject.waitUntilReady();
      const web = { repo: WEB, branch: 'main' };
      const healthy = await rig.subject.samples();
      rig.faults.inject('getQueue', fault, { repo: WEB, times: Infinity });

      await until(() => pollFailures(rig.subject, WEB).length >= 3, 'three failed polls');
      // Polls go on while these are read: each bound compares a count with one read after it.
      const failures = pollFailures(rig.subject, WEB);
      const samples = await rig.subject.samples();
      const bad = callsTo(rig.faults, 'getQueue', WEB).filter((call) => call.fault !== undefined);
      const failuresSince = pollFailures(rig.subject, WEB);
      const mismatches = sum(samples, 'trunk_exporter_api_schema_mismatches_total', {
        endpoint: 'getQueue',
      });
      // One call and one count per poll: a mismatch is not retried (one more poll may be running).
      expect(bad.length).toBeLessThanOrEqual(failuresSince.length + 1);
      expect(mismatches).toBeGreaterThanOrEqual(failures.length);
      expect(mismatches).toBeLessThanOrEqual(bad.length);
      expect(failures[0]?.reason).toBe('schema_mismatch');
      expect(failures[0]?.msg).toContain(detail);
      expect(sum(samples, 'trunk_exporter_target_up', web)).toBe(0);
      await untilUp(rig.subject, { repo: API });
      for (const name of ['trunk_merge_queue_concurrency', 'trunk_merge_queue_pull_requests']) {
        expect(select(samples, name, web)).toEqual(select(healthy, name, web));
      }
    },
  );
});

describe('an answer over trunk.maxResponseBytes', () => {
  it('fails the poll as response_too_large, unread and not retried; other targets unaffected', async () => {
    const rig = await startFaultRig({ trunk: '  maxResponseBytes: 65536' });
    await rig.subject.waitUntilReady();
    const web = { repo: WEB, branch: 'main' };
    const healthy = await rig.subject.samples();
    // A well-formed queue of about 1 MiB: only its size is wrong.
    rig.faults.inject(
      'getQueue',
      queueWith((queue) => {
        queue.requiredStatuses = Array.from(
          { length: 1024 },
          (_, index) => `check-${index}-${'x'.repeat(1000)}`,
        );
      }),
      { repo: WEB, times: Infinity },
    );

    await until(() => pollFailures(rig.subject, WEB).length >= 3, 'three failed polls');
    // Polls go on while these are read: each bound compares a count with one read after it.
    const failures = pollFailures(rig.subject, WEB);
    const samples = await rig.subject.samples();
    const bad = callsTo(rig.faults, 'getQueue', WEB).filter((call) => call.fault !== undefined);
    const failuresSince = pollFailures(rig.subject, WEB);
    const tooLarge = sum(samples, 'trunk_exporter_api_requests_total', {
      endpoint: 'getQueue',
      code: 'response_too_large',
    });
    // One call per poll: never retried (one more poll may be under way).
    expect(bad.length).toBeLessThanOrEqual(failuresSince.length + 1);
    expect(tooLarge).toBeGreaterThanOrEqual(failures.length);
    expect(tooLarge).toBeLessThanOrEqual(bad.length);
    expect(failures[0]?.reason).toBe('response_too_large');
    expect(failures[0]?.msg).toContain(
      'response body larger than trunk.maxResponseBytes (65536 bytes); not read further and not retried',
    );
    expect(sum(samples, 'trunk_exporter_api_schema_mismatches_total')).toBe(0);
    expect(sum(samples, 'trunk_exporter_target_up', web)).toBe(0);
    await untilUp(rig.subject, { repo: API });
    expect(select(samples, 'trunk_merge_queue_pull_requests', web)).toEqual(
      select(healthy, 'trunk_merge_queue_pull_requests', web),
    );
  });
});

describe('unknown enum values', () => {
  it('are no mismatch: each becomes its own label value and the target stays up', async () => {
    const rig = await startFaultRig({
      targets: `  - repo: ${WEB}\n    branches: [main]`,
      flavour: 'live',
    });
    await rig.subject.waitUntilReady();
    rig.faults.inject(
      'getQueue',
      queueWith((queue) => {
        queue.state = 'frozen_by_admin';
        queue.mode = 'hyperparallel';
        queue.mergeMethod = 'fast_forward';
        const items = queue.enqueuedPullRequests as Record<string, unknown>[];
        for (const item of items) {
          item.state = 'awaiting_quantum';
          item.priorityName = 'critical';
        }
      }),
      { times: Infinity },
    );

    const web = { repo: WEB, branch: 'main' };
    const samples = await rig.subject.waitFor(
      (current) =>
        sum(current, 'trunk_merge_queue_state', { ...web, state: 'frozen_by_admin' }) === 1,
      'the unknown queue state',
    );
    expect(sum(samples, 'trunk_exporter_api_schema_mismatches_total')).toBe(0);
    await untilUp(rig.subject, {});
    expect(sum(samples, 'trunk_merge_queue_state', { ...web, state: 'running' })).toBe(0);
    const info = select(samples, 'trunk_merge_queue_info', web)[0]?.labels;
    expect([info?.mode, info?.merge_method]).toEqual(['hyperparallel', 'fast_forward']);
    const byState = select(samples, 'trunk_merge_queue_pull_requests', web).filter(
      (sample) => sample.value > 0,
    );
    expect(byState.length).toBeGreaterThan(0);
    for (const sample of byState) {
      expect([sample.labels.state, sample.labels.priority]).toEqual([
        'awaiting_quantum',
        'critical',
      ]);
    }
    expect(pollFailures(rig.subject, WEB)).toEqual([]);
  });
});

describe('label values from a queue answer', () => {
  it('keeps 20 priority names beyond the documented ones and cuts a value over 200 characters', async () => {
    const rig = await startFaultRig({
      targets: `  - repo: ${WEB}\n    branches: [main]`,
      flavour: 'live',
    });
    await rig.subject.waitUntilReady();
    const longState = `awaiting_${'q'.repeat(300)}`;
    const longMode = `hyper_${'m'.repeat(300)}`;
    const changedAt = new Date().toISOString();
    rig.faults.inject(
      'getQueue',
      queueWith((queue) => {
        queue.mode = longMode;
        // 50 pending PRs, each with its own priority name: team-0 … team-49, in that order.
        queue.enqueuedPullRequests = [
          ...Array.from({ length: 50 }, (_, index) => ({
            prNumber: 9001 + index,
            state: 'pending',
            priorityName: `team-${String(index)}`,
            stateChangedAt: changedAt,
          })),
          { prNumber: 9100, state: longState, priorityName: 'medium', stateChangedAt: changedAt },
        ];
      }),
      { times: Infinity },
    );

    const web = { repo: WEB, branch: 'main' };
    const samples = await rig.subject.waitFor(
      (current) =>
        sum(current, 'trunk_merge_queue_pull_requests', { ...web, priority: 'other' }) > 0,
      'the answer with 51 PRs',
    );
    const pending = Object.fromEntries(
      select(samples, 'trunk_merge_queue_pull_requests', { ...web, state: 'pending' })
        .filter((sample) => sample.value > 0)
        .map((sample): [string, number] => [sample.labels.priority ?? '', sample.value]),
    );
    expect(pending).toEqual({
      ...Object.fromEntries(Array.from({ length: 20 }, (_, index) => [`team-${String(index)}`, 1])),
      other: 30,
    });
    expect(
      sum(samples, 'trunk_merge_queue_pull_requests', {
        ...web,
        state: `${longState.slice(0, 199)}…`,
        priority: 'medium',
      }),
    ).toBe(1);
    expect(select(samples, 'trunk_merge_queue_info', web)[0]?.labels.mode).toBe(
      `${longMode.slice(0, 199)}…`,
    );
    expect(
      sum(samples, 'trunk_exporter_api_anomalies_total', {
        endpoint: 'getQueue',
        kind: 'invalid_field',
      }),
    ).toBeGreaterThanOrEqual(2);
    expect(pollFailures(rig.subject, WEB)).toEqual([]);
  });
});
