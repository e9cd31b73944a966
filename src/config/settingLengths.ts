// The longest string a setting may hold, checked over the whole file before anything reads it.

/**
 * Longest string a setting may hold: a file path's limit (PATH_MAX), beyond any branch, repository,
 * URL or key. A longer branch went into every series of its queue and every log line naming it, and
 * a longer file path into its "cannot read" message; a file may hold megabytes in one string.
 */
export const MAX_SETTING_CHARACTERS = 4096;

/** The path and length (characterCount) of each string in `value` longer than MAX_SETTING_CHARACTERS, in file order. */
export function overLongStrings(
  value: unknown,
): { readonly path: readonly (string | number)[]; readonly length: number }[] {
  const found: { path: (string | number)[]; length: number }[] = [];
  const walk = (node: unknown, path: (string | number)[]): void => {
    if (typeof node === 'string') {
      // Only a string of more code units than the bound can hold more characters than it.
      if (node.length > MAX_SETTING_CHARACTERS) {
        const length = characterCount(node);
        if (length > MAX_SETTING_CHARACTERS) found.push({ path, length });
      }
    } else if (Array.isArray(node)) {
      node.forEach((item, index) => {
        walk(item, [...path, index]);
      });
    } else if (node !== null && typeof node === 'object') {
      for (const [key, inner] of Object.entries(node)) walk(inner, [...path, key]);
    }
  };
  walk(value, []);
  return found;
}

/**
 * Characters of `text` as Helm's JSON schema counts them (`maxLength`, code points): an emoji
 * outside the Basic Multilingual Plane is one, where `length` counts its two UTF-16 code units.
 */
function characterCount(text: string): number {
  let count = 0;
  for (let index = 0; index < text.length; index += 1) {
    const unit = text.charCodeAt(index);
    const next = text.charCodeAt(index + 1);
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) index += 1;
    count += 1;
  }
  return count;
}
