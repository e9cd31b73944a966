import type { DiscoverySettings, RepositoryTarget } from '../config/types.js';
import type { Logger } from '../log/logger.js';
import type { ReadOptions } from '../poller/readOptions.js';
import type { V2QueueKey } from '../poller/v2/v2QueueDirectory.js';
import { logOrganizationReadFailure } from '../poller/failureHint.js';
import { discoveredRepositories } from './discoveredTargets.js';
import type { DiscoveryObserver } from './observer.js';

interface TargetDiscoveryOptions {
  /**
   * The organization's merge queues (V2QueueDirectory: a list read within its interval is reused);
   * it logs its own failed reads.
   */
  readonly listQueues: (options: ReadOptions) => Promise<readonly V2QueueKey[]>;
  /** The repositories with tests (V2TestDirectory: a list read within its interval is reused). */
  readonly listTestRepositories: (options: ReadOptions) => Promise<readonly string[]>;
  /** Told the discovered repositories after every successful read. */
  readonly onDiscovered: (repositories: readonly RepositoryTarget[]) => void;
  /** Told after every read that ended, whatever its outcome (after onDiscovered). */
  readonly onTried: () => void;
  readonly observer: DiscoveryObserver;
  readonly logger: Logger;
  readonly now?: () => number;
}

/**
 * Reads the organization's merge queues (and, with `discovery.flakyTests`, the repositories its
 * test list names) at start and every `discovery.intervalSeconds`, and hands the matching ones on
 * as repositories to poll. A read that fails keeps the last list: the queues found stay polled (and
 * their data on the page) until a read says they are gone. A repository found through its tests
 * stays for the life of the process: its quarantine list falling to 0 tests is news, not an end.
 */
export class TargetDiscovery {
  #settings: DiscoverySettings | undefined;
  /** Counts the changes of the settings: a read made under older ones is not used. */
  #settingsChanges = 0;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  readonly #stopping = new AbortController();
  /** The queues of the last successful read; undefined before it. */
  #queues: readonly V2QueueKey[] | undefined;
  /** Every repository a read of the test list named, in the order first seen. */
  readonly #testRepositories = new Set<string>();

  constructor(private readonly options: TargetDiscoveryOptions) {}

  /** Follows the configuration: starts, stops or re-times the reads (a change reads at once). */
  configure(settings: DiscoverySettings | undefined): void {
    const previous = this.#settings;
    this.#settings = settings?.enabled === true ? settings : undefined;
    // A reload parses the file again: the same settings in a new object change nothing.
    const changed = JSON.stringify(previous) !== JSON.stringify(this.#settings);
    if (changed) this.#settingsChanges += 1;
    if (this.#settings === undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
      if (previous !== undefined) this.options.onDiscovered([]);
      return;
    }
    if (changed) this.#schedule(0);
  }

  /** Reads again at once when on (new credentials may answer what the old ones could not). */
  readNow(): void {
    if (this.#settings !== undefined) this.#schedule(0);
  }

  /** Stops reading; a read in flight is aborted. */
  async stop(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#settings = undefined;
    this.#stopping.abort();
    await this.#running;
  }

  #schedule(seconds: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#running = this.#discover().finally(() => {
        this.#running = undefined;
        const settings = this.#settings;
        if (settings !== undefined) this.#schedule(settings.intervalSeconds);
      });
    }, seconds * 1000);
  }

  async #discover(): Promise<void> {
    const settings = this.#settings;
    if (settings === undefined) return;
    const settingsChanges = this.#settingsChanges;
    const now = this.options.now ?? (() => Date.now() / 1000);
    const options = {
      signal: this.#stopping.signal,
      deadlineMs: Date.now() + settings.intervalSeconds * 1000,
    };
    const stale = () => this.#stopping.signal.aborted || this.#settingsChanges !== settingsChanges;
    const queuesRead = this.options.listQueues(options);
    let testsSettled = !settings.flakyTests;
    const testsRead = settings.flakyTests
      ? this.options.listTestRepositories(options).finally(() => {
          testsSettled = true;
        })
      : Promise.resolve([]);
    // The queues become targets once they are read: an organization's test lists (thousands of
    // pages, a lookup per new repository) may take far longer, and their polls need not wait.
    queuesRead.then(
      (value) => {
        if (testsSettled || stale()) return;
        this.#queues = value;
        const early = discoveredRepositories(value, [...this.#testRepositories], settings);
        this.options.onDiscovered(early.repositories);
      },
      () => undefined,
    );
    const [queues, testRepositories] = await Promise.allSettled([queuesRead, testsRead]);
    if (stale()) return;
    // A failed read of the queues was logged by the read itself (listQueues), once.
    if (queues.status === 'fulfilled') this.#queues = queues.value;
    /** Repositories with tests this read named that are not held: targets left out too. */
    const notHeld = new Set<string>();
    if (testRepositories.status === 'fulfilled') {
      // Bounded as the targets are: a list naming new repositories at every read grows no further.
      for (const repo of testRepositories.value) {
        if (this.#testRepositories.has(repo)) continue;
        if (this.#testRepositories.size < settings.maxTargets) this.#testRepositories.add(repo);
        else notHeld.add(repo);
      }
    } else {
      const error: unknown = testRepositories.reason;
      logOrganizationReadFailure(
        this.options.logger,
        `discovery could not read the organization's test lists, keeping the repositories with tests found so far: ${error instanceof Error ? error.message : String(error)}`,
        error,
      );
    }
    if (queues.status === 'fulfilled' && testRepositories.status === 'fulfilled') {
      this.options.observer.discoverySucceeded(now());
    }
    if (queues.status === 'fulfilled' || testRepositories.status === 'fulfilled') {
      const discovered = discoveredRepositories(
        this.#queues ?? [],
        [...this.#testRepositories],
        settings,
      );
      const { repositories } = discovered;
      const leftOut = discovered.leftOut + notHeld.size;
      if (leftOut > 0) {
        this.options.logger.warn(
          { leftOut, maxTargets: settings.maxTargets },
          `discovery found ${String(leftOut)} targets more than discovery.maxTargets ` +
            `(${String(settings.maxTargets)}): left out, the first by repository and branch kept`,
        );
      }
      this.options.onDiscovered(repositories);
    }
    this.options.onTried();
  }
}
