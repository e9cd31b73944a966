// JSON from Trunk (API answers, webhook events) parsed into strings UTF-8 can encode. A JSON string
// may escape half a surrogate pair (`"\uD800"`), which no UTF-8 text holds: the page writes it as
// U+FFFD, so two names differing only there would be two series written with one label set, and
// Prometheus drops the second. Read as U+FFFD here, they are one name wherever they are counted.

/** An escaped high surrogate without a low one after it, or a low one without a high one before. */
const LONE_SURROGATE_ESCAPE =
  /\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F]/;

/** JSON.parse, with every lone surrogate of a string value read as U+FFFD. */
export function parseJson(text: string): unknown {
  // Nearly every answer has none, and a reviver makes JSON.parse several times slower.
  if (!LONE_SURROGATE_ESCAPE.test(text)) return JSON.parse(text);
  return JSON.parse(text, (_key, value: unknown) =>
    typeof value === 'string' ? value.toWellFormed() : value,
  );
}
