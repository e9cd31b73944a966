import { describe, expect, it } from 'vitest';
import { startTestingAttempts } from '../../src/poller/v2/v2TestingResults.js';
import { startQueueFlow } from '../../src/flow/queueFlow.js';
import type { QueueFlow } from '../../src/snapshot/queueFlowTypes.js';
import { SnapshotStore } from '../../src/snapshot/store.js';
import type { FlakyTestsSnapshot, Target } from '../../src/snapshot/types.js';
import { poll } from '../flow/scriptedPolls.js';

const web: Target = { kind: 'flaky_tests', repo: 'github.com/acme/web', branch: '' };
const api: Target = { kind: 'flaky_tests', repo: 'github.com/acme/api', branch: '' };

function snapshot(repo: string, quarantined: number): FlakyTestsSnapshot {
  return {
    kind: 'flaky_tests',
    repo,
    takenAt: 0,
    quarantine: {
      count: quarantined,
      byCodeowner: new Map(),
      oldestQuarantinedAt: undefined,
      quarantinedRecently: new Map(),
      quarantinedOlderThan: new Map(),
    },
  };
}

function storeAt(clock: { now: number }, staleAfterSeconds = 60): SnapshotStore {
  return new SnapshotStore(staleAfterSeconds, () => clock.now);
}

describe('SnapshotStore', () => {
  it('is ready only once every target finished a poll, successfully or not', () => {
    const clock = { now: 1000 };
    const store = storeAt(clock);
    store.setTargets([web, api]);
    expect(store.allPolledOnce()).toBe(false);
    store.recordSuccess(web, snapshot(web.repo, 3), 0.1);
    expect(store.allPolledOnce()).toBe(false);
    store.recordFailure(api, 'HTTP 500', 0.1);
    expect(store.allPolledOnce()).toBe(true);
  });

  it('keeps the last snapshot of a failing target until staleAfterSeconds, then drops it', () => {
    const clock = { now: 1000 };
    const store = storeAt(clock, 60);
    store.setTargets([web]);
    store.recordSuccess(web, snapshot(web.repo, 3), 0.1);
    clock.now = 1030;
    store.recordFailure(web, 'HTTP 503', 0.1);
    expect(store.statuses()[0]).toMatchObject({
      up: false,
      lastSuccessAt: 1000,
      lastError: 'HTTP 503',
    });
    expect(store.statuses()[0]?.snapshot).toMatchObject({ quarantine: { count: 3 } });
    clock.now = 1061;
    expect(store.statuses()[0]?.snapshot).toBeUndefined();
    expect(store.statuses()[0]).toMatchObject({ up: false, lastSuccessAt: 1000 });
  });

  it('counts a late poll as down, with its data going stale on the usual clock, until a poll ends', () => {
    const clock = { now: 1000 };
    const store = storeAt(clock, 60);
    store.setTargets([web, api]);
    // A first poll that is late: down (an alert must see it), but readiness still waits for it.
    store.recordOverrun(api, 'late');
    expect(store.statuses()[1]).toMatchObject({
      up: false,
      lastError: 'late',
      lastAttemptAt: undefined,
      lastSuccessAt: undefined,
    });
    expect(store.allPolledOnce()).toBe(false);

    store.recordSuccess(web, snapshot(web.repo, 3), 0.1);
    const version = store.version;
    store.recordOverrun(web, 'poll still running after its interval of 30s; data is late');
    expect(store.version).toBeGreaterThan(version);
    expect(store.statuses()[0]).toMatchObject({
      up: false,
      lastSuccessAt: 1000,
      lastError: 'poll still running after its interval of 30s; data is late',
    });
    expect(store.statuses()[0]?.snapshot).toMatchObject({ quarantine: { count: 3 } });
    // A poll that keeps running: its data goes as a failing target's would.
    clock.now = 1061;
    expect(store.statuses()[0]?.snapshot).toBeUndefined();
    store.recordSuccess(web, snapshot(web.repo, 4), 70);
    expect(store.statuses()[0]).toMatchObject({ up: true, lastError: undefined });
  });

  it('hides each part of a partly read flaky-tests target once that part is older than staleAfterSeconds', () => {
    const clock = { now: 1000 };
    const store = storeAt(clock, 60);
    store.setTargets([web]);
    const whole = snapshot(web.repo, 3);
    const both: FlakyTestsSnapshot = {
      ...whole,
      unhealthy: {
        byStatus: new Map([['flaky', 4]]),
        byCodeowner: new Map(),
        oldestSince: new Map(),
        recently: new Map(),
      },
    };
    store.recordSuccess(web, both, 0.1, undefined, undefined, {
      quarantine: { readAt: 1000 },
      unhealthy: { readAt: 1000 },
    });
    // At 1030 the flaky and broken list fails; its part as read at 1000 is kept.
    clock.now = 1030;
    store.recordFailure(web, 'flaky and broken tests: HTTP 500', 0.1, both, {
      quarantine: { readAt: 1030 },
      unhealthy: { readAt: 1000, failure: 'HTTP 500' },
    });
    expect(store.statuses()[0]).toMatchObject({
      up: false,
      lastSuccessAt: 1000,
      lastError: 'flaky and broken tests: HTTP 500',
      snapshot: { quarantine: { count: 3 }, unhealthy: { byStatus: new Map([['flaky', 4]]) } },
    });
    const before = store.viewKey();
    // 61 s after its read the flaky and broken part is stale; the quarantined one read at 1030 is not.
    clock.now = 1061;
    expect(store.viewKey()).not.toBe(before);
    const shown = store.statuses()[0];
    expect(shown?.snapshot).toMatchObject({ quarantine: { count: 3 }, unhealthy: undefined });
    expect(store.statuses()[0]).toBe(shown);
    clock.now = 1091;
    expect(store.statuses()[0]?.snapshot).toBeUndefined();
  });

  it('never expires the snapshot of a target that is up, however old', () => {
    const clock = { now: 1000 };
    const store = storeAt(clock, 60);
    store.setTargets([web]);
    store.recordSuccess(web, snapshot(web.repo, 3), 0.1);
    clock.now = 5000;
    expect(store.statuses()[0]?.snapshot).toMatchObject({ quarantine: { count: 3 } });
  });

  it('forgets targets removed from the configuration and ignores late results for them', () => {
    const clock = { now: 1000 };
    const store = storeAt(clock);
    store.setTargets([web, api]);
    store.recordSuccess(web, snapshot(web.repo, 3), 0.1);
    store.recordSuccess(api, snapshot(api.repo, 5), 0.1);
    store.setTargets([api]);
    expect(store.statuses().map((status) => status.target.repo)).toEqual([api.repo]);
    store.recordSuccess(web, snapshot(web.repo, 4), 0.1);
    expect(store.statuses().map((status) => status.target.repo)).toEqual([api.repo]);
    // A kept target keeps its data across the change.
    expect(store.statuses()[0]?.snapshot).toMatchObject({ quarantine: { count: 5 } });
  });

  it('gives a target back its status when it returns within staleAfterSeconds, and not after', () => {
    const clock = { now: 1000 };
    const store = storeAt(clock, 60);
    store.setTargets([web, api]);
    store.recordSuccess(web, snapshot(web.repo, 3), 0.1);
    store.recordSuccess(api, snapshot(api.repo, 5), 0.1);
    store.setTargets([]);
    clock.now = 1060;
    // web returns 60 s after it left: its status, counts and all, is the one it left with.
    store.setTargets([web]);
    expect(store.latest(web)).toMatchObject({ lastSuccessAt: 1000, up: true });
    expect(store.latest(web)?.snapshot).toMatchObject({ quarantine: { count: 3 } });
    clock.now = 1061;
    // api returns 61 s after it left: it starts anew, unpolled.
    store.setTargets([web, api]);
    expect(store.latest(api)).toMatchObject({ lastAttemptAt: undefined, snapshot: undefined });
  });

  it('hands out frozen snapshots and bumps its version on every change', () => {
    const clock = { now: 1000 };
    const store = storeAt(clock);
    const before = store.version;
    store.setTargets([web]);
    store.recordSuccess(web, snapshot(web.repo, 3), 0.1);
    expect(store.version).toBeGreaterThan(before);
    const status = store.statuses()[0];
    expect(Object.isFrozen(status)).toBe(true);
    expect(Object.isFrozen(status?.snapshot)).toBe(true);
  });

  it('pushes every write to its subscribers, as statuses() shows the target, until unsubscribed', () => {
    const clock = { now: 1000 };
    const store = storeAt(clock, 60);
    const pushed: [string, unknown][] = [];
    const unsubscribe = store.subscribe((key, status) => pushed.push([key, status]));
    const shown = (target: Target) =>
      store.statuses().find((status) => status.target.repo === target.repo);

    store.setTargets([web, api]);
    expect(pushed.map(([key]) => key)).toHaveLength(2);
    pushed.length = 0;
    store.recordSuccess(web, snapshot(web.repo, 3), 0.1);
    clock.now = 1100;
    // A failure after the stale limit: pushed with the snapshot already hidden.
    store.recordFailure(web, 'HTTP 500', 0.1);
    store.recordOverrun(api, 'late');
    store.setTargets([web]);
    const webStatus = shown(web);
    expect(webStatus?.snapshot).toBeUndefined();
    expect(pushed).toHaveLength(4);
    expect(pushed[0]?.[1]).toMatchObject({ up: true, snapshot: { quarantine: { count: 3 } } });
    expect(pushed[1]?.[1]).toBe(webStatus);
    expect(pushed[2]?.[1]).toMatchObject({ up: false, lastError: 'late' });
    expect(pushed[3]?.[1]).toBeUndefined();
    expect(pushed[3]?.[0]).toContain('github.com/acme/api');

    unsubscribe();
    store.recordSuccess(web, snapshot(web.repo, 4), 0.1);
    expect(pushed).toHaveLength(4);
  });

  it("keeps a queue's testing attempts through failed polls and drops them with a poll that has none (API v1)", () => {
    const clock = { now: 1000 };
    const store = storeAt(clock);
    const queue: Target = { kind: 'merge_queue', repo: 'github.com/acme/web', branch: 'main' };
    store.setTargets([queue]);
    const attempts = startTestingAttempts(1000, true);
    store.recordSuccess(queue, poll(1000, 'running', []), 0.1, undefined, attempts);
    store.recordFailure(queue, 'HTTP 500', 0.1);
    expect(store.testingAttempts(queue)).toBe(attempts);
    expect(store.statuses()[0]?.testingAttempts).toBe(attempts);
    store.recordSuccess(queue, poll(1030, 'running', []), 0.1);
    expect(store.testingAttempts(queue)).toBeUndefined();
  });

  it("applies a ledger update that came before a queue's first poll to the ledger that poll records, once, and drops it with the target", () => {
    const clock = { now: 1000 };
    const store = storeAt(clock);
    const queue: Target = { kind: 'merge_queue', repo: 'github.com/acme/web', branch: 'main' };
    store.setTargets([queue]);
    const marked = (flow: QueueFlow): QueueFlow => ({
      ...flow,
      startedAt: (flow.startedAt ?? 0) - 1,
    });
    store.updateQueueFlowOnceStarted(queue, marked);
    expect(store.queueFlow(queue)).toBeUndefined();
    store.recordSuccess(
      queue,
      poll(1000, 'running', []),
      0.1,
      startQueueFlow(poll(1000, 'running', [])),
    );
    expect(store.queueFlow(queue)?.startedAt).toBe(999);
    store.recordSuccess(queue, poll(1030, 'running', []), 0.1, store.queueFlow(queue));
    expect(store.queueFlow(queue)?.startedAt).toBe(999);
    // Removed before its first poll: nothing waits for it when it is configured again.
    const api: Target = { ...queue, repo: 'github.com/acme/api' };
    store.setTargets([queue, api]);
    store.updateQueueFlowOnceStarted(api, marked);
    store.setTargets([queue]);
    store.setTargets([queue, api]);
    store.recordSuccess(
      api,
      poll(1000, 'running', []),
      0.1,
      startQueueFlow(poll(1000, 'running', [])),
    );
    expect(store.queueFlow(api)?.startedAt).toBe(1000);
  });
});
