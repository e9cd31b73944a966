import { afterEach, describe, expect, it } from 'vitest';
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
  const stats = { starts: 0, inFlight: 0, maxInFlight: 0, aborted: 0 };
  const job: PollJob = {
    key,
    intervalSeconds,
    async run(signal) {
      stats.starts++;
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

describe('PollScheduler', () => {
  it('never overlaps runs of one job, even when a run outlasts the interval', async () => {
    const slow = recordingJob('slow', 0.02, 60);
    newScheduler().setJobs([slow.job]);
    await sleep(400);
    expect(slow.stats.starts).toBeGreaterThanOrEqual(3);
    expect(slow.stats.maxInFlight).toBe(1);
  });

  it('keeps polling a job whose runs throw', async () => {
    const failing = recordingJob('failing', 0.02, 1, true);
    newScheduler().setJobs([failing.job]);
    await sleep(300);
    expect(failing.stats.starts).toBeGreaterThanOrEqual(5);
  });

  it('does not let a hanging job delay another', async () => {
    const hanging = recordingJob('hanging', 0.01, 60_000);
    const healthy = recordingJob('healthy', 0.02, 1);
    newScheduler().setJobs([hanging.job, healthy.job]);
    await sleep(300);
    expect(hanging.stats.starts).toBe(1);
    expect(healthy.stats.starts).toBeGreaterThanOrEqual(5);
  });

  it('waits about one interval between runs', async () => {
    const job = recordingJob('paced', 0.1, 1);
    newScheduler().setJobs([job.job]);
    await sleep(550);
    // Start at ~0, then every 0.1 s ± 10 %: 5 or 6 runs; a scheduler without a wait would run hundreds.
    expect(job.stats.starts).toBeGreaterThanOrEqual(3);
    expect(job.stats.starts).toBeLessThanOrEqual(8);
  });

  it('starts added jobs, stops removed ones and keeps unchanged ones running', async () => {
    const kept = recordingJob('kept', 0.02, 1);
    const removed = recordingJob('removed', 0.02, 1);
    const added = recordingJob('added', 0.02, 1);
    const running = newScheduler();
    running.setJobs([kept.job, removed.job]);
    await sleep(100);
    running.setJobs([kept.job, added.job]);
    const removedStartsAtSwap = removed.stats.starts;
    await sleep(150);
    expect(running.keys().sort()).toEqual(['added', 'kept']);
    expect(removed.stats.starts).toBe(removedStartsAtSwap);
    expect(added.stats.starts).toBeGreaterThanOrEqual(2);
    expect(kept.stats.starts).toBeGreaterThanOrEqual(5);
  });

  it('aborts in-flight runs on stop and resolves once they ended', async () => {
    const hanging = recordingJob('hanging', 1, 60_000);
    const running = newScheduler();
    running.setJobs([hanging.job]);
    await sleep(50);
    await running.stop();
    expect(hanging.stats.aborted).toBe(1);
    expect(hanging.stats.inFlight).toBe(0);
  });

  it('runs a waiting job at once on runNow, and the next one an interval later', async () => {
    const job = recordingJob('queue', 600, 1);
    const running = newScheduler();
    running.setJobs([job.job]);
    await sleep(50);
    expect(job.stats.starts).toBe(1);
    expect(running.runNow('queue')).toBe(true);
    await sleep(50);
    expect(job.stats.starts).toBe(2);
    expect(running.runNow('unknown')).toBe(false);
  });

  it('runs again right after the poll in flight on runNow, never two at once', async () => {
    const job = recordingJob('queue', 600, 100);
    const running = newScheduler();
    running.setJobs([job.job]);
    await sleep(30);
    expect(job.stats.inFlight).toBe(1);
    running.runNow('queue');
    running.runNow('queue');
    await sleep(300);
    expect(job.stats.starts).toBe(2);
    expect(job.stats.maxInFlight).toBe(1);
  });
});
