import type { LiveConfig } from '../config/liveConfig.js';
import type { ExporterConfig } from '../config/types.js';
import type { Logger } from '../log/logger.js';
import type { KnownSecrets } from '../secrets/knownSecrets.js';
import { scrubSecrets } from '../secrets/scrubSecrets.js';
import type { Target } from '../snapshot/types.js';
import { diffConfigs, diffTargets, type ListeningSettings } from './configChanges.js';
import { ConfigReloader, type ReloadResult, type ReloadTrigger } from './configReloader.js';
import type { ReloadObserver } from './observer.js';

interface LiveReloadOptions {
  readonly config: LiveConfig;
  /** Reads the configuration again; without it (the demo) there is nothing to reload. */
  readonly load: (() => Promise<ExporterConfig>) | undefined;
  /** The socket the server was started with, which a reload cannot move. */
  readonly listening: ListeningSettings;
  readonly observer: ReloadObserver;
  readonly secrets: KnownSecrets;
  readonly logger: Logger;
  /**
   * The targets polled now, discovered and sharded ones included: a reload reports what it added
   * and removed from them, as the file's targets alone would not say.
   */
  readonly polledTargets?: () => readonly Target[];
}

/** How a SIGHUP or `/-/reload` reloads: load, then update the live configuration (ConfigReloader). */
export function liveReload(
  options: LiveReloadOptions,
): (trigger: ReloadTrigger) => Promise<ReloadResult> {
  const { config, load, listening, observer, secrets, logger } = options;
  const reloader =
    load &&
    new ConfigReloader({
      load,
      apply: (next) => {
        const changes = diffConfigs(config.current, next, listening);
        const before = options.polledTargets?.();
        config.update(next);
        const after = options.polledTargets?.();
        return before === undefined || after === undefined
          ? changes
          : { ...changes, ...diffTargets(before, after) };
      },
      observer,
      logger,
    });
  return async (trigger) => {
    if (!reloader) {
      const message = 'nothing to reload: this exporter has no configuration file';
      logger.warn({ trigger }, message);
      return { applied: false, message };
    }
    const result = await reloader.reload(trigger);
    // The log is scrubbed line by line; a response body is not, so scrub it here.
    return { ...result, message: scrubSecrets(result.message, secrets.values()) };
  };
}
