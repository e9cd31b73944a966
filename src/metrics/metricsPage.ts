import { promisify } from 'node:util';
import { gzip as gzipCallback, gzipSync } from 'node:zlib';
import type { Registry } from 'prom-client';
import type { SnapshotStore } from '../snapshot/store.js';
import { collectFamilies, contentTypeOf, renderFamilies } from './exposition.js';
import type { ExpositionFormat } from './exposition.js';

// What /metrics sends, built from two parts:
// - the snapshot part: every family computed from the snapshot store alone (merge queues,
//   quarantine lists, target health). It is rendered once per store change (SnapshotStore.viewKey),
//   as text and, on the first request that accepts it, as gzip; concurrent scrapes share one render.
// - the live part: everything else (Trunk API request counters, process and Node.js metrics, and
//   any metric set outside the store). These move between polls, so they are rendered, and
//   gzipped, on every scrape. They are a few dozen series, a small fraction of a large page.
// A gzip response is the two parts as two gzip members back to back: RFC 1952 allows a file of
// several members, and Go's gzip reader (Prometheus) and Node's zlib read them as one stream.

const gzip = promisify(gzipCallback);

/** A rendered page: the chunks to send in order, their total length, and the headers they need. */
export interface MetricsPageResponse {
  readonly contentType: string;
  /** 'gzip' when the chunks are gzip members; undefined for plain text. */
  readonly contentEncoding: 'gzip' | undefined;
  readonly chunks: readonly Buffer[];
  readonly length: number;
}

export interface MetricsPageOptions {
  readonly registry: Registry;
  readonly store: SnapshotStore;
  /**
   * Names of the metrics whose values come from the store and nothing else: they may be cached
   * until the store changes. Anything not listed is rendered on every scrape.
   */
  readonly snapshotMetrics: ReadonlySet<string>;
}

interface SnapshotPart {
  readonly text: Buffer;
  gzipped: Promise<Buffer> | undefined;
}

interface CacheEntry {
  readonly key: string;
  readonly part: Promise<SnapshotPart>;
}

/** Renders /metrics pages, reusing the snapshot part until the store changes. */
export class MetricsPage {
  readonly #registry: Registry;
  readonly #store: SnapshotStore;
  readonly #snapshotMetrics: ReadonlySet<string>;
  readonly #cache = new Map<ExpositionFormat, CacheEntry>();
  #renders = 0;

  constructor(options: MetricsPageOptions) {
    this.#registry = options.registry;
    this.#store = options.store;
    this.#snapshotMetrics = options.snapshotMetrics;
  }

  /** How many times the snapshot part has been rendered (either format); for tests and benchmarks. */
  get snapshotRenders(): number {
    return this.#renders;
  }

  /** The page in `format`, gzip-encoded when `acceptGzip` is set. */
  async render(
    format: ExpositionFormat,
    { acceptGzip }: { acceptGzip: boolean },
  ): Promise<MetricsPageResponse> {
    const snapshot = await this.#snapshotPart(format);
    const liveFamilies = await collectFamilies(
      this.#registry,
      (name) => !this.#snapshotMetrics.has(name),
    );
    const live = Buffer.from(renderFamilies(liveFamilies, format, { endOfPage: true }));
    const chunks = acceptGzip
      ? [await (snapshot.gzipped ??= gzip(snapshot.text)), gzipSync(live)]
      : [snapshot.text, live];
    return {
      contentType: contentTypeOf(format),
      contentEncoding: acceptGzip ? 'gzip' : undefined,
      chunks,
      length: chunks.reduce((sum, chunk) => sum + chunk.length, 0),
    };
  }

  #snapshotPart(format: ExpositionFormat): Promise<SnapshotPart> {
    // Read the key and start the collects in the same tick: no poll can land in between.
    const key = this.#store.viewKey();
    const cached = this.#cache.get(format);
    if (cached?.key === key) return cached.part;
    const part = this.#renderSnapshotPart(format);
    this.#cache.set(format, { key, part });
    // A failed render must not be served from the cache to every later scrape.
    part.catch(() => {
      if (this.#cache.get(format)?.part === part) this.#cache.delete(format);
    });
    return part;
  }

  async #renderSnapshotPart(format: ExpositionFormat): Promise<SnapshotPart> {
    this.#renders++;
    const families = await collectFamilies(this.#registry, (name) =>
      this.#snapshotMetrics.has(name),
    );
    return {
      text: Buffer.from(renderFamilies(families, format, { endOfPage: false })),
      gzipped: undefined,
    };
  }
}
