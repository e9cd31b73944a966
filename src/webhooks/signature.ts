import { Webhook } from 'svix';
import type { Secret } from '../secrets/secret.js';

/** The three headers Svix signs every message with. */
export interface SvixHeaders {
  /** `svix-id`: the message id, the same on every redelivery. */
  readonly id: string;
  /** `svix-timestamp`: Unix seconds when it was (re)sent; part of what is signed. */
  readonly timestamp: string;
  /** `svix-signature`: space-separated `v1,<base64>` signatures, several during a secret rotation. */
  readonly signature: string;
}

// Svix's ids are about 30 characters and a signature about 50; a header far beyond these is not
// from Svix, and is refused before anything is computed over it.
const MAX_ID_LENGTH = 256;
const MAX_SIGNATURE_HEADER_LENGTH = 4096;
const TIMESTAMP = /^[0-9]{1,12}$/;

/**
 * The Svix headers of a request, or why it cannot be a signed message: a header is missing or
 * malformed, or its timestamp is more than `toleranceSeconds` from `now`. Checked before the body
 * is read, so an unsigned request costs no body read and no HMAC.
 */
export function svixHeadersOf(
  header: (name: string) => string | undefined,
  now: number,
  toleranceSeconds: number,
): { readonly headers: SvixHeaders } | { readonly problem: string } {
  const id = header('svix-id');
  const timestamp = header('svix-timestamp');
  const signature = header('svix-signature');
  if (id === undefined || timestamp === undefined || signature === undefined) {
    return { problem: 'missing svix-id, svix-timestamp or svix-signature' };
  }
  if (id === '' || id.length > MAX_ID_LENGTH) return { problem: 'malformed svix-id' };
  if (signature === '' || signature.length > MAX_SIGNATURE_HEADER_LENGTH) {
    return { problem: 'malformed svix-signature' };
  }
  if (!TIMESTAMP.test(timestamp)) return { problem: 'malformed svix-timestamp' };
  if (Math.abs(now - Number(timestamp)) > toleranceSeconds) {
    return { problem: `svix-timestamp more than ${toleranceSeconds}s from now` };
  }
  return { headers: { id, timestamp, signature } };
}

/** Verifies Svix signatures with the svix library, over the exact bytes received. */
export class SignatureVerifier {
  readonly #webhook: Webhook;

  /** `secret` was checked by the config loader, so the library accepts it. */
  constructor(secret: Secret) {
    this.#webhook = new Webhook(secret.reveal());
  }

  /**
   * Whether one of the signatures in the header is valid for `body` (any one: during a rotation
   * Svix signs with the old and the new secret). The library also checks the timestamp against
   * its own 5-minute window.
   */
  verify(body: Buffer, headers: SvixHeaders): boolean {
    try {
      this.#webhook.verify(body, {
        'svix-id': headers.id,
        'svix-timestamp': headers.timestamp,
        'svix-signature': headers.signature,
      });
      return true;
    } catch {
      return false;
    }
  }
}
