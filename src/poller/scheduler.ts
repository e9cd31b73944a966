import type { Logger } from '../log/logger.js';

/** Something polled on its own interval. `run` should handle its own errors; the scheduler logs any that escape. */
export interface PollJob {
  /** Identity across reloads: a job with the same key keeps its schedule. */
  readonly key: string;
  readonly intervalSeconds: number;
  run(signal: AbortSignal): Promise<void>;
}

/** Each wait between two polls of a target is its interval ± this share of it (the default). */
export const POLL_JITTER_RATIO = 0.1;

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
  /** A poll is in flight. */
  polling: boolean;
  /** runNow() was called during the poll in flight: the next one starts as soon as it ends. */
  pollAgain: boolean;
  /** Ends the wait for the next poll early; undefined while polling. */
  wake: (() => void) | undefined;
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
    this.jitterRatio = options.jitterRatio ?? POLL_JITTER_RATIO;
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

  /**
   * Polls the job with this key now instead of when it is due (a webhook said its target changed):
   * at once when it is waiting, else as soon as the poll in flight ends, never two at once. The
   * next scheduled poll follows an interval after this one. False for an unknown key.
   */
  runNow(key: string): boolean {
    const entry = this.running.get(key);
    if (entry === undefined) return false;
    if (entry.polling) entry.pollAgain = true;
    else entry.wake?.();
    return true;
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
    const entry: RunningJob = {
      job,
      controller,
      done: Promise.resolve(),
      polling: false,
      pollAgain: false,
      wake: undefined,
    };
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
      if (!(await waitOrWake(entry, delaySeconds, signal))) return;
      entry.polling = true;
      const started = performance.now();
      try {
        await entry.job.run(signal);
      } catch (error) {
        this.options.logger.error(
          { job: entry.job.key, err: error },
          'poll job failed unexpectedly',
        );
      }
      entry.polling = false;
      const pollAgain = entry.pollAgain;
      entry.pollAgain = false;
      const elapsedSeconds = (performance.now() - started) / 1000;
      const jitter = 1 + this.jitterRatio * (2 * this.random() - 1);
      delaySeconds = pollAgain
        ? 0
        : Math.max(0, entry.job.intervalSeconds * jitter - elapsedSeconds);
    }
  }
}

/**
 * Waits `seconds`, or until the entry's wake() is called; resolves false instead of throwing
 * when aborted.
 */
function waitOrWake(entry: RunningJob, seconds: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      entry.wake = undefined;
      resolve(!signal.aborted);
    };
    const timer = setTimeout(done, seconds * 1000);
    signal.addEventListener('abort', done, { once: true });
    entry.wake = done;
    if (signal.aborted) done();
  });
}
