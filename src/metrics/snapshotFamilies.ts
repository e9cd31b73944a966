import type { FamilyDefinition, FamilySettings } from './family.js';
import { SNAPSHOT_FAMILIES, UNSELECTABLE_FAMILIES } from './families.js';
import type { RenderErrors } from './renderErrors.js';
import { selectFamilies, selectionProblems } from './selection.js';
import type { MetricSelection } from './selection.js';

/** A selected family with its HELP text under the current settings. */
export interface SelectedFamily {
  readonly definition: FamilyDefinition;
  readonly help: string;
}

/**
 * The families computed from the snapshot store, as the running configuration selects and
 * describes them: what the engine renders. A reload that changes them bumps `generation`, and the
 * renderers start afresh (new HELP texts, maybe other families).
 */
export class SnapshotFamilies {
  readonly #definitions: readonly FamilyDefinition[];
  readonly renderErrors: RenderErrors | undefined;
  #settings: FamilySettings;
  #selection: MetricSelection;
  #selected: readonly SelectedFamily[] = [];
  #generation = 0;

  constructor(options: {
    readonly settings: FamilySettings;
    readonly selection: MetricSelection;
    readonly renderErrors?: RenderErrors;
    /** Every family there is; tests give their own. */
    readonly definitions?: readonly FamilyDefinition[];
  }) {
    this.#definitions = options.definitions ?? SNAPSHOT_FAMILIES;
    this.renderErrors = options.renderErrors;
    this.#settings = options.settings;
    this.#selection = options.selection;
    this.#selected = this.#select(options.settings, options.selection);
  }

  /** Changes whenever the selected families or their HELP texts may have. */
  get generation(): number {
    return this.#generation;
  }

  get settings(): FamilySettings {
    return this.#settings;
  }

  /** The selected families, in page order. */
  get selected(): readonly SelectedFamily[] {
    return this.#selected;
  }

  /** Applies a reload's settings and selection; a no-op when nothing the families show changed. */
  apply(settings: FamilySettings, selection: MetricSelection): void {
    if (
      JSON.stringify([settings, selection]) === JSON.stringify([this.#settings, this.#selection])
    ) {
      return;
    }
    // Selected first: a selection that names no family throws and leaves everything as it was.
    this.#selected = this.#select(settings, selection);
    this.#settings = settings;
    this.#selection = selection;
  }

  /** The families `selection` keeps with their HELP under `settings`; a new generation. */
  #select(settings: FamilySettings, selection: MetricSelection): readonly SelectedFamily[] {
    const problems = selectionProblems(
      this.#definitions.map(({ name }) => name),
      selection,
      UNSELECTABLE_FAMILIES,
    );
    if (problems.length > 0) {
      throw new Error(problems.map(({ path, message }) => `${path}: ${message}`).join('\n'));
    }
    const selected = selectFamilies(this.#definitions, selection, UNSELECTABLE_FAMILIES).map(
      (definition) => ({ definition, help: definition.help(settings) }),
    );
    this.#generation++;
    return selected;
  }
}
