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
import { PageWriter } from './pageWriter.js';
import { StoredHistogram } from './storedHistogram.js';

// The snapshot part of /metrics in one format, rendered the way kube-state-metrics keeps its page:
// each target's samples of each family are rendered on their own and kept, and a page is those
// pieces laid out family by family (so each family stays contiguous under one HELP and TYPE). When
// a poll changes one target, only that target's samples are rendered again; every other target's
// bytes are copied from the previous page. The pieces are kept as offsets into the page itself,
// so the page is the only copy of the text held between renders.
// A render writes the new page in one pass, family by family, each changed target's samples
// written as soon as they are rendered. Rendered target by target and laid out afterwards, a
// render of half of 1,000 targets held 8 MB of fresh text until the end, long enough for V8 to
// move it to the old generation, which only a full collection clears.

/** How many pieces (one target's samples of one family) are rendered between two turns of the event loop. */
const PIECES_PER_TURN = 2_000;

/** Room for the page to grow beyond the previous one before a render must copy what it wrote. */
const GROWTH_ALLOWANCE = 1 / 8;

/** Where one target's samples of each per-target family sit in `page`. */
interface TargetPieces {
  /** The status they were rendered from; a target whose status is another object is rendered again. */
  readonly status: TargetStatus;
  /** [start, end) byte offsets per per-target family, in family order. */
  readonly bounds: Int32Array;
}

/** A target as one render lays it out. */
interface TargetLayout {
  readonly key: string;
  readonly status: TargetStatus;
  /** Where its pieces sit in the previous page, when they can be copied from there. */
  readonly kept: Int32Array | undefined;
  /** Where they sit in the new page. */
  readonly bounds: Int32Array;
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

  /**
   * The part for `statuses` (read from the store in the caller's tick), reusing unchanged targets.
   * The page is a view on memory that no other buffer shares.
   */
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

      this.#page = await this.#write(statuses, families, perTarget, scope);
      return this.#page;
    });
  }

  /** Writes the new page: every family in order, each target's samples rendered now or copied. */
  async #write(
    statuses: readonly TargetStatus[],
    families: readonly PartFamily[],
    perTarget: readonly Metric[],
    scope: (targets: readonly TargetStatus[] | undefined) => void,
  ): Promise<Buffer> {
    const previousPage = this.#page;
    const targets: TargetLayout[] = statuses.map((status) => {
      const key = targetKey(status.target);
      const kept = this.#pieces.get(key);
      return {
        key,
        status,
        kept: kept?.status === status ? kept.bounds : undefined,
        // Start at (0, 0): right for the families left out below, which have no samples.
        bounds: new Int32Array(perTarget.length * 2),
      };
    });
    this.#targetRenders += targets.filter(({ kept }) => kept === undefined).length;
    const page = new PageWriter(
      previousPage.length + Math.ceil(previousPage.length * GROWTH_ALLOWANCE),
    );
    let piecesRendered = 0;
    for (const family of families) {
      const familyStart = page.length;
      page.write(family.header);
      const samplesStart = page.length;
      if ('text' in family) {
        page.write(family.text);
        // A family with no sample at all is left out, header included, as in a whole render.
        if (page.length === samplesStart) page.truncate(familyStart);
        continue;
      }
      const metric = perTarget[family.perTargetIndex];
      const slot = family.perTargetIndex * 2;
      for (const { status, kept, bounds } of targets) {
        bounds[slot] = page.length;
        if (kept !== undefined) {
          page.copy(previousPage, kept[slot] ?? 0, kept[slot + 1] ?? 0);
        } else if (metric !== undefined) {
          scope([status]);
          page.write(
            metric instanceof StoredHistogram
              ? metric.renderSamples(this.#format)
              : renderFamilySamples(await familyOf(metric), this.#format),
          );
          // A first render (or one after a reload) renders every target: let scrapes of the other
          // endpoints, and the polls, run in between.
          if (++piecesRendered % PIECES_PER_TURN === 0) await nextTurn();
        }
        bounds[slot + 1] = page.length;
      }
      if (page.length === samplesStart) {
        page.truncate(familyStart);
        for (const { bounds } of targets) bounds.fill(0, slot, slot + 2);
      }
    }
    this.#pieces = new Map(targets.map(({ key, status, bounds }) => [key, { status, bounds }]));
    return page.finish();
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
