import type { TargetStatus } from '../snapshot/types.js';
import { targetKey } from '../snapshot/types.js';
import type { ExpositionFormat } from './exposition.js';
import type { PerTargetFamily } from './family.js';
import { familyText } from './familyText.js';
import type { FamilyText } from './familyText.js';
import { PageWriter } from './pageWriter.js';
import type { SnapshotFamilies } from './snapshotFamilies.js';

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

/** A family of the part: how to render it, and for a per-target one, its slot in the pieces. */
type PartFamily =
  | {
      readonly name: string;
      readonly text: FamilyText;
      readonly definition: PerTargetFamily;
      readonly perTargetIndex: number;
    }
  | { readonly name: string; readonly header: string; readonly samples: string };

/** The engine: renders every selected family of `families` in one format, target by target. */
export class SnapshotPartRenderer {
  readonly #format: ExpositionFormat;
  readonly #families: SnapshotFamilies;
  #page: Buffer = Buffer.alloc(0);
  #pieces = new Map<string, TargetPieces>();
  /** The generation of `families` the pieces were rendered for; a reload may change it. */
  #generation = -1;
  /** The per-target families of that generation, prepared for the format. */
  #perTarget: readonly { readonly definition: PerTargetFamily; readonly text: FamilyText }[] = [];
  /** Per-target families left out of the last page: their pieces are not kept. */
  #failed = new Set<number>();
  #targetRenders = 0;

  constructor(format: ExpositionFormat, families: SnapshotFamilies) {
    this.#format = format;
    this.#families = families;
  }

  /** How many targets' samples have been rendered so far; for tests and benchmarks. */
  get targetRenders(): number {
    return this.#targetRenders;
  }

  /**
   * The part for `statuses` (read from the store in the caller's tick), reusing unchanged targets.
   * The page is a view on memory that no other buffer shares. Renders must not overlap.
   */
  async render(statuses: readonly TargetStatus[]): Promise<Buffer> {
    const settings = this.#families.settings;
    if (this.#generation !== this.#families.generation) {
      // First render, or a reload: new HELP texts, maybe other families.
      this.#generation = this.#families.generation;
      this.#perTarget = this.#families.selected.flatMap(({ definition, help }) =>
        definition.scope === 'target'
          ? [{ definition, text: familyText(definition, help, this.#format) }]
          : [],
      );
      this.#pieces = new Map();
      this.#failed = new Set();
    }

    // The families read across targets are small and rendered whole, every time.
    const families: PartFamily[] = [];
    let perTargetIndex = 0;
    for (const { definition, help } of this.#families.selected) {
      if (definition.scope === 'target') {
        const prepared = this.#perTarget[perTargetIndex];
        if (prepared === undefined) throw new Error(`no prepared family for ${definition.name}`);
        families.push({ name: definition.name, ...prepared, perTargetIndex: perTargetIndex++ });
        continue;
      }
      try {
        const text = familyText(definition, help, this.#format);
        families.push({
          name: definition.name,
          header: text.header,
          samples: text.render(definition.samples(statuses, settings)),
        });
      } catch (error) {
        this.#families.renderErrors?.record(definition.name, error);
      }
    }

    this.#page = await this.#write(statuses, families);
    return this.#page;
  }

  /** Writes the new page: every family in order, each target's samples rendered now or copied. */
  async #write(
    statuses: readonly TargetStatus[],
    families: readonly PartFamily[],
  ): Promise<Buffer> {
    const previousPage = this.#page;
    const previouslyFailed = this.#failed;
    this.#failed = new Set();
    const settings = this.#families.settings;
    const targets: TargetLayout[] = statuses.map((status) => {
      const key = targetKey(status.target);
      const kept = this.#pieces.get(key);
      return {
        key,
        status,
        kept: kept?.status === status ? kept.bounds : undefined,
        // Start at (0, 0): right for the families left out below, which have no samples.
        bounds: new Int32Array(this.#perTarget.length * 2),
      };
    });
    this.#targetRenders += targets.filter(({ kept }) => kept === undefined).length;
    const page = new PageWriter(
      previousPage.length + Math.ceil(previousPage.length * GROWTH_ALLOWANCE),
    );
    let piecesRendered = 0;
    for (const family of families) {
      const familyStart = page.length;
      if (!('perTargetIndex' in family)) {
        // A family with no sample at all is left out, header included, as client_golang does.
        if (family.samples !== '') page.write(family.header + family.samples);
        continue;
      }
      page.write(family.text.header);
      const samplesStart = page.length;
      const index = family.perTargetIndex;
      const slot = index * 2;
      const keep = !previouslyFailed.has(index);
      let failed = false;
      for (const { status, kept, bounds } of targets) {
        bounds[slot] = page.length;
        if (kept !== undefined && keep) {
          page.copy(previousPage, kept[slot] ?? 0, kept[slot + 1] ?? 0);
        } else {
          try {
            page.write(family.text.render(family.definition.samples(status, settings)));
          } catch (error) {
            // The whole family is left out of this page, and rendered afresh on the next.
            this.#families.renderErrors?.record(family.name, error);
            failed = true;
            break;
          }
          // A first render (or one after a reload) renders every target: let scrapes of the other
          // endpoints, and the polls, run in between.
          if (++piecesRendered % PIECES_PER_TURN === 0) await nextTurn();
        }
        bounds[slot + 1] = page.length;
      }
      if (failed) this.#failed.add(index);
      if (failed || page.length === samplesStart) {
        page.truncate(familyStart);
        for (const { bounds } of targets) bounds.fill(0, slot, slot + 2);
      }
    }
    this.#pieces = new Map(targets.map(({ key, status, bounds }) => [key, { status, bounds }]));
    return page.finish();
  }
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
