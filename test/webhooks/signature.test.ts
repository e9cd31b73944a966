// The verifier hands a request to the svix library only when a native HMAC says one of its
// signatures may be valid: the library's HMAC is JavaScript and costs real CPU on a large body.
import { createHmac } from 'node:crypto';
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
      expect(verifier.verify(Buffer.from(body), headersFor(signature, now))).toBe('valid');
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
      expect(verifier.verify(body, headersFor(signature, now))).toBe('invalid');
    }
    expect(calls()).toBe(0);
  });

  it('accepts a rotation header whose second signature is the valid one', () => {
    const verifier = new SignatureVerifier(new Secret(WEBHOOK_SECRET));
    const now = Math.floor(Date.now() / 1000);
    const body = '{"type":"pull_request.queued"}';
    const header = `${svixSignature(OTHER_WEBHOOK_SECRET, ID, now, body)} ${svixSignature(WEBHOOK_SECRET, ID, now, body)}`;
    expect(verifier.verify(Buffer.from(body), headersFor(header, now))).toBe('valid');
  });

  it('leaves the verdict to the library when the native HMAC matches', () => {
    // Signed over bytes that are no UTF-8 text: the native HMAC matches, the library (which reads
    // the payload as text) refuses, and the timestamp is fresh, so the refusal is no staleness.
    const { library, calls } = countingLibrary(WEBHOOK_SECRET);
    const verifier = new SignatureVerifier(new Secret(WEBHOOK_SECRET), library);
    const now = Math.floor(Date.now() / 1000);
    const body = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    const signature = `v1,${createHmac(
      'sha256',
      Buffer.from(WEBHOOK_SECRET.slice('whsec_'.length), 'base64'),
    )
      .update(`${ID}.${String(now)}.`)
      .update(body)
      .digest('base64')}`;
    expect(verifier.verify(body, headersFor(signature, now))).toBe('invalid');
    expect(calls()).toBe(1);
  });

  it("calls a correctly signed message stale once its timestamp is outside svix's 5-minute window", () => {
    // Svix: "the timestamp is within … five minutes" of the verifier's clock. Ten minutes old by
    // the time its body is verified: the header check let it in while it was younger.
    const { library, calls } = countingLibrary(WEBHOOK_SECRET);
    const verifier = new SignatureVerifier(new Secret(WEBHOOK_SECRET), library);
    const body = '{"type":"pull_request.failed"}';
    const now = Math.floor(Date.now() / 1000);
    for (const [age, verdict] of [
      [600, 'stale'],
      [-600, 'stale'],
      [240, 'valid'],
    ] as const) {
      const signature = svixSignature(WEBHOOK_SECRET, ID, now - age, body);
      expect(verifier.verify(Buffer.from(body), headersFor(signature, now - age))).toBe(verdict);
    }
    expect(calls()).toBe(3);
  });
});
