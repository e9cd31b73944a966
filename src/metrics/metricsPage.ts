import type { Registry } from 'prom-client';
import type { SnapshotStore } from '../snapshot/store.js';
import type { MetricChanges } from './metricChanges.js';
import { contentTypeOf } from './exposition.js';
import { renderLivePart } from './livePart.js';
import type { ExpositionFormat } from './exposition.js';
import { PagePart } from './pagePart.js';
import { SnapshotPartRenderer } from './snapshotPart.js';
import type { SnapshotFamilies } from './snapshotFamilies.js';

// What /metrics sends, built from two parts:
// - the snapshot part: every family computed from the snapshot store alone (merge queues,
//   quarantine lists, target health), as defined in the resource files and selected by the
//   configuration (SnapshotFamilies). It is rendered once per store change (SnapshotStore.viewKey)
//   or reload that changes the families,
//   as text and, on the first request that accepts it, as gzip, and only the targets that changed
//   are rendered again (SnapshotPartRenderer). Renders of one format run one at a time: scrapes
//   that arrive while one runs share the next, which reads the store when it starts, so a burst of
//   polls costs one render rather than one each, and no scrape is answered from before it arrived.
// - the live part: the prom-client registry (Trunk API request counters, reloads, render errors,
//   process and Node.js metrics: what the exporter observes itself), read through its public API. These move between polls, so they are not tied to the
//   store: they are rendered (and gzipped) again when one of them changed (MetricChanges: an API
//   call finished, a reload) or once the last render is older than LIVE_PART_MAX_AGE_MS, for the
//   process metrics. Scrapes within that second share one render: collecting the process
//   metrics (reading /proc, event-loop histograms) costs more than sending the whole cached page,
//   and no Prometheus scrapes one target more than once a second, so every ordinary scrape still
//   sees values taken at most a second earlier.
// A gzip response is the two parts as two gzip members back to back: RFC 1952 allows a file of
// several members, and Go's gzip reader (Prometheus) and Node's zlib read them as one stream.
// A part replaced by a newer one is freed as soon as the last response written from it has been
// sent (PagePart), so each response is released by whoever received it.

/** How old the live part may be when served; see above. */
export const LIVE_PART_MAX_AGE_MS = 1000;

/** A rendered page: the chunks to send in order, their total length, and the headers they need. */
export interface MetricsPageResponse {
  readonly contentType: string;
  /** 'gzip' when the chunks are gzip members; undefined for plain text. */
  readonly contentEncoding: 'gzip' | undefined;
  readonly chunks: readonly Buffer[];
  readonly length: number;
  /**
   * Says that the chunks have been sent, or will not be. Every response render() and current()
   * give holds the parts it is made of until then, so call it once per response received, and
   * only after the last byte has left (a response never released keeps its parts for the GC).
   */
  readonly release: () => void;
}

export interface MetricsPageOptions {
  readonly registry: Registry;
  readonly store: SnapshotStore;
  /** The families computed from the store alone: cached until the store or they change. */
  readonly snapshotMetrics: SnapshotFamilies;
  /** Changes to the metrics set outside the store; without it they are treated like process metrics. */
  readonly metricChanges?: MetricChanges;
  /** Milliseconds on a monotonic clock; injectable for tests. */
  readonly clockMs?: () => number;
}

interface LiveKey {
  readonly changes: number;
  /** Milliseconds (clockMs) when rendered. */
  readonly at: number;
}

/** What a snapshot part shows: a view of the store (SnapshotStore.viewKey) under a generation of the families. */
interface SnapshotKey {
  readonly view: string;
  readonly generation: number;
}

interface CacheEntry<K> {
  readonly key: K;
  readonly part: Promise<PagePart>;
  /** The part once `part` has resolved, for the synchronous path. */
  settled: PagePart | undefined;
}

/** A response built from two given parts, kept while both are still the current ones. */
interface BuiltResponse {
  readonly snapshot: PagePart;
  readonly live: PagePart;
  readonly response: MetricsPageResponse;
}

/** Renders /metrics pages, reusing the snapshot part until the store changes. */
export class MetricsPage {
  readonly #registry: Registry;
  readonly #store: SnapshotStore;
  readonly #snapshotMetrics: SnapshotFamilies;
  readonly #clockMs: () => number;
  readonly #snapshotParts = new Map<ExpositionFormat, CacheEntry<SnapshotKey>>();
  readonly #snapshotRenderers = new Map<ExpositionFormat, SnapshotPartRenderer>();
  /** Keyed by the change count they show and when they were rendered. */
  readonly #liveParts = new Map<ExpositionFormat, CacheEntry<LiveKey>>();
  readonly #metricChanges: MetricChanges | undefined;
  /** The last response per format and encoding: [plain, gzip]. */
  readonly #responses = new Map<
    ExpositionFormat,
    [BuiltResponse | undefined, BuiltResponse | undefined]
  >();
  #renders = 0;

  constructor(options: MetricsPageOptions) {
    this.#registry = options.registry;
    this.#store = options.store;
    this.#snapshotMetrics = options.snapshotMetrics;
    this.#metricChanges = options.metricChanges;
    this.#clockMs = options.clockMs ?? (() => performance.now());
  }

  /** How many times the snapshot part has been rendered (either format); for tests and benchmarks. */
  get snapshotRenders(): number {
    return this.#renders;
  }

  /** The page in `format`, gzip-encoded when `acceptGzip` is set; release() it once sent. */
  async render(
    format: ExpositionFormat,
    { acceptGzip }: { acceptGzip: boolean },
  ): Promise<MetricsPageResponse> {
    // Each part is held from the moment it is handed out, before anything else is awaited: a newer
    // render may retire it in the meantime, and must not free it under this response.
    const held = [
      heldOnArrival(this.#snapshotPart(format)),
      heldOnArrival(this.#livePart(format)),
    ] as const;
    let parts: [PagePart, PagePart];
    try {
      parts = await Promise.all(held);
    } catch (error) {
      for (const part of held) part.then(releasePart, ignore);
      throw error;
    }
    const [snapshot, live] = parts;
    try {
      if (acceptGzip) await Promise.all([snapshot.gzipped(), live.gzipped()]);
    } catch (error) {
      snapshot.release();
      live.release();
      throw error;
    }
    return this.#response(format, acceptGzip, snapshot, live);
  }

  /**
   * The page as render() would give it, if it can be had without waiting: both parts rendered and
   * current, and gzipped when asked. Otherwise undefined, and the caller awaits render(). Scrapes of
   * an unchanged page take this path and allocate nothing here.
   */
  current(format: ExpositionFormat, acceptGzip: boolean): MetricsPageResponse | undefined {
    const snapshot = this.#snapshotParts.get(format);
    const live = this.#liveParts.get(format);
    if (snapshot?.settled === undefined || live?.settled === undefined) return undefined;
    if (!this.#isCurrentSnapshot(snapshot.key)) return undefined;
    if (!this.#isCurrent(live.key)) return undefined;
    if (acceptGzip && (!snapshot.settled.gzippedBytes || !live.settled.gzippedBytes)) {
      return undefined;
    }
    snapshot.settled.hold();
    live.settled.hold();
    return this.#response(format, acceptGzip, snapshot.settled, live.settled);
  }

  /**
   * The response of two rendered parts (gzipped already when `acceptGzip`, held once for the
   * caller), built once per pair.
   */
  #response(
    format: ExpositionFormat,
    acceptGzip: boolean,
    snapshot: PagePart,
    live: PagePart,
  ): MetricsPageResponse {
    let built = this.#responses.get(format);
    if (built === undefined) {
      built = [undefined, undefined];
      this.#responses.set(format, built);
    }
    const index = acceptGzip ? 1 : 0;
    const last = built[index];
    if (last?.snapshot === snapshot && last.live === live) return last.response;
    const chunks = [snapshot, live].map((part) => (acceptGzip ? gzippedBytes(part) : part.text));
    const response: MetricsPageResponse = {
      contentType: contentTypeOf(format),
      contentEncoding: acceptGzip ? 'gzip' : undefined,
      chunks,
      length: chunks.reduce((sum, chunk) => sum + chunk.length, 0),
      release: () => {
        snapshot.release();
        live.release();
      },
    };
    built[index] = { snapshot, live, response };
    return response;
  }

  /** How many targets' samples have been rendered, over both formats; for tests and benchmarks. */
  get targetRenders(): number {
    let count = 0;
    for (const renderer of this.#snapshotRenderers.values()) count += renderer.targetRenders;
    return count;
  }

  #snapshotPart(format: ExpositionFormat): Promise<PagePart> {
    const cached = this.#snapshotParts.get(format);
    if (cached !== undefined && this.#isCurrentSnapshot(cached.key)) return cached.part;
    if (cached !== undefined && cached.settled === undefined) {
      // A render is running: wait for it, then ask again. Every scrape that waited finds the same
      // new key then, so the first starts the next render and the others share it.
      return cached.part.catch(() => undefined).then(() => this.#snapshotPart(format));
    }
    this.#renders++;
    let renderer = this.#snapshotRenderers.get(format);
    if (renderer === undefined) {
      renderer = new SnapshotPartRenderer(format, this.#snapshotMetrics);
      this.#snapshotRenderers.set(format, renderer);
    }
    // The key and the statuses are read in the same tick: no poll can land in between.
    const key: SnapshotKey = {
      view: this.#store.viewKey(),
      generation: this.#snapshotMetrics.generation,
    };
    const part = renderer
      .render(this.#store.statuses())
      .then((text) => new PagePart(text, { ownsMemory: true }));
    return remember(this.#snapshotParts, format, key, part);
  }

  /** Whether a snapshot part shows the store's current view with the current families. */
  #isCurrentSnapshot(key: SnapshotKey): boolean {
    return (
      key.view === this.#store.viewKey() && key.generation === this.#snapshotMetrics.generation
    );
  }

  /** Whether a live part still shows every metric change and is at most a second old. */
  #isCurrent(
    key: LiveKey,
    changes = this.#metricChanges?.count ?? 0,
    now = this.#clockMs(),
  ): boolean {
    return key.changes === changes && now - key.at <= LIVE_PART_MAX_AGE_MS;
  }

  #livePart(format: ExpositionFormat): Promise<PagePart> {
    const now = this.#clockMs();
    const changes = this.#metricChanges?.count ?? 0;
    const cached = this.#liveParts.get(format);
    if (cached !== undefined && this.#isCurrent(cached.key, changes, now)) return cached.part;
    return remember(this.#liveParts, format, { changes, at: now }, this.#renderLivePart(format));
  }

  async #renderLivePart(format: ExpositionFormat): Promise<PagePart> {
    return new PagePart(
      Buffer.from(await renderLivePart(this.#registry, format, this.#snapshotMetrics.renderErrors)),
    );
  }
}

/**
 * Caches a part under `key`, unless its render fails: a failure must not be served to later
 * scrapes. Once it has rendered, the part it replaces is retired.
 */
function remember<K>(
  cache: Map<ExpositionFormat, CacheEntry<K>>,
  format: ExpositionFormat,
  key: K,
  part: Promise<PagePart>,
): Promise<PagePart> {
  const replaced = cache.get(format)?.settled;
  const entry: CacheEntry<K> = { key, part, settled: undefined };
  cache.set(format, entry);
  part.then(
    (rendered) => {
      entry.settled = rendered;
      // Only now: until the new part exists, the snapshot renderer copies from the old one. A
      // renderer that handed back the same buffer has not replaced it.
      if (replaced !== undefined && replaced.text !== rendered.text) replaced.retire();
    },
    () => {
      if (cache.get(format) === entry) cache.delete(format);
    },
  );
  return part;
}

/** The part, held for the caller once it is there. */
function heldOnArrival(part: Promise<PagePart>): Promise<PagePart> {
  return part.then((rendered) => {
    rendered.hold();
    return rendered;
  });
}

function releasePart(part: PagePart): void {
  part.release();
}

function ignore(): void {
  // The failure is the caller's: render() rethrows the first one.
}

function gzippedBytes(part: PagePart): Buffer {
  if (part.gzippedBytes === undefined) throw new Error('metrics page part not gzipped yet');
  return part.gzippedBytes;
}
