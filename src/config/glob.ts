/**
 * A matcher of `glob`, where `*` stands for any run of characters (line breaks too) and every other
 * character for itself. Without a regular expression (`^.*.*.*…x$`, from a run of `*` in a setting,
 * backtracks exponentially in V8): the text must start with what comes before the first `*` and end
 * with what follows the last, and hold each part between them in order, each found at its first
 * place after the one before, since a later place leaves less room and never more.
 */
export function globMatcher(glob: string): (text: string) => boolean {
  const parts = glob.split('*');
  const head = parts[0] ?? '';
  if (parts.length === 1) return (text) => text === head;
  const tail = parts[parts.length - 1] ?? '';
  const middle = parts.slice(1, -1).filter((part) => part !== '');
  return (text) => {
    if (text.length < head.length + tail.length) return false;
    if (!text.startsWith(head) || !text.endsWith(tail)) return false;
    const end = text.length - tail.length;
    let from = head.length;
    for (const part of middle) {
      const at = text.indexOf(part, from);
      if (at < 0 || at + part.length > end) return false;
      from = at + part.length;
    }
    return true;
  };
}

/** Whether `text` matches `glob` (globMatcher). */
export function globMatches(glob: string, text: string): boolean {
  return globMatcher(glob)(text);
}

/**
 * Whether a text matches any of `globs`, both compared as `key` gives them: the globs without `*`
 * (a list of names) by one lookup, the others one by one: a list of thousands of names is matched
 * against every queue of the organization, and compared name by name that is their product.
 */
export function globListMatcher(
  globs: readonly string[],
  key: (text: string) => string = (text) => text,
): (text: string) => boolean {
  const names = new Set<string>();
  const patterns: ((text: string) => boolean)[] = [];
  for (const glob of globs) {
    if (glob.includes('*')) patterns.push(globMatcher(key(glob)));
    else names.add(key(glob));
  }
  return (text) => {
    const keyed = key(text);
    return names.has(keyed) || patterns.some((matches) => matches(keyed));
  };
}
