import { ConfigError, configErrorLines } from '../config/problems.js';
import { FILE_READ_TIMEOUT_MS } from '../config/settingFiles.js';
import type { ExporterConfig } from '../config/types.js';
import type { Logger } from '../log/logger.js';
import { summarizeChanges, type ConfigChanges } from './configChanges.js';
import type { ReloadObserver } from './observer.js';

/** What asked for the reload, for the log line. */
export type ReloadTrigger = 'SIGHUP' | 'HTTP';

/** Whether a reload took effect, and a text for the person who asked (HTTP body, log). */
export interface ReloadResult {
  readonly applied: boolean;
  readonly message: string;
}

interface ReloaderOptions {
  /** Reads and validates the configuration again (the file, the tokenFile, the TLS files). */
  readonly load: () => Promise<ExporterConfig>;
  /** Makes `next` the running configuration and says what changed. */
  readonly apply: (next: ExporterConfig) => ConfigChanges;
  readonly observer: ReloadObserver;
  readonly logger: Logger;
  readonly now?: () => number;
  /** Longest a reload may spend loading before it is rejected and the next one may start. */
  readonly loadTimeoutMs?: number;
}

/**
 * Default for `loadTimeoutMs`: the config file, then the files it names (credentials, webhook
 * secret, TLS; read together), each bounded by FILE_READ_TIMEOUT_MS, plus slack.
 */
export const RELOAD_LOAD_TIMEOUT_MS = 2 * FILE_READ_TIMEOUT_MS + 1000;

/**
 * A reload asked for soon after another waits until this many times as long as that one took has
 * passed since it ended. A reload holds the one thread while it parses the file and rebuilds the
 * polls, which takes long for a large file, and a client may ask again as soon as it is answered
 * (`POST /-/reload` needs no password without basic auth): the wait leaves the thread to scrapes
 * between reloads. A reload whose load timed out held nothing and asks no wait.
 */
export const RELOAD_SPACING_FACTOR = 4;

/**
 * Reloads the configuration on request, one reload at a time: a valid file is applied, an invalid
 * one is rejected with `--check-config`'s messages and the running configuration stays; requests
 * made while one runs share the next. Each reload logs one line and sets the
 * `config_last_reload_*` gauges.
 */
export class ConfigReloader {
  /** The reload running, if any. */
  #running: Promise<ReloadResult> | undefined;
  /**
   * The one reload waiting for it, which every request made meanwhile shares: it reads the file
   * after all of them, and a flood of `POST /-/reload` (or SIGHUP) queues one reload, not one each.
   */
  #waiting: Promise<ReloadResult> | undefined;
  /** When (seconds) the next reload may start: RELOAD_SPACING_FACTOR after the last one. */
  #nextStartAt = Number.NEGATIVE_INFINITY;
  /** Whether the running reload's load timed out (so it held the thread for no time). */
  #timedOut = false;

  constructor(private readonly options: ReloaderOptions) {}

  /**
   * Reloads after any reload already running and the wait after it, joining one already waiting;
   * never rejects.
   */
  reload(trigger: ReloadTrigger): Promise<ReloadResult> {
    if (this.#running === undefined && this.#waiting === undefined && this.#waitMs() === 0) {
      return this.#start(trigger);
    }
    this.#waiting ??= (this.#running ?? Promise.resolve())
      .then(() => new Promise<void>((resolve) => setTimeout(resolve, this.#waitMs())))
      .then(() => {
        this.#waiting = undefined;
        return this.#start(trigger);
      });
    return this.#waiting;
  }

  #now(): number {
    return (this.options.now ?? (() => Date.now() / 1000))();
  }

  #waitMs(): number {
    return Math.max(0, (this.#nextStartAt - this.#now()) * 1000);
  }

  #start(trigger: ReloadTrigger): Promise<ReloadResult> {
    const startedAt = this.#now();
    this.#timedOut = false;
    const run = this.#reload(trigger);
    this.#running = run;
    void run.then(() => {
      const endedAt = this.#now();
      this.#nextStartAt = this.#timedOut
        ? endedAt
        : endedAt + RELOAD_SPACING_FACTOR * (endedAt - startedAt);
      if (this.#running === run) this.#running = undefined;
    });
    return run;
  }

  async #reload(trigger: ReloadTrigger): Promise<ReloadResult> {
    const { logger, observer } = this.options;
    let changes: ConfigChanges;
    try {
      changes = this.options.apply(await this.#loadWithinTimeout());
    } catch (error) {
      const problems =
        error instanceof ConfigError
          ? configErrorLines(error)
          : [error instanceof Error ? error.message : String(error)];
      observer.reloadFailed();
      logger.error(
        { trigger, problems },
        'configuration reload rejected; the running configuration stays',
      );
      return {
        applied: false,
        message: `configuration reload rejected; the running configuration stays:\n${problems.join('\n')}`,
      };
    }
    observer.reloadSucceeded(this.#now());
    const summary = summarizeChanges(changes);
    const fields = { trigger, ...changes };
    if (changes.needRestart.length > 0) logger.warn(fields, `configuration reloaded: ${summary}`);
    else logger.info(fields, `configuration reloaded: ${summary}`);
    return { applied: true, message: `configuration reloaded: ${summary}` };
  }

  /**
   * Reloads run one at a time, so a load that never ends (a hung file system) would hold every
   * later reload: past the timeout this one is rejected, and whatever its load gives later is
   * ignored.
   */
  async #loadWithinTimeout(): Promise<ExporterConfig> {
    const timeoutMs = this.options.loadTimeoutMs ?? RELOAD_LOAD_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        this.#timedOut = true;
        reject(new Error(`loading the configuration took longer than ${timeoutMs / 1000} s`));
      }, timeoutMs);
    });
    const loading = this.options.load();
    loading.catch(() => {}); // a late failure has nobody left to hear it
    try {
      return await Promise.race([loading, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
