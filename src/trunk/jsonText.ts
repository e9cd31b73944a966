// JSON from Trunk (API answers, webhook events) parsed into strings UTF-8 can encode. A JSON string
// may escape half a surrogate pair (`"\uD800"`), which no UTF-8 text holds: the page writes it as
// U+FFFD, so two names differing only there would be two series written with one label set, and
// Prometheus drops the second. Read as U+FFFD here, they are one name wherever they are counted.

/**
 * An escaped surrogate. Decoded text holds none unescaped, so JSON without one (nearly all) has no
 * lone surrogate and is not walked.
 */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** JSON.parse, with every lone surrogate of a string value read as U+FFFD. */
export function parseJson(text: string): unknown {
  const parsed: unknown = JSON.parse(text);
  if (!SURROGATE_ESCAPE.test(text)) return parsed;
  if (typeof parsed === 'string') return parsed.toWellFormed();
  // A walk with a stack of its own, not a recursion: the JSON may nest deeper than the call stack.
  // Faster than a JSON.parse reviver, which makes JSON.parse several times slower.
  const containers: object[] = parsed !== null && typeof parsed === 'object' ? [parsed] : [];
  for (let container = containers.pop(); container !== undefined; container = containers.pop()) {
    const record = container as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const value = record[key];
      if (typeof value === 'string') {
        if (!value.isWellFormed()) record[key] = value.toWellFormed();
      } else if (value !== null && typeof value === 'object') {
        containers.push(value);
      }
    }
  }
  return parsed;
}
