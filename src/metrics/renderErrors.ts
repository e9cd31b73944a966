import { Counter } from 'prom-client';
import type { Registry } from 'prom-client';
import type { Logger } from '../log/logger.js';
import { NAMESPACE, fqName } from './naming.js';

const RENDER_ERRORS = fqName(NAMESPACE, 'exporter', 'render_errors', 'total');

/** How many distinct errors are remembered as logged; beyond it, each is logged again. */
const REMEMBERED_ERRORS = 1_000;

/**
 * What happens when a family throws while rendering: the engine leaves it out of that page, and
 * this counts it and logs it once per distinct error (a failure repeats on every render, and one
 * scrape every few seconds must not become one error line every few seconds).
 */
export class RenderErrors {
  /** The counter's name. */
  readonly name = RENDER_ERRORS;
  readonly #counter: Counter<'family'>;
  readonly #logger: Logger | undefined;
  readonly #logged = new Set<string>();

  constructor(registry: Registry, logger: Logger | undefined) {
    this.#counter = new Counter({
      name: RENDER_ERRORS,
      help: 'Metric families left out of a /metrics page because rendering them failed; each distinct error is logged once.',
      labelNames: ['family'] as const,
      registers: [registry],
    });
    this.#logger = logger;
  }

  /** Records that `family` failed to render with `error`. */
  record(family: string, error: unknown): void {
    this.#counter.inc({ family });
    const message = error instanceof Error ? error.message : String(error);
    const key = `${family}\u0000${message}`;
    if (this.#logged.has(key)) return;
    if (this.#logged.size >= REMEMBERED_ERRORS) this.#logged.clear();
    this.#logged.add(key);
    this.#logger?.error(
      { family, err: error },
      `metric family ${family} failed to render and is left out of the page`,
    );
  }
}
