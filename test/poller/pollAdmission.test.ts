// Polls in progress at once: a burst of due polls finishes a batch at a time.
import { afterEach, describe, expect, it } from 'vitest';
import { configuredTargets } from '../../src/config/targets.js';
import { POLLS_AT_ONCE, PollAdmission, pollsAtOnce } from '../../src/poller/pollAdmission.js';
import { buildPollJobs } from '../../src/poller/jobs/targetJobs.js';
import { SnapshotStore } from '../../src/snapshot/store.js';
import { exporterConfig } from '../support/exporterConfig.js';
import { queueResponse } from '../trunk/fixtures.js';
import {
  capturingLogger,
  cleanUp,
  makeClient,
  sendJson,
  sendText,
  startApiServer,
} from '../trunk/harness.js';

afterEach(cleanUp);

/** Whether `promise` has settled once pending callbacks have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('PollAdmission', () => {
  it('lets at most its size in; a place that comes back goes to the longest waiting poll', async () => {
    const admission = new PollAdmission(2);
    const signal = new AbortController().signal;
    const first = await admission.enter(signal);
    const second = await admission.enter(signal);
    const order: string[] = [];
    const third = admission.enter(signal).then((leave) => {
      order.push('third');
      return leave;
    });
    const fourth = admission.enter(signal).then((leave) => {
      order.push('fourth');
      return leave;
    });
    expect(await settled(third)).toBe(false);

    first();
    first(); // leaving twice frees one place only
    expect(await settled(third)).toBe(true);
    expect(await settled(fourth)).toBe(false);
    second();
    (await fourth)();
    (await third)();
    expect(order).toEqual(['third', 'fourth']);
    // Every place is back: two polls get in at once again.
    (await admission.enter(signal))();
  });

  it('ends an aborted wait with the signal’s reason, and its place goes to the next poll', async () => {
    const admission = new PollAdmission(1);
    const leave = await admission.enter(new AbortController().signal);
    const stopped = new AbortController();
    const aborted = admission.enter(stopped.signal);
    const next = admission.enter(new AbortController().signal);
    stopped.abort(new Error('job stopped'));
    await expect(aborted).rejects.toThrow('job stopped');
    leave();
    expect(await settled(next)).toBe(true);
  });
});

describe('pollsAtOnce', () => {
  it('is five polls for every sixteen slots, rounded up, and at least POLLS_AT_ONCE', () => {
    expect(pollsAtOnce(4)).toBe(POLLS_AT_ONCE);
    expect(pollsAtOnce(128)).toBe(40);
    expect(pollsAtOnce(100)).toBe(32);
  });
});

describe('poll jobs and admission', () => {
  it('hold a burst of polls to pollsAtOnce(), except polls of targets whose latest poll failed', async () => {
    let answer = true;
    const server = await startApiServer((_req, res) => {
      // First every call fails at once; then every call hangs until the test ends.
      if (answer) sendText(res, 400, 'bad request');
    });
    const maxConcurrentRequests = 32;
    const targets = Array.from({ length: POLLS_AT_ONCE + 1 }, (_, index) => {
      const name = `github.com/acme/repo${index}`;
      return {
        repo: { host: 'github.com', owner: 'acme', name: `repo${index}` },
        name,
        branches: ['main'],
        flakyTests: false,
      };
    });
    const config = exporterConfig(server.apiUrl, targets, { trunk: { maxConcurrentRequests } });
    expect(pollsAtOnce(maxConcurrentRequests)).toBe(POLLS_AT_ONCE);
    // A hanging call never times out within the test: only admission decides when a poll calls.
    const { client } = makeClient(server.apiUrl, { maxConcurrentRequests, timeoutSeconds: 60 });
    const store = new SnapshotStore(600);
    store.setTargets(configuredTargets(config));
    const build = () =>
      buildPollJobs({ config, reader: client, store, logger: capturingLogger().logger });
    const stop = new AbortController();
    /** Targets with a call at the server since request number `from` (retries counted once). */
    const targetsCalled = (from: number): number =>
      new Set(server.requests.slice(from).map((request) => request.body)).size;
    const until = async (from: number, count: number) => {
      const deadline = Date.now() + 20_000;
      while (targetsCalled(from) < count) {
        if (Date.now() > deadline) throw new Error(`${String(targetsCalled(from))} targets called`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };

    // Fresh jobs, every call hanging: one poll more than the bound waits for a place.
    answer = false;
    const fresh = build().map((job) => job.run(stop.signal));
    await until(0, POLLS_AT_ONCE);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(targetsCalled(0)).toBe(POLLS_AT_ONCE);
    stop.abort();
    await Promise.all(fresh);

    // Jobs whose latest poll failed are not held back: every one of them calls at once.
    answer = true;
    const failing = build();
    await Promise.all(failing.map((job) => job.run(new AbortController().signal)));
    const before = server.requests.length;
    answer = false;
    const again = new AbortController();
    const retried = failing.map((job) => job.run(again.signal));
    // With every call hanging, a held-back poll would never call.
    await until(before, POLLS_AT_ONCE + 1);
    expect(targetsCalled(before)).toBe(POLLS_AT_ONCE + 1);
    again.abort();
    await Promise.all(retried);
  });

  it('let the next poll in once a poll has sent its last lookup, before its answers come', async () => {
    const template = queueResponse();
    const item = (template.enqueuedPullRequests as Record<string, unknown>[])[0];
    // One PR without a state: every poll looks it up, and every lookup hangs.
    const queue = { ...template, enqueuedPullRequests: [{ ...item, state: undefined }] };
    const server = await startApiServer((req, res) => {
      if (req.url?.endsWith('/getQueue') === true) sendJson(res, 200, queue);
    });
    const maxConcurrentRequests = 32;
    expect(pollsAtOnce(maxConcurrentRequests)).toBe(POLLS_AT_ONCE);
    const targets = Array.from({ length: POLLS_AT_ONCE + 1 }, (_, index) => ({
      repo: { host: 'github.com', owner: 'acme', name: `repo${index}` },
      name: `github.com/acme/repo${index}`,
      branches: ['main'],
      flakyTests: false,
    }));
    const config = exporterConfig(server.apiUrl, targets, { trunk: { maxConcurrentRequests } });
    // A hanging call never times out within the test: only admission decides when a poll calls.
    const { client } = makeClient(server.apiUrl, { maxConcurrentRequests, timeoutSeconds: 60 });
    const store = new SnapshotStore(600);
    store.setTargets(configuredTargets(config));
    const jobs = buildPollJobs({ config, reader: client, store, logger: capturingLogger().logger });
    const stop = new AbortController();
    const getQueues = (): number =>
      server.requests.filter((request) => request.url.endsWith('/getQueue')).length;

    const running = jobs.map((job) => job.run(stop.signal));
    // Every poll in progress waits for its lookup; the one beyond the bound still gets in.
    for (let waited = 0; getQueues() < POLLS_AT_ONCE + 1 && waited < 2000; waited += 5) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(getQueues()).toBe(POLLS_AT_ONCE + 1);
    stop.abort();
    await Promise.all(running);
  });
});
