// `${VAR}` expansion in configuration strings. Done on parsed YAML values, not on the raw text, so a
// variable's value can never change the document's structure.

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** A `${VAR}` that names an unset variable, with where it was found. */
export interface MissingVariable {
  readonly path: readonly (string | number)[];
  readonly name: string;
}

/**
 * Characters that `${VAR}` references may add to the settings in all, as much as the file itself
 * may hold: each reference is a copy of the value, so a small file naming a long variable many
 * times would otherwise expand past any memory, on a reload too.
 */
export const MAX_EXPANDED_CHARACTERS = 4 * 1024 * 1024;

/**
 * Returns a copy of `value` with `${VAR}` replaced in every string, the variables that were unset,
 * and the first reference past MAX_EXPANDED_CHARACTERS (it and every later one are replaced by
 * nothing).
 */
export function expandEnvironment(
  value: unknown,
  env: Readonly<Record<string, string | undefined>>,
): { value: unknown; missing: MissingVariable[]; overLimit?: MissingVariable } {
  const missing: MissingVariable[] = [];
  let overLimit: MissingVariable | undefined;
  let expandedCharacters = 0;
  const walk = (node: unknown, path: (string | number)[]): unknown => {
    if (typeof node === 'string') {
      return node.replace(VARIABLE, (_match, name: string) => {
        const replacement = env[name];
        if (replacement === undefined) {
          missing.push({ path, name });
          return '';
        }
        if (overLimit !== undefined) return '';
        expandedCharacters += replacement.length;
        if (expandedCharacters > MAX_EXPANDED_CHARACTERS) {
          overLimit = { path, name };
          return '';
        }
        return replacement;
      });
    }
    if (Array.isArray(node)) return node.map((item, index) => walk(item, [...path, index]));
    if (node !== null && typeof node === 'object') {
      return Object.fromEntries(
        Object.entries(node).map(([key, inner]) => [key, walk(inner, [...path, key])]),
      );
    }
    return node;
  };
  const expanded = walk(value, []);
  return { value: expanded, missing, ...(overLimit && { overLimit }) };
}
