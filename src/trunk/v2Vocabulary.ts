// API v2 spells enum values in camelCase where v1 used snake_case, and renamed two queue modes.
// Every exported label keeps v1's vocabulary, so dashboards and alerts work whichever API fed them.
import { cutLabelText } from './labelText.js';

/** Values v2 renamed rather than respelled: the queue modes. */
const RENAMED_MODES: Readonly<Record<string, string>> = { queue: 'single', graph: 'parallel' };

/**
 * `notReady` → `not_ready`, `bisectionSkipRedundantTests` → `bisection_skip_redundant_tests`. A
 * value is a label value, so one past MAX_LABEL_TEXT_LENGTH is cut first: the second pattern
 * backtracks over a long run of capitals, in time that grows with its square.
 */
export function snakeCase(value: string): string {
  return cutLabelText(value)
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

/** A v2 enum value (state, merge method, optimization mode…) in v1's label vocabulary. */
export function v1Value(value: string): string {
  return snakeCase(value);
}

/** A v2 queue `mode` in v1's vocabulary: `queue` → `single`, `graph` → `parallel`. */
export function v1Mode(mode: string): string {
  return RENAMED_MODES[mode] ?? snakeCase(mode);
}

/** Trunk's documented priority names by value (urgent 0, high 10, medium 100, low 200). */
export const PRIORITY_NAMES: ReadonlyMap<number, string> = new Map([
  [0, 'urgent'],
  [10, 'high'],
  [100, 'medium'],
  [200, 'low'],
]);

/**
 * A queue entry's priority name as its `priorityName` says, `unknown` without one: Trunk's
 * definition says not to infer a name from `priorityValue` ("some entries carry a value the queue
 * never named").
 */
export function priorityNameOf(name: string | null | undefined): string {
  // A name is a label value: one past MAX_LABEL_TEXT_LENGTH is cut.
  return name == null ? 'unknown' : cutLabelText(name);
}
