// 429 from Trunk's per-organization rate limiter, with Retry-After in both forms and without it.
import { describe, expect, it } from 'vitest';
import { tooManyRequests, type SeenCall } from '../../src/simulator/faults.js';
import { select, sum } from '../support/exposition.js';
import {
  API,
  CLOCK_SLACK_MS,
  WEB,
  callsTo,
  pollFailures,
  startFaultRig,
  until,
  untilUp,
  type FaultRig,
} from './harness.js';

/** The call the 429 answered, once the simulator has served it. */
async function limitedCall(rig: FaultRig): Promise<SeenCall> {
  await until(() => rig.faults.calls().some((call) => call.fault === 'status'), 'the 429');
  const limited = rig.faults.calls().find((call) => call.fault === 'status');
  if (limited === undefined) throw new Error('unreachable');
  return limited;
}

/** Calls the simulator saw after `call`. */
function callsAfter(rig: FaultRig, call: SeenCall): SeenCall[] {
  const calls = rig.faults.calls();
  return calls.slice(calls.indexOf(call) + 1);
}

async function bothTargetsUpAgain(rig: FaultRig, since: number): Promise<void> {
  await rig.subject.waitFor(
    (samples) =>
      sum(samples, 'trunk_exporter_target_up') === 2 &&
      select(samples, 'trunk_exporter_last_success_timestamp_seconds').every(
        (sample) => sample.value * 1000 > since,
      ),
    'both targets polled successfully after the pause',
  );
}

describe('429 with Retry-After', () => {
  // One connection, so no request of another target can already be on the wire when the 429
  // arrives: every request the simulator sees afterwards was started after the client read it.
  it('delta-seconds: no call to the organization before it expires, then every target resumes', async () => {
    const rig = await startFaultRig({ maxConcurrentRequests: 1 });
    await rig.subject.waitUntilReady();
    rig.faults.inject('getQueue', tooManyRequests('1'), { repo: WEB });

    const limited = await limitedCall(rig);
    await bothTargetsUpAgain(rig, limited.at + 1000);

    const later = callsAfter(rig, limited);
    expect(later.length).toBeGreaterThan(0);
    expect(Math.min(...later.map((call) => call.at)) - limited.at).toBeGreaterThanOrEqual(
      1000 - CLOCK_SLACK_MS,
    );
    const samples = await rig.subject.samples();
    expect(
      sum(samples, 'trunk_exporter_api_requests_total', { code: '429', endpoint: 'getQueue' }),
    ).toBe(1);
  });

  it('HTTP-date on one target: the other targets hold back too, fail fast without calls, and keep their schedule', async () => {
    const rig = await startFaultRig({ maxConcurrentRequests: 1 });
    await rig.subject.waitUntilReady();
    // HTTP-dates have whole seconds: this lands 2.0..3.0 s ahead, long enough for several polls.
    const date = new Date(Date.now() + 3000).toUTCString();
    const retryAt = Date.parse(date);
    rig.faults.inject('getQueue', tooManyRequests(date), { repo: API });

    const limited = await limitedCall(rig);
    await bothTargetsUpAgain(rig, retryAt);

    const later = callsAfter(rig, limited);
    expect(later.length).toBeGreaterThan(0);
    expect(Math.min(...later.map((call) => call.at))).toBeGreaterThanOrEqual(
      retryAt - CLOCK_SLACK_MS,
    );
    // The untouched target kept polling every 0.2 s through the pause, each poll failing at once
    // with a line that says why and sends nothing.
    const held = pollFailures(rig.subject, WEB).filter(
      (record) => record.reason === 'rate_limited',
    );
    expect(held.length).toBeGreaterThanOrEqual(2);
    expect(held[0]?.msg).toContain("not sent: Trunk's Retry-After holds every request until");
    expect(held[0]?.msg).toContain(new Date(retryAt).toISOString().slice(0, 19));
    const samples = await rig.subject.samples();
    expect(sum(samples, 'trunk_exporter_api_requests_total', { code: '429' })).toBe(1);
  });
});

describe('429 without Retry-After', () => {
  it('backs off per call without a hot loop, pauses nobody else, and counts every 429', async () => {
    const rig = await startFaultRig({
      polling: '  mergeQueueIntervalSeconds: 0.5\n  flakyTestsIntervalSeconds: 60',
    });
    await rig.subject.waitUntilReady();
    rig.faults.inject('getQueue', tooManyRequests(), { repo: WEB, times: Infinity });
    const apiCallsBefore = callsTo(rig.faults, 'getQueue', API).length;

    await until(() => pollFailures(rig.subject, WEB).length >= 3, 'three failed polls of web');
    const failedPolls = pollFailures(rig.subject, WEB).length;
    const limitedCalls = callsTo(rig.faults, 'getQueue', WEB).filter(
      (call) => call.fault === 'status',
    ).length;
    // At most the client's 4 attempts per poll (one more poll may be under way).
    expect(limitedCalls).toBeLessThanOrEqual(4 * (failedPolls + 1));
    expect(callsTo(rig.faults, 'getQueue', API).length).toBeGreaterThan(apiCallsBefore + 1);

    const failing = await rig.subject.samples();
    expect(sum(failing, 'trunk_exporter_target_up', { repo: WEB })).toBe(0);
    await untilUp(rig.subject, { repo: API });
    expect(pollFailures(rig.subject, WEB)[0]?.msg).toContain('HTTP 429: "Too Many Requests"');

    rig.faults.clear();
    await bothTargetsUpAgain(rig, Date.now());
    const served = rig.faults.calls().filter((call) => call.fault === 'status').length;
    const samples = await rig.subject.samples();
    expect(sum(samples, 'trunk_exporter_api_requests_total', { code: '429' })).toBe(served);
  });
});
