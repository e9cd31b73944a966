import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import type { Registry } from 'prom-client';
import { renderFamilies, toFamilies } from './exposition.js';
import type { ExpositionFormat } from './exposition.js';
import { storedGzipMember } from './pageBytes.js';
import type { RenderErrors } from './renderErrors.js';

// The end of /metrics: the metrics of the prom-client registry, what the exporter observes itself.
// Its own (API counters, reloads, webhook requests) are small and rendered on every scrape, up to
// a rate that a scrape flood exceeds (EXPORTER_PART_BURST); the process and Node.js metrics are
// rendered again once a second old: collecting them (reading /proc, event-loop histograms) costs
// more than sending the whole cached page, and no Prometheus scrapes one target more than once a
// second. They come first in the registry, so the page keeps its order.

const gzip = promisify(gzipCallback);

/** How old the process metrics may be when served; see above. */
export const LIVE_PART_MAX_AGE_MS = 1000;

/**
 * Fresh renderings of the exporter's own metrics, per variant: a burst this deep, then this many a
 * second. Prometheus and tests never come near it; a scrape flood beyond it gets the latest
 * rendering, so a flood costs polls a bounded share of the event loop rather than all of it.
 */
export const EXPORTER_PART_BURST = 20;
export const EXPORTER_PART_RENDERS_PER_SECOND = 20;

/** prom-client's process and Node.js metrics, whose collection reads /proc and event-loop histograms. */
export function isProcessMetric(name: string): boolean {
  return name.startsWith('process_') || name.startsWith('nodejs_');
}

/**
 * The metrics of the prom-client registry whose names `selects` (what the exporter observes
 * itself), read through its public API. Metric by metric rather than getMetricsAsJSON(), whose one
 * Promise.all fails the whole page when one collect() throws: a failing metric is left out and
 * counted, as a failing family is. The part that ends the page carries OpenMetrics' `# EOF`.
 * `complete` is false when a metric was left out.
 */
export async function renderLivePart(
  registry: Registry,
  format: ExpositionFormat,
  renderErrors: RenderErrors | undefined,
  { selects, endOfPage }: { selects: (name: string) => boolean; endOfPage: boolean },
): Promise<{ readonly text: string; readonly complete: boolean }> {
  const metrics = registry.getMetricsAsArray().flatMap(({ name }) => {
    const metric = registry.getSingleMetric(name);
    return metric === undefined || !selects(name) ? [] : [{ name, metric }];
  });
  let complete = true;
  const collect = async ({ name, metric }: (typeof metrics)[number]) => {
    try {
      return [await metric.get()];
    } catch (error) {
      complete = false;
      renderErrors?.record(name, error);
      return [];
    }
  };
  // The render-error counter is read last, so the page counts its own failures.
  const collected = await Promise.all(
    metrics.map((entry) =>
      entry.name === renderErrors?.name ? Promise.resolve([]) : collect(entry),
    ),
  );
  const countedAt = metrics.findIndex(({ name }) => name === renderErrors?.name);
  const counted = metrics[countedAt];
  if (counted !== undefined) collected[countedAt] = await collect(counted);
  const text = renderFamilies(toFamilies(collected.flat()), format, { endOfPage });
  return { text, complete };
}

interface LivePartsOptions {
  readonly registry: Registry;
  readonly format: ExpositionFormat;
  readonly acceptGzip: boolean;
  /** Where a metric that fails is counted; read at each rendering, as a reload may replace it. */
  readonly renderErrors: () => RenderErrors | undefined;
  /** Milliseconds on a monotonic clock. */
  readonly clockMs: () => number;
}

/** The registry's two parts of one variant of the page (format and encoding), as last rendered. */
export class LiveParts {
  readonly #options: LivePartsOptions;
  /** How the exporter's own metrics are encoded: as they are, or as a stored gzip member. */
  readonly #encodeOwn: (text: string) => Buffer;
  /** The process metrics, encoded, and when (clockMs) they were rendered. */
  #process: { readonly at: number; readonly bytes: Promise<Buffer> } | undefined;
  /** The exporter's own metrics as last rendered, encoded, if the rendering was complete. */
  #exporterPart: Buffer | undefined;
  /** Fresh renderings of the exporter's own metrics still allowed now, and when that was counted. */
  #exporterTokens = EXPORTER_PART_BURST;
  #exporterTokensAtMs: number;

  constructor(options: LivePartsOptions) {
    this.#options = options;
    this.#encodeOwn = options.acceptGzip ? storedGzipMember : (text) => Buffer.from(text);
    this.#exporterTokensAtMs = options.clockMs();
  }

  /** The exporter's own metrics, rendered afresh unless this variant's renderings ran out. */
  async exporterBytes(): Promise<Buffer> {
    const now = this.#options.clockMs();
    this.#exporterTokens = Math.min(
      EXPORTER_PART_BURST,
      this.#exporterTokens +
        ((now - this.#exporterTokensAtMs) / 1000) * EXPORTER_PART_RENDERS_PER_SECOND,
    );
    this.#exporterTokensAtMs = now;
    if (this.#exporterTokens < 1 && this.#exporterPart !== undefined) return this.#exporterPart;
    this.#exporterTokens = Math.max(0, this.#exporterTokens - 1);
    const { registry, format, renderErrors } = this.#options;
    const { text, complete } = await renderLivePart(registry, format, renderErrors(), {
      selects: (name) => !isProcessMetric(name),
      endOfPage: true,
    });
    const bytes = this.#encodeOwn(text);
    // A metric left out is tried again on the next scrape, as a family is.
    this.#exporterPart = complete ? bytes : undefined;
    return bytes;
  }

  /** The process metrics, rendered again when the last rendering is older than a second. */
  processBytes(): Promise<Buffer> {
    const { registry, format, renderErrors, acceptGzip, clockMs } = this.#options;
    const now = clockMs();
    if (this.#process !== undefined && now - this.#process.at <= LIVE_PART_MAX_AGE_MS) {
      return this.#process.bytes;
    }
    const rendered = renderLivePart(registry, format, renderErrors(), {
      selects: isProcessMetric,
      endOfPage: false,
    });
    const bytes = rendered.then(({ text }) =>
      acceptGzip && text !== '' ? gzip(text) : Buffer.from(text),
    );
    const live = { at: now, bytes };
    this.#process = live;
    // A metric left out is tried again on the next scrape, as a family is.
    const forget = (): void => {
      if (this.#process === live) this.#process = undefined;
    };
    rendered.then(({ complete }) => {
      if (!complete) forget();
    }, forget);
    bytes.catch(forget);
    return bytes;
  }
}
