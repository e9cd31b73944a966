// The verifier hands a request to the svix library only when a native HMAC says one of its
// signatures may be valid: the library's HMAC is JavaScript and costs real CPU on a large body.
import { describe, expect, it } from 'vitest';
import { Webhook } from 'svix';
import { Secret } from '../../src/secrets/secret.js';
import { SignatureVerifier, type SvixVerify } from '../../src/webhooks/signature.js';
import {
  OTHER_WEBHOOK_SECRET,
  WEBHOOK_SECRET,
  hmacSignature,
  svixSignature,
} from '../support/webhooks.js';

/** The real svix Webhook for the secret, counting the calls the verifier makes to it. */
function countingLibrary(secret: string): { library: SvixVerify; calls: () => number } {
  const webhook = new Webhook(secret);
  let calls = 0;
  return {
    library: {
      verify(payload, headers) {
        calls++;
        webhook.verify(payload, headers);
      },
    },
    calls: () => calls,
  };
}

const ID = 'msg_2pYJ6pbcQ1ZJ0PqHqP3Qe6Ykz1a';
const MEBIBYTE_BODY = `{"type":"pull_request.merged","padding":"${'x'.repeat(1024 * 1024)}"}`;

function headersFor(signature: string, timestamp: number) {
  return { id: ID, timestamp: String(timestamp), signature };
}

describe('SignatureVerifier', () => {
  it('accepts a body signed by the svix library and by an independent HMAC, asking the library once each', () => {
    const { library, calls } = countingLibrary(WEBHOOK_SECRET);
    const verifier = new SignatureVerifier(new Secret(WEBHOOK_SECRET), library);
    const now = Math.floor(Date.now() / 1000);
    const body = '{"type":"pull_request.merged"}';
    for (const sign of [svixSignature, hmacSignature]) {
      const signature = sign(WEBHOOK_SECRET, ID, now, body);
      expect(verifier.verify(Buffer.from(body), headersFor(signature, now))).toBe(true);
    }
    expect(calls()).toBe(2);
  });

  it('refuses a 1 MiB body with made-up or foreign signatures without running the library', () => {
    const { library, calls } = countingLibrary(WEBHOOK_SECRET);
    const verifier = new SignatureVerifier(new Secret(WEBHOOK_SECRET), library);
    const now = Math.floor(Date.now() / 1000);
    const body = Buffer.from(MEBIBYTE_BODY);
    const foreign = svixSignature(OTHER_WEBHOOK_SECRET, ID, now, MEBIBYTE_BODY);
    for (const signature of [
      `v1,${Buffer.alloc(32).toString('base64')}`,
      'v1,not-base64!',
      'v2,whatever v1',
      foreign,
      `${foreign} ${foreign}`,
    ]) {
      expect(verifier.verify(body, headersFor(signature, now))).toBe(false);
    }
    expect(calls()).toBe(0);
  });

  it('accepts a rotation header whose second signature is the valid one', () => {
    const verifier = new SignatureVerifier(new Secret(WEBHOOK_SECRET));
    const now = Math.floor(Date.now() / 1000);
    const body = '{"type":"pull_request.queued"}';
    const header = `${svixSignature(OTHER_WEBHOOK_SECRET, ID, now, body)} ${svixSignature(WEBHOOK_SECRET, ID, now, body)}`;
    expect(verifier.verify(Buffer.from(body), headersFor(header, now))).toBe(true);
  });

  it('leaves the verdict to the library when the native HMAC matches', () => {
    // Correctly signed, but ten minutes old: svix's own 5-minute window refuses it.
    const { library, calls } = countingLibrary(WEBHOOK_SECRET);
    const verifier = new SignatureVerifier(new Secret(WEBHOOK_SECRET), library);
    const old = Math.floor(Date.now() / 1000) - 600;
    const body = '{"type":"pull_request.failed"}';
    const signature = svixSignature(WEBHOOK_SECRET, ID, old, body);
    expect(verifier.verify(Buffer.from(body), headersFor(signature, old))).toBe(false);
    expect(calls()).toBe(1);
  });
});
