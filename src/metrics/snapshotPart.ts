import type { Metric, Registry } from 'prom-client';
import type { TargetStatus } from '../snapshot/types.js';
import { targetKey } from '../snapshot/types.js';
import {
  registeredMetrics,
  renderFamilyHeader,
  renderFamilySamples,
  toFamilies,
} from './exposition.js';
import type { ExpositionFormat, MetricFamily } from './exposition.js';
import type { SnapshotMetrics } from './snapshotView.js';
import { StoredHistogram } from './storedHistogram.js';

// The snapshot part of /metrics in one format, rendered the way kube-state-metrics keeps its page:
// each target's samples of each family are rendered on their own and kept, and a page is those
// pieces laid out family by family (so each family stays contiguous under one HELP and TYPE). When
// a poll changes one target, only that target's samples are rendered again; every other target's
// bytes are copied from the previous page. The pieces are kept as offsets into the page itself,
// so the page is the only copy of the text held between renders.

/** How many targets are rendered between two turns of the event loop, on a full render. */
const TARGETS_PER_TURN = 50;

/** Where one target's samples of each per-target family sit in `page`. */
interface TargetPieces {
  /** The status they were rendered from; a target whose status is another object is rendered again. */
  readonly status: TargetStatus;
  /** [start, end) byte offsets per per-target family, in family order. */
  readonly bounds: Int32Array;
}

/** One target's samples rendered by this render, before they are laid out. */
interface FreshPieces {
  readonly status: TargetStatus;
  readonly texts: readonly string[];
  /** Their lengths in bytes. */
  readonly lengths: readonly number[];
}

/** A family of the part: its header, and either per-target pieces or one text for all targets. */
type PartFamily =
  | { readonly header: string; readonly perTargetIndex: number }
  | { readonly header: string; readonly text: string };

export class SnapshotPartRenderer {
  readonly #registry: Registry;
  readonly #format: ExpositionFormat;
  readonly #snapshotMetrics: SnapshotMetrics;
  #page: Buffer = Buffer.alloc(0);
  #pieces = new Map<string, TargetPieces>();
  /** The per-target metric objects the pieces were rendered by; a reload re-registers them. */
  #perTargetMetrics: readonly Metric[] = [];
  /** Their HELP and TYPE lines, which change only with them. */
  #perTargetHeaders: readonly string[] = [];
  #targetRenders = 0;

  constructor(registry: Registry, format: ExpositionFormat, snapshotMetrics: SnapshotMetrics) {
    this.#registry = registry;
    this.#format = format;
    this.#snapshotMetrics = snapshotMetrics;
  }

  /** How many targets' samples have been rendered so far; for tests and benchmarks. */
  get targetRenders(): number {
    return this.#targetRenders;
  }

  /** The part for `statuses` (read from the store in the caller's tick), reusing unchanged targets. */
  render(statuses: readonly TargetStatus[]): Promise<Buffer> {
    return this.#snapshotMetrics.view.pinned(statuses, async (scope) => {
      const metrics = registeredMetrics(this.#registry, (name) =>
        this.#snapshotMetrics.names.has(name),
      );
      const perTarget = metrics
        .filter(({ name }) => this.#snapshotMetrics.perTarget.has(name))
        .map(({ metric }) => metric);
      if (!sameMetrics(perTarget, this.#perTargetMetrics)) {
        // First render, or a reload re-registered them: new HELP texts, maybe other samples.
        scope([]);
        const headers: string[] = [];
        for (const metric of perTarget) {
          headers.push(renderFamilyHeader(await familyOf(metric), this.#format));
        }
        this.#pieces = new Map();
        this.#perTargetMetrics = perTarget;
        this.#perTargetHeaders = headers;
      }

      // The families read across targets are small and rendered whole, every time.
      scope(undefined);
      const families: PartFamily[] = [];
      for (const { metric } of metrics) {
        const index = perTarget.indexOf(metric);
        if (index >= 0) {
          families.push({ header: this.#perTargetHeaders[index] ?? '', perTargetIndex: index });
          continue;
        }
        const family = await familyOf(metric);
        families.push({
          header: renderFamilyHeader(family, this.#format),
          text: renderFamilySamples(family, this.#format),
        });
      }

      const fresh = new Map<string, FreshPieces>();
      for (const status of statuses) {
        const key = targetKey(status.target);
        if (this.#pieces.get(key)?.status === status) continue;
        scope([status]);
        const texts: string[] = [];
        const lengths: number[] = [];
        for (const metric of perTarget) {
          const text =
            metric instanceof StoredHistogram
              ? metric.renderSamples(this.#format)
              : renderFamilySamples(await familyOf(metric), this.#format);
          texts.push(text);
          // Measured now rather than when the page is laid out: measuring flattens the text (built
          // line by line, it is a tree of small strings) while those pieces are still young. Done
          // at layout, after every target, a render of half of 1,000 targets took twice as long.
          lengths.push(Buffer.byteLength(text));
        }
        fresh.set(key, { status, texts, lengths });
        this.#targetRenders++;
        // A first render (or one after a reload) renders every target: let scrapes of the other
        // endpoints, and the polls, run in between.
        if (fresh.size % TARGETS_PER_TURN === 0) await nextTurn();
      }
      this.#layOut(statuses, families, fresh);
      return this.#page;
    });
  }

  /** Writes the new page: every family in order, each target's samples fresh or copied. */
  #layOut(
    statuses: readonly TargetStatus[],
    families: readonly PartFamily[],
    fresh: ReadonlyMap<string, FreshPieces>,
  ): void {
    // Bounds start at (0, 0): right for the families left out below, which have no samples.
    const targets = statuses.map((status) => ({
      key: targetKey(status.target),
      status,
      bounds: new Int32Array(this.#perTargetMetrics.length * 2),
    }));
    const lengths = families.map((family) =>
      'text' in family
        ? Buffer.byteLength(family.text)
        : targets.reduce(
            (sum, { key }) => sum + this.#pieceLength(key, family.perTargetIndex, fresh),
            0,
          ),
    );
    // A family with no sample at all is left out, header included, as in a whole render.
    const total = families.reduce(
      (sum, family, index) =>
        (lengths[index] ?? 0) > 0
          ? sum + Buffer.byteLength(family.header) + (lengths[index] ?? 0)
          : sum,
      0,
    );
    const page = Buffer.allocUnsafe(total);
    let offset = 0;
    families.forEach((family, index) => {
      if ((lengths[index] ?? 0) === 0) return;
      offset += page.write(family.header, offset);
      if ('text' in family) {
        offset += page.write(family.text, offset);
        return;
      }
      const slot = family.perTargetIndex * 2;
      for (const { key, bounds } of targets) {
        bounds[slot] = offset;
        const renderedNow = fresh.get(key);
        if (renderedNow !== undefined) {
          offset += page.write(renderedNow.texts[family.perTargetIndex] ?? '', offset);
        } else {
          const kept = this.#pieces.get(key)?.bounds;
          offset += this.#page.copy(page, offset, kept?.[slot] ?? 0, kept?.[slot + 1] ?? 0);
        }
        bounds[slot + 1] = offset;
      }
    });
    this.#page = page;
    this.#pieces = new Map(targets.map(({ key, status, bounds }) => [key, { status, bounds }]));
  }

  #pieceLength(key: string, index: number, fresh: ReadonlyMap<string, FreshPieces>): number {
    const renderedNow = fresh.get(key);
    if (renderedNow !== undefined) return renderedNow.lengths[index] ?? 0;
    const kept = this.#pieces.get(key)?.bounds;
    return kept === undefined ? 0 : (kept[index * 2 + 1] ?? 0) - (kept[index * 2] ?? 0);
  }
}

async function familyOf(metric: Metric): Promise<MetricFamily> {
  const [family] = toFamilies([await metric.get()]);
  if (family === undefined) throw new Error('prom-client returned no family');
  return family;
}

function sameMetrics(a: readonly Metric[], b: readonly Metric[]): boolean {
  return a.length === b.length && a.every((metric, index) => metric === b[index]);
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
