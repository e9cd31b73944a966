// `${VAR}` expansion in configuration strings. Done on parsed YAML values, not on the raw text, so a
// variable's value can never change the document's structure.

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** A `${VAR}` that names an unset variable, with where it was found. */
export interface MissingVariable {
  readonly path: readonly (string | number)[];
  readonly name: string;
}

/** Returns a copy of `value` with `${VAR}` replaced in every string, and the variables that were unset. */
export function expandEnvironment(
  value: unknown,
  env: Readonly<Record<string, string | undefined>>,
): { value: unknown; missing: MissingVariable[] } {
  const missing: MissingVariable[] = [];
  const walk = (node: unknown, path: (string | number)[]): unknown => {
    if (typeof node === 'string') {
      return node.replace(VARIABLE, (_match, name: string) => {
        const replacement = env[name];
        if (replacement === undefined) {
          missing.push({ path, name });
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
  return { value: walk(value, []), missing };
}
