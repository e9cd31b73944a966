import type { ExporterConfig } from '../config/types.js';
import type { TrunkClient } from '../trunk/client.js';

type TrunkSettings = ExporterConfig['trunk'];

/**
 * The Trunk client the poll jobs use, replaceable on reload (new token, URL or limits). A replaced
 * client finishes the calls it has in flight, so a reload fails no poll, then closes.
 */
export class TrunkClientSlot {
  #current: TrunkClient;
  readonly #retiring = new Set<TrunkClient>();

  constructor(
    private readonly build: (settings: TrunkSettings) => TrunkClient,
    settings: TrunkSettings,
  ) {
    this.#current = build(settings);
  }

  /** The client new polls should use. */
  get current(): TrunkClient {
    return this.#current;
  }

  /** Builds a client for `settings`; the previous one retires in the background. */
  replace(settings: TrunkSettings): void {
    const previous = this.#current;
    this.#current = this.build(settings);
    this.#retiring.add(previous);
    void previous
      .retire()
      .catch(() => undefined)
      .finally(() => this.#retiring.delete(previous));
  }

  /** Closes every client, retiring ones included: their calls in flight are aborted. */
  async close(): Promise<void> {
    await Promise.all([this.#current, ...this.#retiring].map((client) => client.close()));
  }
}
