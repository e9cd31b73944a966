import { API_KEY_PREFIX } from './secret.js';

/** What a scrubbed secret, or an altered echo of it, is replaced with. */
const REDACTED = '<redacted>';
/**
 * Shortest piece of an echo that is scrubbed: a prefix of the token (or of one of its encodings)
 * this long or longer is replaced, so an API that cuts the token it echoes leaves nothing usable.
 */
export const MIN_SCRUBBED_ECHO_CHARS = 8;
/**
 * Prefixes every credential of a kind begins with: they are published, and the exporter's own
 * hints name them, so they are scrubbed only with the secret characters that follow them.
 */
const PUBLIC_SECRET_PREFIXES: readonly string[] = [API_KEY_PREFIX];

/**
 * Replaces each secret, and the altered echoes of it an upstream may send back (JSON-escaped,
 * percent-encoded in any of its characters with either case of hex digits, base64 at any
 * alignment, in another letter case, or cut to a prefix of at least MIN_SCRUBBED_ECHO_CHARS
 * characters), with `<redacted>`. A secret that begins with a public prefix (`trunk_v2_`) is
 * scrubbed wherever the prefix is followed by any of its secret characters, and its secret part
 * wherever it appears alone; the prefix alone is left as written.
 */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  // Every form's matches are found in the original text and merged: where two forms overlap (the
  // token inside its own JSON-escaped form), the longer match wins instead of the first.
  const spans: [number, number][] = [];
  for (const secret of secrets) {
    if (secret.length === 0) continue;
    for (const form of echoForms(secret)) findForm(text, form, spans);
  }
  if (spans.length === 0) return text;
  spans.sort((a, b) => a[0] - b[0]);
  let result = '';
  let copied = 0;
  for (const [start, end] of spans) {
    if (end <= copied) continue;
    if (start >= copied) result += text.slice(copied, start) + REDACTED;
    copied = end;
  }
  return result + text.slice(copied);
}

// Derived per secret once: the logger scrubs every line with the same few secrets. Each form is a
// global pattern whose every match is one echo.
const formsBySecret = new Map<string, readonly RegExp[]>();
const MAX_CACHED_SECRETS = 32;

function echoForms(secret: string): readonly RegExp[] {
  const cached = formsBySecret.get(secret);
  if (cached !== undefined) return cached;
  const characters = Array.from(secret);
  const forms: RegExp[] = [];
  const publicPrefix = PUBLIC_SECRET_PREFIXES.find(
    (prefix) => secret.length > prefix.length && secret.startsWith(prefix),
  );
  if (publicPrefix !== undefined) {
    // The prefix with even one secret character after it is scrubbed, in any of its written
    // forms; the secret part's other forms (base64 at every alignment covers the whole key's)
    // are the secret part's own.
    const required = Math.max(MIN_SCRUBBED_ECHO_CHARS, Array.from(publicPrefix).length + 1);
    forms.push(prefixPattern(characters.map(writtenForms), required, 'gi'));
    // A secret part too short to tell from ordinary text (a test key's) is scrubbed only after
    // its prefix: alone it would take every such letter out of every line.
    const secretPart = secret.slice(publicPrefix.length);
    if (Array.from(secretPart).length >= MIN_SCRUBBED_ECHO_CHARS) {
      forms.push(...echoForms(secretPart));
    }
  } else if (characters.length < MIN_SCRUBBED_ECHO_CHARS) {
    // A short secret is scrubbed as written only: its encodings and case variants are too short
    // to tell from ordinary text.
    forms.push(prefixPattern(characters.map(escapeRegExp), characters.length, 'g'));
  } else {
    // One pattern for the secret as written, in any letter case, with any of its characters
    // percent-encoded or JSON-escaped: an echo may encode some characters and not others.
    forms.push(prefixPattern(characters.map(writtenForms), MIN_SCRUBBED_ECHO_CHARS, 'gi'));
    for (const base64 of base64Cores(secret)) {
      for (const core of new Set([base64, base64.replace(/\+/g, '-').replace(/\//g, '_')])) {
        if (core.length < MIN_SCRUBBED_ECHO_CHARS) continue;
        forms.push(prefixPattern(Array.from(core, escapeRegExp), MIN_SCRUBBED_ECHO_CHARS, 'g'));
      }
    }
  }
  if (formsBySecret.size >= MAX_CACHED_SECRETS) formsBySecret.clear();
  formsBySecret.set(secret, forms);
  return forms;
}

/**
 * A pattern matching the first `required` units and then as many of the following ones, in order,
 * as the text has: an echo cut after MIN_SCRUBBED_ECHO_CHARS characters is still an echo.
 */
function prefixPattern(units: readonly string[], required: number, flags: string): RegExp {
  let optionalTail = '';
  for (let index = units.length - 1; index >= required; index--) {
    optionalTail = `(?:${units[index] ?? ''}${optionalTail})?`;
  }
  return new RegExp(units.slice(0, required).join('') + optionalTail, flags);
}

/**
 * The ways one character of a secret may be written in an echo, as a pattern: itself, its UTF-8
 * bytes percent-encoded (hex in either case under the `i` flag), its JSON escape, `+` for a space
 * (form encoding) and `\/` for a slash (JSON may escape it). Longest first, so a `%` of the secret
 * does not take the `%` of an encoded character.
 */
function writtenForms(character: string): string {
  const percentEncoded = Array.from(
    Buffer.from(character, 'utf8'),
    (byte) => `%${byte.toString(16).padStart(2, '0')}`,
  ).join('');
  const forms = new Set([percentEncoded, JSON.stringify(character).slice(1, -1), character]);
  if (character === ' ') forms.add('+');
  if (character === '/') forms.add('\\/');
  const patterns = Array.from(forms, escapeRegExp);
  return patterns.length === 1 ? (patterns[0] ?? '') : `(?:${patterns.join('|')})`;
}

/**
 * The base64 characters that encode the secret alone, for each of the three byte alignments it
 * can have inside a longer encoded string (`Basic base64(user:token)`): the characters mixing in
 * neighbouring bytes differ from echo to echo, the ones in between do not.
 */
function base64Cores(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  return [0, 1, 2].map((offset) => {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const first = Math.ceil((offset * 8) / 6);
    const end = Math.floor(((offset + bytes.length) * 8) / 6);
    return encoded.slice(first, end);
  });
}

/** Adds to `spans` every match of `form` in `text`. */
function findForm(text: string, form: RegExp, spans: [number, number][]): void {
  form.lastIndex = 0;
  for (let match = form.exec(text); match !== null; match = form.exec(text)) {
    spans.push([match.index, match.index + match[0].length]);
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
}
