import type { Registry } from 'prom-client';
import type { SnapshotStore } from '../snapshot/store.js';
import type { TargetStatus } from '../snapshot/types.js';
import { contentTypeOf } from './exposition.js';
import type { ExpositionFormat } from './exposition.js';
import { LiveParts } from './livePart.js';
import { gzipMember, joinBlocks, prepareFamilies, renderTarget, writePage } from './pageBytes.js';
import type {
  AcrossTargetsBytes,
  PreparedFamily,
  TargetBlock,
  TargetBytes,
  WrittenPage,
} from './pageBytes.js';
import type { SnapshotFamilies } from './snapshotFamilies.js';

// What /metrics sends, kept the way kube-state-metrics keeps its page: when the store changes a
// target, that target's samples of every per-target family are rendered into bytes (the store
// pushes the change); a scrape writes each family's header followed by every target's bytes of
// it, since the exposition formats want a family's samples together, joined in blocks of
// consecutive targets that a scrape joins again only where a target changed (pageBytes.ts). The
// families computed across targets are small, rendered again when any target changed and encoded
// again when their text did. The registry's metrics end the page (livePart.ts).
// Bytes are kept per variant (format and encoding) that has been asked for.

/** Targets rendered between two turns of the event loop when a variant is rendered whole. */
const TARGETS_PER_TURN = 50;

/** A variant nobody has asked for in this long is dropped rather than rendered on every change. */
export const IDLE_VARIANT_MS = 10 * 60_000;

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
  /** The families computed from the store alone, as the configuration selects them. */
  readonly snapshotMetrics: SnapshotFamilies;
  /** Milliseconds on a monotonic clock; injectable for tests. */
  readonly clockMs?: () => number;
}

/** The page in one format and encoding. */
interface Variant {
  readonly format: ExpositionFormat;
  readonly encode: (text: string) => Buffer;
  /** The generation of the families it is rendered for; a reload may change them. */
  generation: number;
  families: readonly PreparedFamily[];
  /**
   * Each status's bytes. Keyed by the status object, which the store replaces on every change of
   * its target: a target's old bytes go with its old status, a removed target's with its last.
   */
  targets: WeakMap<TargetStatus, TargetBytes>;
  /** The targets' bytes joined in blocks, as the last page was written from them. */
  blocks: readonly TargetBlock[];
  acrossTargets: AcrossTargetsBytes;
  /**
   * The snapshot families as last written, the targets' bytes they were written from, and the
   * store's view they show.
   */
  written:
    | {
        readonly viewKey: string;
        readonly from: readonly TargetBytes[];
        readonly page: WrittenPage;
      }
    | undefined;
  /** The registry's metrics, which end the page. */
  readonly live: LiveParts;
  lastAskedMs: number;
}

/** Renders /metrics pages from the bytes each target's last change left. */
export class MetricsPage {
  readonly #registry: Registry;
  readonly #store: SnapshotStore;
  readonly #families: SnapshotFamilies;
  readonly #clockMs: () => number;
  readonly #variants = new Map<string, Variant>();
  #targetRenders = 0;

  constructor(options: MetricsPageOptions) {
    this.#registry = options.registry;
    this.#store = options.store;
    this.#families = options.snapshotMetrics;
    this.#clockMs = options.clockMs ?? (() => performance.now());
    this.#store.subscribe((_key, status) => {
      if (status !== undefined) this.#targetChanged(status);
    });
  }

  /** How many times a target's samples have been rendered, over all variants; for tests and benchmarks. */
  get targetRenders(): number {
    return this.#targetRenders;
  }

  /** The page in `format`, gzip-encoded when `acceptGzip` is set. */
  async render(
    format: ExpositionFormat,
    { acceptGzip }: { acceptGzip: boolean },
  ): Promise<MetricsPageResponse> {
    const variant = this.#variant(format, acceptGzip);
    const snapshot = await this.#snapshotPage(variant);
    // After the snapshot families: the render-error counter then counts their failures.
    const process = await variant.live.processBytes();
    const exporter = await variant.live.exporterBytes();
    return {
      contentType: contentTypeOf(format),
      contentEncoding: acceptGzip ? 'gzip' : undefined,
      chunks: [...snapshot.chunks, process, exporter],
      length: snapshot.length + process.length + exporter.length,
    };
  }

  #variant(format: ExpositionFormat, acceptGzip: boolean): Variant {
    const name = `${format}${acceptGzip ? '+gzip' : ''}`;
    let variant = this.#variants.get(name);
    if (variant === undefined) {
      variant = {
        format,
        encode: acceptGzip ? gzipMember : (text) => Buffer.from(text),
        generation: -1,
        families: [],
        targets: new WeakMap(),
        blocks: [],
        acrossTargets: new Map(),
        written: undefined,
        live: new LiveParts({
          registry: this.#registry,
          format,
          acceptGzip,
          renderErrors: () => this.#families.renderErrors,
          clockMs: this.#clockMs,
        }),
        lastAskedMs: 0,
      };
      this.#variants.set(name, variant);
    }
    variant.lastAskedMs = this.#clockMs();
    return variant;
  }

  /** Renders the changed target in every variant in use, so the next scrape finds it ready. */
  #targetChanged(status: TargetStatus): void {
    const now = this.#clockMs();
    for (const [name, variant] of this.#variants) {
      if (now - variant.lastAskedMs > IDLE_VARIANT_MS) this.#variants.delete(name);
      else if (variant.generation === this.#families.generation) {
        variant.targets.set(status, this.#renderTarget(variant.families, status));
      }
    }
  }

  /**
   * The snapshot families' bytes, family by family. Targets whose bytes are missing or out of
   * date (first scrape of the variant, a reload, a snapshot that turned stale with time, a family
   * that failed) are rendered first.
   */
  async #snapshotPage(variant: Variant): Promise<WrittenPage> {
    if (variant.generation !== this.#families.generation) this.#prepare(variant);
    const generation = variant.generation;
    // Read in one tick with the statuses: no write can come in between.
    const viewKey = this.#store.viewKey();
    if (variant.written?.viewKey === viewKey) return sentAgain(variant, variant.written);
    const statuses = this.#store.statuses();
    const current: TargetBytes[] = [];
    let rendered = 0;
    for (const status of statuses) {
      let target = variant.targets.get(status);
      if (target === undefined || target.failed.size > 0) {
        target = this.#renderTarget(variant.families, status);
        variant.targets.set(status, target);
        // A whole variant is many targets: let polls and other requests run in between.
        if (++rendered % TARGETS_PER_TURN === 0) await nextTurn();
        if (variant.generation !== generation || this.#families.generation !== generation) {
          return this.#snapshotPage(variant);
        }
      }
      current.push(target);
    }
    const written = variant.written;
    if (written !== undefined && sameItems(written.from, current)) {
      return sentAgain(variant, { ...written, viewKey });
    }
    variant.blocks = joinBlocks(variant.blocks, current);
    const page = writePage(
      variant.families,
      statuses,
      variant.blocks,
      variant.acrossTargets,
      this.#families,
    );
    // Written again on the next scrape while a family fails, so that it is tried again.
    variant.written = page.complete ? { viewKey, from: current, page } : undefined;
    return page;
  }

  /** Prepares the current generation of the families: headers, and no target rendered yet. */
  #prepare(variant: Variant): void {
    variant.families = prepareFamilies(this.#families.selected, variant.format, variant.encode);
    variant.generation = this.#families.generation;
    variant.targets = new WeakMap();
    variant.blocks = [];
    variant.acrossTargets = new Map();
    variant.written = undefined;
  }

  #renderTarget(families: readonly PreparedFamily[], status: TargetStatus): TargetBytes {
    this.#targetRenders++;
    return renderTarget(families, status, this.#families.settings);
  }
}

/**
 * The written page for a scrape that finds it unchanged, joined into one buffer the first time:
 * a page sent once (Prometheus every 15 s, with polls changing it in between) costs no copy of
 * its own, and a page sent again and again (a quiet organization, a scrape flood) costs one copy
 * and is then sent as one buffer, which Node.js writes faster than its thousand chunks.
 */
function sentAgain(variant: Variant, written: NonNullable<Variant['written']>): WrittenPage {
  const { page } = written;
  const joined =
    page.chunks.length <= 1 ? page : { ...page, chunks: [Buffer.concat(page.chunks, page.length)] };
  variant.written = joined === page ? written : { ...written, page: joined };
  return joined;
}

function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  return a.length === b.length && a.every((item, index) => item === b[index]);
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
