import type { Secret } from './secret.js';

/**
 * Every secret the process has held, for the logger's scrubber: after a reload rotates the token,
 * an error about a call made with the old one must still not print it.
 */
export class KnownSecrets {
  readonly #values = new Set<string>();

  constructor(secrets: readonly Secret[] = []) {
    for (const secret of secrets) this.add(secret);
  }

  /** Remembers a secret (idempotent). */
  add(secret: Secret): void {
    this.#values.add(secret.reveal());
  }

  /** The values to scrub, for createLogger's `secrets`. */
  values(): readonly string[] {
    return [...this.#values];
  }
}
