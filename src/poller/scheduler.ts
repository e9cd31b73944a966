import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../log/logger.js';

/** Something polled on its own interval. `run` should handle its own errors; the scheduler logs any that escape. */
export interface PollJob {
  /** Identity across reloads: a job with the same key keeps its schedule. */
  readonly key: string;
  readonly intervalSeconds: number;
  run(signal: AbortSignal): Promise<void>;
}

interface SchedulerOptions {
  readonly logger: Logger;
  readonly random?: () => number;
  /** Each wait is the interval ± this share of it, so targets do not poll in lockstep. */
  readonly jitterRatio?: number;
  /** First polls are spread over at most this many seconds (or the interval, if shorter). */
  readonly firstPollSpreadSeconds?: number;
}

interface RunningJob {
  job: PollJob;
  readonly controller: AbortController;
  readonly done: Promise<void>;
}

/**
 * Runs each job in its own loop: one poll at a time per job (cycles never overlap), the next one an
 * interval (with jitter) after the previous one started, or at once if it overran. A job that fails
 * or hangs affects only its own loop; request limits are the client's business, not this one's.
 */
export class PollScheduler {
  private readonly running = new Map<string, RunningJob>();
  private readonly random: () => number;
  private readonly jitterRatio: number;
  private readonly firstPollSpreadSeconds: number;

  constructor(private readonly options: SchedulerOptions) {
    this.random = options.random ?? Math.random;
    this.jitterRatio = options.jitterRatio ?? 0.1;
    this.firstPollSpreadSeconds = options.firstPollSpreadSeconds ?? 2;
  }

  /** Makes `jobs` the running set: new keys start, vanished keys stop, kept keys keep their schedule. */
  setJobs(jobs: readonly PollJob[]): void {
    const wanted = new Map(jobs.map((job) => [job.key, job]));
    for (const [key, running] of this.running) {
      const replacement = wanted.get(key);
      if (!replacement || replacement.intervalSeconds !== running.job.intervalSeconds) {
        running.controller.abort();
        this.running.delete(key);
      } else {
        running.job = replacement;
      }
    }
    for (const [key, job] of wanted) {
      if (!this.running.has(key)) this.running.set(key, this.start(job));
    }
  }

  /** Keys of the jobs currently scheduled. */
  keys(): string[] {
    return [...this.running.keys()];
  }

  /** Aborts every job (in-flight polls included) and resolves when all loops have ended. */
  async stop(): Promise<void> {
    const loops = [...this.running.values()];
    this.running.clear();
    for (const running of loops) running.controller.abort();
    await Promise.all(loops.map((running) => running.done));
  }

  private start(job: PollJob): RunningJob {
    const controller = new AbortController();
    const entry: RunningJob = { job, controller, done: Promise.resolve() };
    const firstDelay = this.random() * Math.min(job.intervalSeconds, this.firstPollSpreadSeconds);
    return Object.assign(entry, { done: this.loop(entry, controller.signal, firstDelay) });
  }

  private async loop(
    entry: RunningJob,
    signal: AbortSignal,
    firstDelaySeconds: number,
  ): Promise<void> {
    let delaySeconds = firstDelaySeconds;
    while (!signal.aborted) {
      if (!(await wait(delaySeconds, signal))) return;
      const started = performance.now();
      try {
        await entry.job.run(signal);
      } catch (error) {
        this.options.logger.error(
          { job: entry.job.key, err: error },
          'poll job failed unexpectedly',
        );
      }
      const elapsedSeconds = (performance.now() - started) / 1000;
      const jitter = 1 + this.jitterRatio * (2 * this.random() - 1);
      delaySeconds = Math.max(0, entry.job.intervalSeconds * jitter - elapsedSeconds);
    }
  }
}

/** Waits, resolving false instead of throwing when aborted. */
async function wait(seconds: number, signal: AbortSignal): Promise<boolean> {
  try {
    await sleep(seconds * 1000, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}
