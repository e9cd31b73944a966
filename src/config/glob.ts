/**
 * Whether `text` matches `glob`, where `*` stands for any run of characters (line breaks too) and
 * every other character for itself. Matched without a regular expression: `^.*.*.*…x$`, from a run
 * of `*` in a setting, backtracks exponentially in V8, and `*a*a*a*…` over a name of many a's
 * polynomially; this greedy walk takes at most glob × text steps.
 */
export function globMatches(glob: string, text: string): boolean {
  let g = 0;
  let t = 0;
  // The last `*` seen and the text position it is retried from: only the latest star needs
  // retrying, since whatever an earlier star could absorb the later one can too.
  let star = -1;
  let retryFrom = 0;
  while (t < text.length) {
    if (g < glob.length && glob[g] === '*') {
      star = g++;
      retryFrom = t;
    } else if (g < glob.length && glob[g] === text[t]) {
      g++;
      t++;
    } else if (star >= 0) {
      g = star + 1;
      t = ++retryFrom;
    } else {
      return false;
    }
  }
  while (g < glob.length && glob[g] === '*') g++;
  return g === glob.length;
}

/**
 * Whether a text matches any of `globs`, both compared as `key` gives them: the globs without `*`
 * (a list of names) by one lookup, the others one by one. Each text compared with every name cost
 * names × texts, 10,000 repositories named over 11,000 queues about 20 s of the one thread.
 */
export function globListMatcher(
  globs: readonly string[],
  key: (text: string) => string = (text) => text,
): (text: string) => boolean {
  const names = new Set<string>();
  const patterns: string[] = [];
  for (const glob of globs) {
    if (glob.includes('*')) patterns.push(key(glob));
    else names.add(key(glob));
  }
  return (text) => {
    const keyed = key(text);
    return names.has(keyed) || patterns.some((pattern) => globMatches(pattern, keyed));
  };
}
