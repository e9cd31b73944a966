import { describe, expect, it } from 'vitest';
import { KNOWN_PULL_REQUEST_STATES, KNOWN_QUEUE_STATES } from '../../src/snapshot/types.js';
import { createRandom } from '../../src/simulator/random.js';
import {
  createSimulatorWorld,
  DEFAULT_SIMULATOR_START_TIME,
  SIMULATOR_STEP_SECONDS,
  type SimulatorWorld,
} from '../../src/simulator/world.js';
import { checkQueueStep, type QueueObservation } from './queueInvariants.js';

const T0 = DEFAULT_SIMULATOR_START_TIME;

/** Everything the world can answer, as one JSON string. */
function dump(world: SimulatorWorld): string {
  const out: unknown[] = [world.now()];
  for (const repo of world.repositories) {
    for (const branch of repo.branches) {
      const queue = world.getQueue(repo, branch);
      out.push(queue);
      if (!queue.ok) continue;
      for (const pr of queue.body.enqueuedPullRequests) {
        out.push(world.getSubmittedPullRequest(repo, branch, pr.prNumber));
      }
    }
    let token = '';
    do {
      const page = world.listQuarantinedTests(repo, 37, token);
      out.push(page);
      token = page.ok ? page.body.page.next_page_token : '';
    } while (token !== '');
  }
  return JSON.stringify(out);
}

const ADVANCES = [7, 100, 3600, 3601, 9000, 86_400];

function replay(seed: number, flavour: 'documented' | 'live' = 'documented'): string {
  const world = createSimulatorWorld({ seed, flavour });
  const dumps = [dump(world)];
  for (const offset of ADVANCES) {
    world.advance(T0 + offset);
    dumps.push(dump(world));
  }
  return dumps.join('\n');
}

describe('random', () => {
  it('replays from a seed and stays in range', () => {
    const a = createRandom(7);
    const b = createRandom(7);
    const drawsA = Array.from({ length: 100 }, () => a.int(3, 9));
    expect(Array.from({ length: 100 }, () => b.int(3, 9))).toEqual(drawsA);
    expect(Math.min(...drawsA)).toBe(3);
    expect(Math.max(...drawsA)).toBe(9);
    expect(a.hex(40)).toMatch(/^[0-9a-f]{40}$/);
    expect(a.uuid()).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });
});

describe('simulator world determinism', () => {
  it('gives identical answers for the same seed and advance times', () => {
    expect(replay(1234)).toBe(replay(1234));
    expect(replay(99, 'live')).toBe(replay(99, 'live'));
  });

  it('gives different answers for a different seed', () => {
    expect(replay(1234)).not.toBe(replay(1235));
  });

  it('does not depend on how the time is split into advance() calls', () => {
    const jump = createSimulatorWorld({ seed: 5 });
    jump.advance(T0 + 3 * 3600);
    const crawl = createSimulatorWorld({ seed: 5 });
    for (let t = T0; t <= T0 + 3 * 3600; t += 13) crawl.advance(t);
    crawl.advance(T0 + 3 * 3600);
    expect(dump(crawl)).toBe(dump(jump));
  });

  it('starts at startTime with queues already busy, and never moves backwards', () => {
    const world = createSimulatorWorld({ seed: 3 });
    expect(world.now()).toBe(T0);
    const busy = world.repositories.flatMap((repo) =>
      repo.branches.map((branch) => {
        const queue = world.getQueue(repo, branch);
        return queue.ok ? queue.body.enqueuedPullRequests.length : 0;
      }),
    );
    expect(busy.some((length) => length > 0)).toBe(true);
    world.advance(T0 - 600);
    world.advance(T0 + SIMULATOR_STEP_SECONDS - 1);
    expect(world.now()).toBe(T0);
  });
});

describe('simulator world movement', () => {
  it('over two simulated days shows every state, every exit, restarts and list churn', () => {
    const world = createSimulatorWorld({ seed: 2026, flavour: 'live' });
    const queueStates = new Set<string>();
    const prStates = new Set<string>();
    const restarts = { urgent: 0, failureAhead: 0, other: 0 };
    const quarantineDirections = new Set<string>();
    const lengths: number[] = [];
    const previous = new Map<string, QueueObservation>();
    const previousRows = new Map<string, number>();
    const violations: string[] = [];
    const steps = (2 * 86_400) / SIMULATOR_STEP_SECONDS;

    for (let step = 1; step <= steps; step++) {
      world.advance(T0 + step * SIMULATOR_STEP_SECONDS);
      for (const repo of world.repositories) {
        for (const branch of repo.branches) {
          const key = `${repo.name}/${branch}`;
          const answer = world.getQueue(repo, branch);
          if (!answer.ok) throw new Error(answer.message);
          const queue = answer.body;
          const items = queue.enqueuedPullRequests;
          queueStates.add(queue.state);
          for (const pr of items) prStates.add(pr.state ?? 'missing');
          if (step % 60 === 0) lengths.push(items.length);
          if (items.filter((pr) => pr.state === 'testing').length > queue.concurrency) {
            violations.push(`${key} at step ${step}: more testing than concurrency`);
          }
          const observation = { state: queue.state, mode: queue.mode, items };
          const before = previous.get(key);
          if (before !== undefined) {
            const findings = checkQueueStep(world, repo, branch, before, observation);
            violations.push(...findings.violations);
            for (const state of findings.finalStates) prStates.add(state);
            restarts.urgent += findings.restarts.urgent;
            restarts.failureAhead += findings.restarts.failureAhead;
            restarts.other += findings.restarts.other;
          }
          previous.set(key, observation);
        }
        if (step % 12 === 0) {
          const page = world.listQuarantinedTests(repo, 1, '');
          if (!page.ok) throw new Error(page.message);
          const rows = page.body.page.total_rows;
          const last = previousRows.get(repo.name);
          if (last !== undefined && rows > last) quarantineDirections.add('grew');
          if (last !== undefined && rows < last) quarantineDirections.add('shrank');
          previousRows.set(repo.name, rows);
        }
      }
    }

    expect(violations).toEqual([]);
    expect([...queueStates].sort()).toEqual([...KNOWN_QUEUE_STATES].sort());
    expect([...prStates].sort()).toEqual([...KNOWN_PULL_REQUEST_STATES].sort());
    expect(restarts.urgent).toBeGreaterThan(0);
    expect(restarts.failureAhead).toBeGreaterThan(0);
    expect(restarts.other).toBeGreaterThan(0);
    expect(quarantineDirections).toEqual(new Set(['grew', 'shrank']));
    lengths.sort((a, b) => a - b);
    const median = lengths[Math.floor(lengths.length / 2)] ?? 0;
    expect(median).toBeGreaterThanOrEqual(3);
    expect(median).toBeLessThanOrEqual(15);

    const statistics = world.statistics();
    expect(statistics.transitions['tests_passed->merged']).toBeGreaterThan(100);
    expect(statistics.transitions['pending_failure->failed']).toBeGreaterThan(10);
    expect(statistics.transitions['pending_failure->testing']).toBeGreaterThan(0);
    expect(statistics.quarantineAdded).toBeGreaterThan(statistics.quarantineRemoved);
    // Two simulated days take seconds of CPU: several times that on a busy machine.
  }, 120_000);

  it('keeps finished pull requests answerable but never ones from another queue', () => {
    const world = createSimulatorWorld({ seed: 8 });
    const web = world.repositories[0];
    if (web === undefined) throw new Error('no repositories');
    const main = world.getQueue(web, 'main');
    if (!main.ok) throw new Error(main.message);
    const first = main.body.enqueuedPullRequests[0];
    if (first === undefined) throw new Error('empty queue after warm-up');
    expect(world.getSubmittedPullRequest(web, 'main', first.prNumber).ok).toBe(true);
    expect(world.getSubmittedPullRequest(web, 'release', first.prNumber)).toMatchObject({
      ok: false,
      status: 404,
    });
    world.advance(T0 + 6 * 3600);
    const later = world.getSubmittedPullRequest(web, 'main', first.prNumber);
    expect(later).toMatchObject({ ok: true, body: { isCurrentlySubmittedToQueue: false } });
  });
});
