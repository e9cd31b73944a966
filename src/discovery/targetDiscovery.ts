import type { DiscoverySettings, RepositoryTarget } from '../config/types.js';
import type { Logger } from '../log/logger.js';
import type { ReadOptions } from '../poller/trunkReader.js';
import type { V2QueueKey } from '../poller/v2QueueDirectory.js';
import { discoveredRepositories } from './discoveredTargets.js';
import type { DiscoveryObserver } from './observer.js';

interface TargetDiscoveryOptions {
  /** The organization's merge queues (V2QueueDirectory: a list read within its interval is reused). */
  readonly listQueues: (options: ReadOptions) => Promise<readonly V2QueueKey[]>;
  /** Told the discovered repositories after every successful read. */
  readonly onDiscovered: (repositories: readonly RepositoryTarget[]) => void;
  readonly observer: DiscoveryObserver;
  readonly logger: Logger;
  readonly now?: () => number;
}

/**
 * Reads the organization's merge queues at start and every `discovery.intervalSeconds`, and hands
 * the matching ones on as repositories to poll. A read that fails keeps the last list: the queues
 * found stay polled (and their data on the page) until a read says they are gone.
 */
export class TargetDiscovery {
  #settings: DiscoverySettings | undefined;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  readonly #stopping = new AbortController();

  constructor(private readonly options: TargetDiscoveryOptions) {}

  /** Follows the configuration: starts, stops or re-times the reads (a change reads at once). */
  configure(settings: DiscoverySettings | undefined): void {
    const previous = this.#settings;
    this.#settings = settings?.enabled === true ? settings : undefined;
    if (this.#settings === undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
      if (previous !== undefined) this.options.onDiscovered([]);
      return;
    }
    if (JSON.stringify(previous) !== JSON.stringify(this.#settings)) this.#schedule(0);
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
    const now = this.options.now ?? (() => Date.now() / 1000);
    try {
      const queues = await this.options.listQueues({
        signal: this.#stopping.signal,
        deadlineMs: Date.now() + settings.intervalSeconds * 1000,
      });
      if (this.#settings !== settings) return;
      const repositories = discoveredRepositories(queues, settings);
      this.options.observer.discoverySucceeded(now());
      this.options.onDiscovered(repositories);
    } catch (error) {
      if (this.#stopping.signal.aborted) return;
      this.options.logger.warn(
        { err: error },
        `discovery failed, keeping the last list of merge queues: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
}
