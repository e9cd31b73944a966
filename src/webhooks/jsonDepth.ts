/** Deepest nesting of arrays and objects a webhook body may have; Trunk's events nest 4 deep. */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;

/**
 * Whether `body` nests arrays and objects deeper than `maxDepth`, by one pass over its bytes that
 * skips strings: JSON.parse of a body nested hundreds of thousands deep blocks the event loop for
 * a tenth of a second or more, and this scan costs a fraction of that. Multi-byte UTF-8 never
 * contains these ASCII bytes, so the bytes can be scanned without decoding.
 */
export function nestsDeeperThan(body: Uint8Array, maxDepth = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < body.length; index++) {
    const byte = body[index];
    if (inString) {
      if (byte === BACKSLASH) index++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_BRACKET || byte === OPEN_BRACE) {
      if (++depth > maxDepth) return true;
    } else if (byte === CLOSE_BRACKET || byte === CLOSE_BRACE) {
      depth--;
    }
  }
  return false;
}
