// The simulator's benchmark and soak shapes: sized queues and lists, heavy churn, and latency.
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import type { SimulatedRepository } from '../../src/simulator/repositories.js';
import { createSimulatorWorld, type SimulatorWorld } from '../../src/simulator/world.js';
import { post, startTestSimulator, WEB } from './harness.js';

const SIZED: SimulatedRepository = {
  ...WEB,
  branches: ['main', 'release'],
  pullRequestsPerQueue: 30,
  quarantinedTests: 2000,
};

function queueLength(world: SimulatorWorld, branch: string): number {
  const answer = world.getQueue(WEB, branch);
  if (!answer.ok) throw new Error(answer.message);
  return answer.body.enqueuedPullRequests.length;
}

function quarantined(world: SimulatorWorld): number {
  const answer = world.listQuarantinedTests(WEB, 1, '');
  if (!answer.ok) throw new Error(answer.message);
  return answer.body.page.total_rows;
}

describe('sized repositories', () => {
  it('keep every queue at the asked number of pull requests and start the list at its size', () => {
    const world = createSimulatorWorld({ seed: 3, repositories: [SIZED], warmUpSeconds: 600 });
    expect(quarantined(world)).toBe(2000);
    for (let minute = 0; minute <= 60; minute += 10) {
      world.advance(world.now() + 600);
      expect(queueLength(world, 'main')).toBe(30);
      expect(queueLength(world, 'release')).toBe(30);
    }
    // Pull requests still move through the queue: the refill replaces the ones that left.
    expect(world.statistics().arrivals).toBeGreaterThan(60);
  });
});

describe('heavy churn', () => {
  const HOUR = 3600;

  function runHour(churn: 'normal' | 'heavy') {
    const world = createSimulatorWorld({ seed: 11, churn, warmUpSeconds: 0 });
    const before = world.statistics();
    const lengths: number[] = [];
    const lists: number[] = [];
    for (let t = 60; t <= HOUR; t += 60) {
      world.advance(world.now() + 60);
      lengths.push(queueLength(world, 'main'));
      lists.push(quarantined(world));
    }
    const after = world.statistics();
    const exits = Object.entries(after.transitions)
      .filter(([key]) => /->(merged|failed|cancelled)$/.test(key))
      .reduce((sum, [, count]) => sum + count, 0);
    return {
      arrivals: after.arrivals - before.arrivals,
      exits,
      listChanges:
        after.quarantineAdded -
        before.quarantineAdded +
        after.quarantineRemoved -
        before.quarantineRemoved,
      lengths,
      lists,
      startList: lists[0] ?? 0,
    };
  }

  it('makes pull requests and quarantined tests come and go many times more often', () => {
    const normal = runHour('normal');
    const heavy = runHour('heavy');
    expect(heavy.arrivals).toBeGreaterThan(10 * Math.max(1, normal.arrivals));
    expect(heavy.exits).toBeGreaterThan(10 * Math.max(1, normal.exits));
    expect(heavy.listChanges).toBeGreaterThan(10 * Math.max(1, normal.listChanges));
  });

  it('keeps queues and lists bounded while they churn', () => {
    const heavy = runHour('heavy');
    expect(Math.max(...heavy.lengths)).toBeLessThanOrEqual(30);
    expect(Math.min(...heavy.lists)).toBeGreaterThan(heavy.startList / 2);
    expect(Math.max(...heavy.lists)).toBeLessThan(heavy.startList * 2);
  });
});

describe('latencyMs', () => {
  // A lower bound only: an answer cannot come early, however slow the machine.
  it('holds every answer back by at least the given time', async () => {
    const simulator = await startTestSimulator({ latencyMs: 150 });
    const started = performance.now();
    const reply = await post(simulator, '/getQueue', { repo: WEB, targetBranch: 'main' });
    expect(reply.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(150);
  });
});
