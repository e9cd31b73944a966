// Faults on the wire: a server that accepts and never answers, a body that stalls or is cut in the
// middle, a connection reset. Every request must end by timeoutSeconds and leave nothing behind.
import { describe, expect, it } from 'vitest';
import type { Fault } from '../../src/simulator/faults.js';
import { sum } from '../support/exposition.js';
import {
  API,
  CLOCK_SLACK_MS,
  WEB,
  callsTo,
  pollFailures,
  startFaultRig,
  until,
  untilUp,
} from './harness.js';

/** Handles that keep a Node process alive, by type (sockets, timers…). */
function activeResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo()) {
    counts.set(type, (counts.get(type) ?? 0) + 1);
  }
  return counts;
}

describe('requests that never finish', () => {
  it.each<[string, Fault]>([
    ['a server that accepts and never answers', { kind: 'hang' }],
    ['a body that stops in the middle', { kind: 'stall' }],
  ])(
    '%s: each request ends by timeoutSeconds, the target goes down, nothing leaks',
    async (_name, fault) => {
      // The previous case's servers and connections may still be closing after its cleanup.
      await expect
        .poll(() => [...activeResources().keys()].filter((type) => type.startsWith('TCP')), {
          timeout: 10_000,
        })
        .toEqual([]);
      const baseline = activeResources();
      const rig = await startFaultRig({ timeoutSeconds: 0.3 });
      await rig.subject.waitUntilReady();
      rig.faults.inject('getQueue', fault, { repo: WEB, times: Infinity });

      await until(() => pollFailures(rig.subject, WEB).length >= 3, 'three timed-out polls');
      const samples = await rig.subject.samples();
      expect(
        sum(samples, 'trunk_exporter_api_requests_total', {
          code: 'timeout',
          endpoint: 'getQueue',
        }),
      ).toBeGreaterThanOrEqual(3);
      expect(pollFailures(rig.subject, WEB)[0]?.msg).toContain('timed out after 0.3s');
      expect(sum(samples, 'trunk_exporter_target_up', { repo: WEB })).toBe(0);
      await untilUp(rig.subject, { repo: API });
      // The client hung up on every call it gave up on (the latest may still be waiting); the
      // simulator never closes these connections itself.
      const hung = callsTo(rig.faults, 'getQueue', WEB).filter((c) => c.fault === fault.kind);
      const ended = hung.filter((call) => call.connectionClosedAt !== undefined);
      expect(ended.length).toBeGreaterThanOrEqual(Math.max(3, hung.length - 1));
      // Not before the timeout, by the exporter's own clock: its latest failed poll took the
      // attempt's 0.3 s. The simulator's clock would not do: a busy machine can hand it a call
      // late enough that it sees less than half of the wait.
      const webStatus = rig.subject.exporter.store
        .statuses()
        .find((status) => status.target.repo === WEB);
      expect(webStatus?.lastDurationSeconds).toBeGreaterThanOrEqual(0.3 - CLOCK_SLACK_MS / 1000);

      await rig.subject.stop();
      await expect.poll(() => rig.simulator.openConnections(), { timeout: 10_000 }).toBe(0);
      // No socket or timer of the exporter outlives stop() (the simulator only keeps its listener).
      for (const type of ['Timeout', 'TCPSocketWrap']) {
        await expect
          .poll(() => ({ type, count: activeResources().get(type) ?? 0 }), { timeout: 10_000 })
          .toEqual({ type, count: baseline.get(type) ?? 0 });
      }
    },
  );
});

describe('connections that break', () => {
  it.each<[string, Fault]>([
    ['reset before the response', { kind: 'reset' }],
    ['cut in the middle of the body', { kind: 'cut' }],
  ])('%s: counted as network_error and retried within the poll', async (_name, fault) => {
    const rig = await startFaultRig({
      polling: '  mergeQueueIntervalSeconds: 1.5\n  flakyTestsIntervalSeconds: 60',
    });
    await rig.subject.waitUntilReady();
    const before = callsTo(rig.faults, 'getQueue', WEB).length;
    rig.faults.inject('getQueue', fault, { repo: WEB });

    await until(
      () => callsTo(rig.faults, 'getQueue', WEB).length >= before + 2,
      'the broken call and its retry',
    );
    const samples = await rig.subject.waitFor(
      (current) =>
        sum(current, 'trunk_exporter_api_requests_total', { code: 'network_error' }) === 1 &&
        sum(current, 'trunk_exporter_api_requests_total', { code: '200', endpoint: 'getQueue' }) >
          before,
      'the retry answered',
    );
    expect(sum(samples, 'trunk_exporter_target_up')).toBe(2);
    expect(sum(samples, 'trunk_exporter_api_schema_mismatches_total')).toBe(0);
    expect(pollFailures(rig.subject, WEB)).toEqual([]);
  });

  it('a connection reset on every call: the poll fails after the retries with a network error', async () => {
    const rig = await startFaultRig();
    await rig.subject.waitUntilReady();
    rig.faults.inject('getQueue', { kind: 'reset' }, { repo: WEB, times: Infinity });

    await until(() => pollFailures(rig.subject, WEB).length >= 2, 'two failed polls');
    const line = pollFailures(rig.subject, WEB)[0];
    expect(line?.reason).toBe('network_error');
    expect(line?.msg).toContain('network error');
    const samples = await rig.subject.samples();
    expect(sum(samples, 'trunk_exporter_target_up', { repo: WEB })).toBe(0);
    await untilUp(rig.subject, { repo: API });
  });
});
