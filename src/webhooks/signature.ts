import { createHmac, timingSafeEqual } from 'node:crypto';
import { Webhook } from 'svix';
import { MAX_WEBHOOK_TOLERANCE_SECONDS } from '../config/schema.js';
import type { Secret } from '../secrets/secret.js';

/**
 * The three headers Svix signs every message with, under either of the names it sends: `svix-*`
 * by default, `webhook-*` (the Standard Webhooks names) for white-labelled accounts.
 */
export interface SvixHeaders {
  /** `svix-id` / `webhook-id`: the message id, the same on every redelivery. */
  readonly id: string;
  /** `svix-timestamp` / `webhook-timestamp`: Unix seconds when it was (re)sent; part of what is signed. */
  readonly timestamp: string;
  /** Space-separated `v1,<base64>` signatures, several during a secret rotation. */
  readonly signature: string;
}

/** The header-name prefixes Svix signs under, the default first. */
export const SIGNATURE_HEADER_FAMILIES = ['svix', 'webhook'] as const;

// Svix's ids are about 30 characters and a signature about 50; a header far beyond these is not
// from Svix, and is refused before anything is computed over it.
const MAX_ID_LENGTH = 256;
const MAX_SIGNATURE_HEADER_LENGTH = 4096;
const TIMESTAMP = /^[0-9]{1,12}$/;
/** A `<version>,<base64>` entry of the signature header (`v1,…`, or `v1a,…` for asymmetric keys). */
const SIGNATURE_ENTRY = /^v[0-9a-z]{1,8},[A-Za-z0-9+/]+={0,2}$/;

/**
 * The signature headers of a request, or why it cannot be a signed message: no family of headers
 * is complete, one is malformed, or its timestamp is more than `toleranceSeconds` from `now`.
 * Checked before the body is read, so an unsigned request costs no body read and no HMAC. A
 * request carrying some `svix-*` headers is judged by those; the `webhook-*` names are read when
 * it carries no `svix-id`. `header` gives every line of a header, in order: a proxy may repeat a
 * header or split one, so the signatures of all `-signature` lines count together (separated by
 * any run of spaces, as the svix library splits them), and a repeated id or timestamp is one value
 * only when every line says the same.
 */
export function svixHeadersOf(
  header: (name: string) => readonly string[] | undefined,
  now: number,
  toleranceSeconds: number,
): { readonly headers: SvixHeaders } | { readonly problem: string } {
  const family =
    SIGNATURE_HEADER_FAMILIES.find((prefix) => header(`${prefix}-id`) !== undefined) ?? 'svix';
  const id = singleValue(header(`${family}-id`));
  const timestamp = singleValue(header(`${family}-timestamp`));
  const signatureLines = header(`${family}-signature`);
  if (id === undefined || timestamp === undefined || signatureLines === undefined) {
    return {
      problem: 'missing or conflicting svix-id, svix-timestamp or svix-signature (or webhook-*)',
    };
  }
  if (id === '' || id.length > MAX_ID_LENGTH) return { problem: `malformed ${family}-id` };
  const entries = signatureLines
    .join(' ')
    .split(' ')
    .filter((entry) => entry !== '');
  const signature = entries.join(' ');
  if (
    signature.length > MAX_SIGNATURE_HEADER_LENGTH ||
    entries.length === 0 ||
    !entries.every((entry) => SIGNATURE_ENTRY.test(entry))
  ) {
    return { problem: `malformed ${family}-signature` };
  }
  if (!TIMESTAMP.test(timestamp)) return { problem: `malformed ${family}-timestamp` };
  if (Math.abs(now - Number(timestamp)) > toleranceSeconds) {
    return { problem: `${family}-timestamp more than ${toleranceSeconds}s from now` };
  }
  return { headers: { id, timestamp, signature } };
}

/** The value of a header sent on one line, or on several that agree; else undefined. */
function singleValue(lines: readonly string[] | undefined): string | undefined {
  const [first, ...rest] = lines ?? [];
  return rest.every((line) => line === first) ? first : undefined;
}

/** SignatureVerifier's verdict on a request's body (see its verify). */
export type SignatureVerdict = 'valid' | 'invalid' | 'stale';

/** What SignatureVerifier asks of the svix library: its `Webhook#verify`, which throws when invalid. */
export interface SvixVerify {
  verify(payload: Buffer, headers: Record<string, string>): unknown;
}

/**
 * Verifies Svix signatures with the svix library, over the exact bytes received. The library's
 * HMAC runs in JavaScript, so a large body with a made-up signature would cost real CPU: a native
 * HMAC (node:crypto) is compared first, and only a request carrying a signature that matches is
 * handed to the library, whose verdict decides.
 */
export class SignatureVerifier {
  readonly #library: SvixVerify;
  readonly #key: Buffer;

  /**
   * `secret` was checked by the config loader, so the library accepts it. `library` is the svix
   * `Webhook` for that secret unless a test wraps it.
   */
  constructor(secret: Secret, library?: SvixVerify) {
    const value = secret.reveal();
    this.#library = library ?? new Webhook(value);
    // Svix's own key derivation: the base64 after the `whsec_` prefix.
    this.#key = Buffer.from(
      value.startsWith(SECRET_PREFIX) ? value.slice(SECRET_PREFIX.length) : value,
      'base64',
    );
  }

  /**
   * Whether one of the signatures in the header is valid for `body` (any one: during a rotation
   * Svix signs with the old and the new secret): `valid`, `invalid`, or `stale` for a message
   * signed with the secret whose timestamp, by the time its body arrived, is outside the library's
   * own 5-minute window (a request that passed the header check while its timestamp was inside it).
   */
  verify(body: Buffer, headers: SvixHeaders): SignatureVerdict {
    if (!this.#mayBeSigned(body, headers)) return 'invalid';
    try {
      this.#library.verify(body, {
        'svix-id': headers.id,
        'svix-timestamp': headers.timestamp,
        'svix-signature': headers.signature,
      });
      return 'valid';
    } catch {
      // The library decides, and says only that it refused: the signature matched, so a timestamp
      // now outside its window is why, the verdict the header check gives such a timestamp.
      const age = Math.abs(Date.now() / 1000 - Number(headers.timestamp));
      return age > MAX_WEBHOOK_TOLERANCE_SECONDS ? 'stale' : 'invalid';
    }
  }

  /** Whether a `v1` signature in the header equals the native HMAC of the signed content. */
  #mayBeSigned(body: Buffer, headers: SvixHeaders): boolean {
    const expected = createHmac('sha256', this.#key)
      .update(`${headers.id}.${headers.timestamp}.`)
      .update(body)
      .digest();
    for (const entry of headers.signature.split(' ')) {
      const [version, encoded] = entry.split(',', 2);
      if (version !== 'v1' || encoded === undefined) continue;
      const given = Buffer.from(encoded, 'base64');
      if (given.length === expected.length && timingSafeEqual(given, expected)) return true;
    }
    return false;
  }
}

const SECRET_PREFIX = 'whsec_';
