import type { ExporterConfig } from './types.js';

/** A component's apply step: takes `next` on, knowing what it had before (`previous`). */
export type ApplyConfig = (next: ExporterConfig, previous: ExporterConfig) => void;

/**
 * The running configuration and the components that follow it. Each component subscribes its own
 * apply step; a new configuration goes through every step in subscription order and becomes
 * current only when all of them took it, so a step that throws leaves the old one current.
 */
export class LiveConfig {
  #current: ExporterConfig;
  readonly #steps: ApplyConfig[] = [];

  constructor(initial: ExporterConfig) {
    this.#current = initial;
  }

  get current(): ExporterConfig {
    return this.#current;
  }

  /**
   * Applies the current configuration with `apply` at once (as `next` and `previous` both), so a
   * component starts from the same place a reload takes it to, then on every update.
   */
  subscribe(apply: ApplyConfig): void {
    apply(this.#current, this.#current);
    this.#steps.push(apply);
  }

  /** Runs every apply step with `next`, then makes it current; throws what a step threw. */
  update(next: ExporterConfig): void {
    const previous = this.#current;
    for (const apply of this.#steps) apply(next, previous);
    this.#current = next;
  }
}
