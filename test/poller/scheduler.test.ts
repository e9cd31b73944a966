import { afterEach, describe, expect, it, vi } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { silentLogger } from '../../src/log/logger.js';
import { PollScheduler, type PollJob } from '../../src/poller/scheduler.js';

let scheduler: PollScheduler | undefined;
afterEach(async () => {
  await scheduler?.stop();
  scheduler = undefined;
});

function newScheduler(): PollScheduler {
  scheduler = new PollScheduler({ logger: silentLogger(), firstPollSpreadSeconds: 0 });
  return scheduler;
}

/** A job that records when each run starts and how many runs overlap. */
function recordingJob(key: string, intervalSeconds: number, runMs: number, fail = false) {
  const stats = { starts: 0, inFlight: 0, maxInFlight: 0, aborted: 0, startedAt: [] as number[] };
  const job: PollJob = {
    key,
    intervalSeconds,
    async run(signal) {
      stats.starts++;
      stats.startedAt.push(performance.now());
      stats.inFlight++;
      stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
      try {
        await sleep(runMs, undefined, { signal });
        if (fail) throw new Error('upstream down');
      } catch (error) {
        if (signal.aborted) stats.aborted++;
        else throw error;
      } finally {
        stats.inFlight--;
      }
    },
  };
  return { job, stats };
}

/**
 * Waits until `condition` holds: a loaded machine runs the scheduler's timers late, so each case
 * waits for the runs it asserts on rather than for a fixed time.
 */
async function until(condition: () => boolean, what: string): Promise<void> {
  await vi.waitFor(
    () => {
      if (!condition()) throw new Error(`timed out waiting for ${what}`);
    },
    { timeout: 10_000, interval: 5 },
  );
}

/** Timers may fire a millisecond or two early when measured with performance.now(). */
const CLOCK_SLACK_MS = 5;

describe('PollScheduler', () => {
  it('never overlaps runs of one job, even when a run outlasts the interval', async () => {
    const slow = recordingJob('slow', 0.02, 60);
    newScheduler().setJobs([slow.job]);
    await until(() => slow.stats.starts >= 3, 'three runs');
    expect(slow.stats.maxInFlight).toBe(1);
  });

  it('keeps polling a job whose runs throw', async () => {
    const failing = recordingJob('failing', 0.02, 1, true);
    newScheduler().setJobs([failing.job]);
    await until(() => failing.stats.starts >= 5, 'five runs, each throwing');
  });

  it('does not let a hanging job delay another', async () => {
    const hanging = recordingJob('hanging', 0.01, 60_000);
    const healthy = recordingJob('healthy', 0.02, 1);
    newScheduler().setJobs([hanging.job, healthy.job]);
    await until(() => healthy.stats.starts >= 5, 'five runs of the healthy job');
    expect(hanging.stats.starts).toBe(1);
  });

  it('waits about one interval between runs', async () => {
    const job = recordingJob('paced', 0.1, 1);
    newScheduler().setJobs([job.job]);
    await until(() => job.stats.starts >= 4, 'four runs');
    // Every 0.1 s ± 10 % from one start to the next: a scheduler without a wait would start the
    // next run at once. A busy machine only makes the gaps longer.
    const { startedAt } = job.stats;
    const gaps = startedAt.slice(1).map((at, index) => at - (startedAt[index] ?? at));
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(100 * 0.9 - CLOCK_SLACK_MS);
  });

  it('starts added jobs, stops removed ones and keeps unchanged ones running', async () => {
    const kept = recordingJob('kept', 0.02, 1);
    const removed = recordingJob('removed', 0.02, 1);
    const added = recordingJob('added', 0.02, 1);
    const running = newScheduler();
    running.setJobs([kept.job, removed.job]);
    await until(() => kept.stats.starts >= 2 && removed.stats.starts >= 2, 'two runs of each');
    running.setJobs([kept.job, added.job]);
    const removedStartsAtSwap = removed.stats.starts;
    const keptStartsAtSwap = kept.stats.starts;
    await until(
      () => added.stats.starts >= 2 && kept.stats.starts >= keptStartsAtSwap + 3,
      'the added job and the kept one to run on',
    );
    expect(running.keys().sort()).toEqual(['added', 'kept']);
    expect(removed.stats.starts).toBe(removedStartsAtSwap);
  });

  it('aborts in-flight runs on stop and resolves once they ended', async () => {
    const hanging = recordingJob('hanging', 1, 60_000);
    const running = newScheduler();
    running.setJobs([hanging.job]);
    await until(() => hanging.stats.inFlight === 1, 'the run to start');
    await running.stop();
    expect(hanging.stats.aborted).toBe(1);
    expect(hanging.stats.inFlight).toBe(0);
  });

  it('runs a waiting job at once on runNow, and the next one an interval later', async () => {
    const job = recordingJob('queue', 600, 1);
    const running = newScheduler();
    running.setJobs([job.job]);
    await until(() => job.stats.starts === 1 && job.stats.inFlight === 0, 'the first run');
    expect(running.runNow('queue')).toBe(true);
    // Only runNow starts it within the test: the next run is due 600 s on.
    await until(() => job.stats.starts === 2, 'the run asked for');
    expect(running.runNow('unknown')).toBe(false);
  });

  it('runs again right after the poll in flight on runNow, never two at once', async () => {
    const job = recordingJob('queue', 600, 100);
    const running = newScheduler();
    running.setJobs([job.job]);
    await until(() => job.stats.inFlight === 1, 'the first run');
    running.runNow('queue');
    running.runNow('queue');
    // Both asks share the one run after the first; the next is due 600 s on.
    await until(() => job.stats.starts >= 2 && job.stats.inFlight === 0, 'the run asked for');
    expect(job.stats.starts).toBe(2);
    expect(job.stats.maxInFlight).toBe(1);
  });
});
