import type { ExporterConfig } from '../config/types.js';
import { TrunkClient, type TrunkClientOptions } from '../trunk/client.js';
import { clientSettingsChanged } from './configChanges.js';

type TrunkSettings = ExporterConfig['trunk'];

/**
 * The Trunk client the poll jobs use, replaceable on reload (new token, URL or limits). A replaced
 * client finishes the calls it has in flight, so a reload fails no poll, then closes.
 */
export class ReplaceableTrunkClient {
  #current: TrunkClient;
  #apiUrl: string;
  readonly #retiring = new Set<TrunkClient>();

  constructor(
    private readonly build: (settings: TrunkSettings) => TrunkClient,
    settings: TrunkSettings,
  ) {
    this.#current = build(settings);
    this.#apiUrl = settings.apiUrl;
  }

  /** The client new polls should use. */
  get current(): TrunkClient {
    return this.#current;
  }

  /**
   * Builds a client for `settings`; the previous one retires in the background. A 429's pause (the
   * organization's, or an endpoint's limited apart) carries over unless the API URL changed: Trunk's
   * limits are per organization and per key, and a new token or new limits do not lift them.
   */
  replace(settings: TrunkSettings): void {
    const previous = this.#current;
    this.#current = this.build(settings);
    if (settings.apiUrl === this.#apiUrl) this.#current.carryPauses(previous.pauses);
    this.#apiUrl = settings.apiUrl;
    this.#retiring.add(previous);
    void previous
      .retire()
      .catch(() => undefined)
      .finally(() => this.#retiring.delete(previous));
  }

  /** The apply step of a reload: rebuilds the client when a setting of `trunk` changed. */
  readonly apply = (next: ExporterConfig, previous: ExporterConfig): void => {
    if (clientSettingsChanged(previous, next)) this.replace(next.trunk);
  };

  /** Closes every client, retiring ones included: their calls in flight are aborted. */
  async close(): Promise<void> {
    await Promise.all([this.#current, ...this.#retiring].map((client) => client.close()));
  }
}

/** What every client a ReplaceableTrunkClient builds shares, whatever the `trunk` settings. */
type SharedClientOptions = Omit<TrunkClientOptions, keyof TrunkSettings>;

/** Builds a client from the `trunk` settings and what every client shares. */
export function trunkClientBuilder(
  shared: SharedClientOptions,
): (settings: TrunkSettings) => TrunkClient {
  return (trunk) =>
    new TrunkClient({
      ...shared,
      apiUrl: trunk.apiUrl,
      token: trunk.token,
      apiKey: trunk.apiKey,
      timeoutSeconds: trunk.timeoutSeconds,
      maxConcurrentRequests: trunk.maxConcurrentRequests,
      maxRequestsPerSecond: trunk.maxRequestsPerSecond,
      maxResponseBytes: trunk.maxResponseBytes,
    });
}
