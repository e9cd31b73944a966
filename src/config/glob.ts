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
