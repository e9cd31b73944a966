// One big or slow target beside a small one: the small one keeps its schedule, a failed poll stops
// sending, and a poll that outruns its interval is reported late (issue 15, item 3).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { FaultPlan } from '../../src/simulator/faults.js';
import type { SimulatedRepository } from '../../src/simulator/repositories.js';
import { createSimulatorWorld } from '../../src/simulator/world.js';
import { select, sum } from '../support/exposition.js';
import {
  configYaml,
  SIMULATOR_TOKEN,
  startTestExporter,
  type ExporterUnderTest,
} from '../support/exporterHarness.js';
import { startTestSimulator } from '../support/simulator.js';
import { pullRequestResponse, queueResponse } from '../trunk/fixtures.js';
import { cleanUp, sendJson, startApiServer } from '../trunk/harness.js';
import {
  API,
  LEVEL,
  WEB,
  callsTo,
  logRecords,
  pollFailures,
  until,
  type LogRecord,
} from './harness.js';

afterEach(cleanUp);

const web = (pullRequestsPerQueue?: number): SimulatedRepository => ({
  host: 'github.com',
  owner: 'acme',
  name: 'web',
  branches: ['main'],
  pullRequestsPerQueue,
});
const api: SimulatedRepository = {
  host: 'github.com',
  owner: 'acme',
  name: 'api',
  branches: ['main'],
};

const TARGETS = [
  `  - repo: ${WEB}`,
  '    branches: [main]',
  `  - repo: ${API}`,
  '    branches: [main]',
].join('\n');

/** A documented-shape simulator (no state in queue items: every PR is looked up) and an exporter. */
async function startRig(options: {
  readonly repositories: readonly SimulatedRepository[];
  readonly intervalSeconds: number;
  readonly maxConcurrentRequests: number;
  readonly maxRequestsPerSecond: number;
  readonly timeoutSeconds?: number;
}) {
  const faults = new FaultPlan();
  const world = createSimulatorWorld({
    seed: 7,
    flavour: 'documented',
    repositories: options.repositories,
  });
  const { simulator } = await startTestSimulator({ world, token: SIMULATOR_TOKEN, faults });
  const subject = await startTestExporter(
    configYaml({
      apiUrl: simulator.baseUrl,
      targets: TARGETS,
      polling: [
        `  mergeQueueIntervalSeconds: ${options.intervalSeconds}`,
        '  flakyTestsIntervalSeconds: 600',
        '  staleAfterSeconds: 600',
      ].join('\n'),
      maxConcurrentRequests: options.maxConcurrentRequests,
      ...(options.timeoutSeconds === undefined ? {} : { timeoutSeconds: options.timeoutSeconds }),
    }).replace(
      'maxRequestsPerSecond: 500',
      `maxRequestsPerSecond: ${options.maxRequestsPerSecond}`,
    ),
  );
  return { faults, world, subject };
}

/** The lines saying a poll is late. */
function lateLines(subject: ExporterUnderTest): LogRecord[] {
  return logRecords(subject).filter((record) => record.msg.startsWith('poll of'));
}

/** Gaps in ms between consecutive times. */
function gaps(times: readonly number[]): number[] {
  return times.slice(1).map((time, index) => time - (times[index] ?? time));
}

/**
 * Watches this process's event loop (the exporter runs in it) over `ms`: the longest any timer
 * was held back meanwhile. A busy machine delays every timer, the scheduler's too: a schedule is
 * kept when its gaps are within 20 % of the interval beyond that, whatever the machine's load.
 */
async function waitWatchingTimers(ms: number): Promise<number> {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  await new Promise((resolve) => setTimeout(resolve, ms));
  delay.disable();
  return delay.max / 1e6;
}

/**
 * Watches this process's timers from now until stop(): a 20 ms tick that records how late each
 * turn came. heldBackMs sums those delays between two times (ms since the epoch), so a machine
 * that held the process back in many short turns counts as much as in one long one.
 */
function watchTimersHeldBack(): { heldBackMs(from: number, to: number): number; stop(): void } {
  const tickMs = 20;
  const delays: { at: number; ms: number }[] = [];
  let due = Date.now() + tickMs;
  const tick = setInterval(() => {
    const now = Date.now();
    delays.push({ at: now, ms: Math.max(0, now - due) });
    due = now + tickMs;
  }, tickMs);
  return {
    heldBackMs: (from, to) =>
      delays.filter(({ at }) => at > from && at <= to).reduce((total, { ms }) => total + ms, 0),
    stop: () => {
      clearInterval(tick);
    },
  };
}

/** Polls expected at `intervalMs` (± 10 % jitter) over `windowMs`, timers held back up to `lagMs`. */
function pollsAtLeast(windowMs: number, intervalMs: number, lagMs: number): number {
  return Math.floor(windowMs / (intervalMs * 1.1 + lagMs));
}

/**
 * A fake API in the documented shape (no state in queue items, so every PR is looked up): acme/web
 * has `bigQueue` PRs, acme/api five. The simulator needs minutes to build a 10,000-PR queue.
 */
async function startDocumentedApi(bigQueue: number, lookups: 'answer' | 'hang' = 'answer') {
  const queueBody = (count: number, first: number): string => {
    const template = queueResponse();
    const documentedItem = { ...(template.enqueuedPullRequests as Record<string, unknown>[])[0] };
    delete documentedItem.state;
    return JSON.stringify({
      ...template,
      enqueuedPullRequests: Array.from({ length: count }, (_, index) => ({
        ...documentedItem,
        prNumber: first + index,
        prSha: `sha${first + index}`,
      })),
    });
  };
  const bodies = { web: queueBody(bigQueue, 10_000), api: queueBody(5, 100) };
  return startApiServer((_req, res, _index, recorded) => {
    const body = JSON.parse(recorded.body) as { repo: { name: string }; pr?: { number: number } };
    if (recorded.url.endsWith('/getQueue')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body.repo.name === 'web' ? bodies.web : bodies.api);
    } else if (lookups === 'hang' && body.repo.name === 'web') {
      // Never answered: the client gives up at its timeout.
    } else {
      sendJson(res, 200, { ...pullRequestResponse(), prNumber: body.pr?.number, state: 'pending' });
    }
  });
}

describe('one big queue beside a small one', () => {
  it('10,000-PR queue at 100 requests/s: the small queue keeps its 2 s schedule within 20 %, the big one is reported late', async () => {
    const server = await startDocumentedApi(10_000);
    const timers = watchTimersHeldBack();
    const subject = await startTestExporter(
      configYaml({
        apiUrl: server.apiUrl,
        token: SIMULATOR_TOKEN,
        targets: TARGETS,
        polling: '  mergeQueueIntervalSeconds: 2\n  flakyTestsIntervalSeconds: 600',
        maxConcurrentRequests: 4,
      }).replace('maxRequestsPerSecond: 500', 'maxRequestsPerSecond: 100'),
    );
    const calls = (repo: 'web' | 'api', endpoint: string) =>
      server.requests.filter(
        (request) =>
          request.url.endsWith(`/${endpoint}`) && request.body.includes(`"name":"${repo}"`),
      );
    // The big poll is under way: its queue has answered and its lookups are being sent.
    await until(
      () => calls('web', 'getSubmittedPullRequest').length > 50,
      'the big queue to be looked up',
    );
    const since = Date.now();
    const lag = await waitWatchingTimers(10_000);

    const small = calls('api', 'getQueue').filter((call) => call.receivedAt >= since - 2_000);
    // Ten seconds at 2 s ± 10 %: five polls or so on an idle machine. Before targets took turns for
    // the limiter's slots, the big poll's 10,000 lookups went ahead of every other getQueue: none
    // at all here.
    expect(small.length).toBeGreaterThanOrEqual(Math.max(2, pollsAtLeast(12_000, 2_000, lag)));
    for (const gap of gaps(small.map((call) => call.receivedAt))) {
      expect(gap).toBeLessThanOrEqual(2_000 * 1.2 + lag);
    }
    // Every small poll succeeded, none ran late.
    expect(pollFailures(subject, API)).toEqual([]);
    const samples = await subject.samples();
    expect(sum(samples, 'trunk_exporter_target_up', { repo: API })).toBe(1);
    const last = select(samples, 'trunk_exporter_last_success_timestamp_seconds', { repo: API });
    expect(Date.now() / 1000 - (last[0]?.value ?? 0)).toBeLessThan(2 * 1.2 + 0.5 + lag / 1000);

    // The big poll (100 s of lookups at this rate) outran its interval: counted and named.
    expect(
      sum(samples, 'trunk_exporter_poll_overruns_total', { kind: 'merge_queue' }),
    ).toBeGreaterThanOrEqual(1);
    const late = lateLines(subject);
    timers.stop();
    const lateBig = late.filter((record) => record.repo === WEB);
    expect(lateBig.length).toBeGreaterThanOrEqual(1);
    for (const record of lateBig) {
      expect(record).toMatchObject({ level: LEVEL.warn, repo: WEB, branch: 'main' });
      expect(record.msg).toContain(`merge queue ${WEB} main is late`);
    }
    // The small poll's six calls take their turns in a fraction of its interval: it runs late only
    // when the machine held this process's timers back, in the interval before the line, by more
    // than the 20 % a schedule is allowed.
    for (const record of late.filter((line) => line.repo !== WEB)) {
      expect(record).toMatchObject({ level: LEVEL.warn, repo: API, branch: 'main' });
      // A hold that ended as the line was written is counted by the tick after it.
      const at = Date.parse(record.time);
      expect(timers.heldBackMs(at - 2_000, at + 100)).toBeGreaterThan(2_000 * 0.2);
    }
  }, 30_000);
});

describe('one hanging queue beside a small one', () => {
  it('lookups that never answer leave a slot free: the small queue keeps its 1 s schedule within 20 %', async () => {
    const server = await startDocumentedApi(50, 'hang');
    const subject = await startTestExporter(
      configYaml({
        apiUrl: server.apiUrl,
        token: SIMULATOR_TOKEN,
        targets: TARGETS,
        polling: '  mergeQueueIntervalSeconds: 1\n  flakyTestsIntervalSeconds: 600',
        maxConcurrentRequests: 4,
        timeoutSeconds: 5,
      }),
    );
    const calls = (repo: 'web' | 'api', endpoint: string) =>
      server.requests.filter(
        (request) =>
          request.url.endsWith(`/${endpoint}`) && request.body.includes(`"name":"${repo}"`),
      );
    await until(
      () => calls('web', 'getSubmittedPullRequest').length >= 3,
      'the hanging lookups to be sent',
    );
    const since = Date.now();
    const lag = await waitWatchingTimers(6_000);

    // The hanging queue holds three of the four slots, never the fourth: at most three of its
    // lookups were ever open at once, and the small queue polled on time in the one left.
    // Taking turns alone is not enough here: the small queue's getQueue waited for a hanging
    // lookup to time out (5 s) before it got a slot.
    const small = calls('api', 'getQueue').filter((call) => call.receivedAt >= since - 1_000);
    expect(small.length).toBeGreaterThanOrEqual(Math.max(2, pollsAtLeast(7_000, 1_000, lag)));
    for (const gap of gaps(small.map((call) => call.receivedAt))) {
      expect(gap).toBeLessThanOrEqual(1_000 * 1.2 + lag);
    }
    expect(pollFailures(subject, API)).toEqual([]);
    const samples = await subject.samples();
    expect(sum(samples, 'trunk_exporter_target_up', { repo: API })).toBe(1);
  }, 30_000);
});

describe('twelve never-answering queues beside a healthy one', () => {
  it('at default limits, once the healthy queue has answered, it keeps its 2 s schedule within 20 %', async () => {
    const hanging = Array.from({ length: 12 }, (_, index) => `hang${index}`);
    const server = await startApiServer((_req, res, _index, recorded) => {
      const body = JSON.parse(recorded.body) as { repo: { name: string }; pr?: { number: number } };
      // The twelve queues never answer: each attempt runs to its timeout.
      if (body.repo.name !== 'api') return;
      if (recorded.url.endsWith('/getQueue')) sendJson(res, 200, queueResponse());
      else sendJson(res, 200, { ...pullRequestResponse(), prNumber: body.pr?.number });
    });
    const subject = await startTestExporter(
      configYaml({
        apiUrl: server.apiUrl,
        token: SIMULATOR_TOKEN,
        targets: [
          ...hanging.map((name) => `  - repo: github.com/acme/${name}\n    branches: [main]`),
          `  - repo: ${API}\n    branches: [main]`,
        ].join('\n'),
        polling: '  mergeQueueIntervalSeconds: 2\n  flakyTestsIntervalSeconds: 600',
        // trunk.* defaults: 10 s timeout, 4 slots, 10 requests/s.
        timeoutSeconds: 10,
        maxConcurrentRequests: 4,
      }).replace('maxRequestsPerSecond: 500', 'maxRequestsPerSecond: 10'),
    );
    const healthyPolls = () =>
      server.requests.filter(
        (request) => request.url.endsWith('/getQueue') && request.body.includes('"name":"api"'),
      );
    // Warm-up: until its first answer the healthy queue is unproven, like the hanging ones, and
    // takes its turn with them: at most about 12 / 4 timeouts (30 s), 2 s of first-poll spread.
    const warmUpEnds = Date.now() + 40_000;
    while (healthyPolls().length === 0) {
      if (Date.now() > warmUpEnds) throw new Error('the healthy queue was never polled');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const since = healthyPolls()[0]?.receivedAt ?? 0;
    // Longer than a timeout: every hanging slot is given back (and taken again) meanwhile.
    const lag = await waitWatchingTimers(12_000);

    const polls = healthyPolls().filter((call) => call.receivedAt >= since);
    // 12 s at 2 s ± 10 %: six polls or so, the first included. Before hanging queues were kept out of
    // the last slot, each freed slot went to the next hanging queue in turn: about one poll per
    // 10 s timeout here.
    expect(polls.length).toBeGreaterThanOrEqual(Math.max(2, pollsAtLeast(12_000, 2_000, lag)));
    for (const gap of gaps(polls.map((call) => call.receivedAt))) {
      expect(gap).toBeLessThanOrEqual(2_000 * 1.2 + lag);
    }
    expect(pollFailures(subject, API)).toEqual([]);
    const samples = await subject.samples();
    expect(sum(samples, 'trunk_exporter_target_up', { repo: API })).toBe(1);
    // The hanging queues were polled all along, and timed out.
    expect(sum(samples, 'trunk_exporter_api_requests_total', { code: 'timeout' })).toBeGreaterThan(
      0,
    );
  }, 70_000);
});

describe('a failed lookup', () => {
  it('cancels the rest of its poll: the server sees at most the lookups already on their way', async () => {
    const maxConcurrentRequests = 4;
    const { faults, subject } = await startRig({
      repositories: [web(500), api],
      intervalSeconds: 30,
      maxConcurrentRequests,
      maxRequestsPerSecond: 500,
    });
    // 400 is not retried: the first lookup fails the poll.
    faults.inject(
      'getSubmittedPullRequest',
      { kind: 'status', status: 400, body: 'bad' },
      { repo: WEB },
    );
    await until(() => pollFailures(subject, WEB).length === 1, 'the failed poll');
    // Long enough for the other 499 lookups at 500 a second, had they been sent.
    await new Promise((resolve) => setTimeout(resolve, 1_500));

    const lookups = callsTo(faults, 'getSubmittedPullRequest', WEB);
    // The failed one, and those that already held a slot; before the fix all 500 were sent.
    expect(lookups.length).toBeLessThanOrEqual(maxConcurrentRequests + 1);
    expect(pollFailures(subject, WEB)).toHaveLength(1);
    // The other target was not touched by the cancellation.
    await subject.waitFor(
      (samples) => sum(samples, 'trunk_exporter_target_up', { repo: API }) === 1,
      'the other queue up',
    );
  });
});

describe('a poll that outruns its interval', () => {
  it('is counted and logged at once, and its target shows target_up 0 before the poll has failed', async () => {
    const { faults, subject } = await startRig({
      repositories: [web(), api],
      intervalSeconds: 1,
      maxConcurrentRequests: 4,
      maxRequestsPerSecond: 500,
      timeoutSeconds: 5,
    });
    const up = await subject.waitFor(
      (samples) => sum(samples, 'trunk_exporter_target_up', { repo: WEB }) === 1,
      'the queue up once',
    );
    const overrunsBefore = sum(up, 'trunk_exporter_poll_overruns_total', { kind: 'merge_queue' });
    const linesBefore = lateLines(subject).length;
    // Headers and half the body, then nothing: the attempt runs until its 5 s timeout.
    faults.inject('getQueue', { kind: 'stall' }, { repo: WEB });
    await until(
      () => faults.calls().some((call) => call.fault === 'stall'),
      'the stalled getQueue',
    );
    const samples = await subject.waitFor(
      (current) => sum(current, 'trunk_exporter_target_up', { repo: WEB }) === 0,
      'the late queue down',
    );
    // Down because it is late, not because it failed: the stalled attempt has not timed out yet.
    expect(pollFailures(subject, WEB)).toEqual([]);
    expect(sum(samples, 'trunk_exporter_poll_overruns_total', { kind: 'merge_queue' })).toBe(
      overrunsBefore + 1,
    );
    expect(sum(samples, 'trunk_exporter_poll_overruns_total', { kind: 'flaky_tests' })).toBe(0);
    const late = lateLines(subject).slice(linesBefore);
    expect(late).toHaveLength(1);
    expect(late[0]).toMatchObject({
      level: LEVEL.warn,
      repo: WEB,
      branch: 'main',
      kind: 'merge_queue',
      intervalSeconds: 1,
    });
  });
});
