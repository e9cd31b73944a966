/** What a scrubbed secret, or an altered echo of it, is replaced with. */
const REDACTED = '<redacted>';
/**
 * Shortest piece of an echo that is scrubbed: a prefix of the token (or of one of its encodings)
 * this long or longer is replaced, so an API that cuts the token it echoes leaves nothing usable.
 */
export const MIN_SCRUBBED_ECHO_CHARS = 8;

/**
 * Replaces each secret, and the altered echoes of it an upstream may send back (JSON-escaped,
 * URL-encoded, base64 at any alignment, in another letter case, or cut to a prefix of at least
 * MIN_SCRUBBED_ECHO_CHARS characters), with `<redacted>`.
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

/** One way a secret may be written; `ignoreCase` where a case change still gives it away. */
interface EchoForm {
  readonly text: string;
  readonly ignoreCase: boolean;
  /** Shortest prefix of `text` that is scrubbed; `text.length` for short secrets. */
  readonly minPrefix: number;
  readonly start: RegExp;
}

// Derived per secret once: the logger scrubs every line with the same few secrets.
const formsBySecret = new Map<string, readonly EchoForm[]>();
const MAX_CACHED_SECRETS = 32;

function echoForms(secret: string): readonly EchoForm[] {
  const cached = formsBySecret.get(secret);
  if (cached !== undefined) return cached;
  const forms: EchoForm[] = [];
  const add = (text: string, ignoreCase: boolean, encoded = false) => {
    if (forms.some((form) => form.text === text)) return;
    const short = text.length < MIN_SCRUBBED_ECHO_CHARS;
    // A short secret is scrubbed as written only: its encodings and case variants are too short
    // to tell from ordinary text.
    if (short && encoded) return;
    const minPrefix = short ? text.length : MIN_SCRUBBED_ECHO_CHARS;
    const caseless = ignoreCase && !short;
    forms.push({
      text,
      ignoreCase: caseless,
      minPrefix,
      start: new RegExp(escapeRegExp(text.slice(0, minPrefix)), caseless ? 'gi' : 'g'),
    });
  };
  add(secret, true);
  add(JSON.stringify(secret).slice(1, -1), true);
  const urlEncoded = encodeURIComponent(secret);
  add(urlEncoded, true, true);
  add(urlEncoded.replace(/%20/g, '+'), true, true);
  for (const base64 of base64Cores(secret)) {
    add(base64, false, true);
    add(base64.replace(/\+/g, '-').replace(/\//g, '_'), false, true);
  }
  if (formsBySecret.size >= MAX_CACHED_SECRETS) formsBySecret.clear();
  formsBySecret.set(secret, forms);
  return forms;
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

/** Adds to `spans` every run of `text` that starts like `form` for at least `minPrefix` characters. */
function findForm(text: string, form: EchoForm, spans: [number, number][]): void {
  const pattern = form.start;
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    let end = match.index + form.minPrefix;
    while (
      end - match.index < form.text.length &&
      end < text.length &&
      sameCharacter(text.charAt(end), form.text.charAt(end - match.index), form.ignoreCase)
    ) {
      end++;
    }
    spans.push([match.index, end]);
    pattern.lastIndex = end;
  }
}

function sameCharacter(a: string, b: string, ignoreCase: boolean): boolean {
  return a === b || (ignoreCase && a.toLowerCase() === b.toLowerCase());
}

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
}
