// `metrics.include` / `metrics.exclude`, as kube-state-metrics' allow and deny lists: families are
// picked by name or `*` glob before anything is rendered, so an excluded family costs nothing.
import { editDistance } from '../config/editDistance.js';
import { globMatches } from '../config/glob.js';
import type { FamilyDefinition } from './family.js';

/** The configured selection; `include` unset keeps every family. */
export interface MetricSelection {
  readonly include?: readonly string[] | undefined;
  readonly exclude?: readonly string[] | undefined;
}

/** A selection entry that names no family, with where it is in the configuration. */
export interface SelectionProblem {
  /** `metrics.exclude[1]`. */
  readonly path: string;
  readonly message: string;
}

/** How many near names an unknown one is told about. */
const NEAR_NAMES = 3;

/** Whether `name` matches one of `globs` (`*` any run of characters, none included). */
function matchesAny(name: string, globs: readonly string[]): boolean {
  return globs.some((glob) => globMatches(glob, name));
}

/**
 * The families the selection keeps, in their order: those `include` matches (all when unset),
 * less those `exclude` matches; the families in `alwaysKept` stay whatever the lists say.
 */
export function selectFamilies<F extends FamilyDefinition>(
  families: readonly F[],
  selection: MetricSelection,
  alwaysKept: ReadonlySet<string>,
): F[] {
  const include = selection.include;
  const exclude = selection.exclude ?? [];
  return families.filter(
    ({ name }) =>
      alwaysKept.has(name) ||
      ((include === undefined || matchesAny(name, include)) && !matchesAny(name, exclude)),
  );
}

/**
 * Every entry of the selection that matches none of `names`, each with the nearest names; and
 * every excluded entry that only matches families that cannot be excluded.
 */
export function selectionProblems(
  names: readonly string[],
  selection: MetricSelection,
  alwaysKept: ReadonlySet<string>,
): SelectionProblem[] {
  return (['include', 'exclude'] as const).flatMap((key) =>
    (selection[key] ?? []).flatMap((entry, index) => {
      const message = selectionEntryProblem(names, key, entry, alwaysKept);
      return message === undefined ? [] : [{ path: `metrics.${key}[${index}]`, message }];
    }),
  );
}

/**
 * What is wrong with one entry of `include` or `exclude`: it matches none of `names` (with the
 * nearest ones), or, excluded, only families that cannot be excluded; undefined when nothing.
 */
export function selectionEntryProblem(
  names: readonly string[],
  list: 'include' | 'exclude',
  entry: string,
  alwaysKept: ReadonlySet<string>,
): string | undefined {
  const matched = names.filter((name) => globMatches(entry, name));
  if (matched.length === 0) {
    const near = nearestNames(entry, names);
    return (
      `"${entry}" matches no metric family` +
      (near.length > 0 ? `; did you mean ${near.map((name) => `"${name}"`).join(', ')}?` : '')
    );
  }
  if (list === 'exclude' && matched.every((name) => alwaysKept.has(name))) {
    return `"${entry}" cannot be excluded: ${matched.join(', ')} always stay on the page`;
  }
  return undefined;
}

/** The names closest to `entry` by edit distance (globs compared without their `*`). */
function nearestNames(entry: string, names: readonly string[]): string[] {
  const bare = entry.replaceAll('*', '');
  const farthest = Math.max(3, Math.floor(bare.length / 3));
  return (
    names
      // The distance is at least the difference in length: a name that far off is not computed,
      // so a long entry costs nothing more than a short one.
      .filter((name) => Math.abs(name.length - bare.length) <= farthest)
      .map((name) => ({ name, distance: editDistance(bare, name) }))
      .sort((a, b) => a.distance - b.distance || (a.name < b.name ? -1 : 1))
      .slice(0, NEAR_NAMES)
      .filter(({ distance }) => distance <= farthest)
      .map(({ name }) => name)
  );
}
