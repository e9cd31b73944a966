import type { Secret } from './secret.js';

/**
 * Every secret the process has held, for the logger's scrubber: after a reload rotates the token,
 * an error about a call made with the old one must still not print it.
 */
export class KnownSecrets {
  readonly #values = new Set<string>();

  constructor(secrets: readonly (Secret | undefined)[] = []) {
    for (const secret of secrets) this.add(secret);
  }

  /** Remembers a secret (idempotent); an unset one is nothing to remember. */
  add(secret: Secret | undefined): void {
    if (secret !== undefined) this.#values.add(secret.reveal());
  }

  /** The values to scrub, for createLogger's `secrets`. */
  values(): readonly string[] {
    return [...this.#values];
  }
}
