// The scrubber every log line and every error excerpt passes through: the token in any form an
// upstream might echo it back in, and credentials in URLs.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.js';
import { scrubSecrets } from '../../src/secrets/scrubSecrets.js';

const TOKEN = 'tok/Echo+Fault=5e1f~9a7b"c';

function base64(text: string): string {
  return Buffer.from(text).toString('base64');
}

/** Every byte as %XX, upper-case hex: more than encodeURIComponent does. */
function percentEncoded(text: string): string {
  return Array.from(Buffer.from(text), (byte) => `%${byte.toString(16).toUpperCase()}`).join('');
}

describe('scrubSecrets', () => {
  // Expected leftovers: at most one base64 character that mixes the token's bits with its
  // neighbours' (or with padding), and what is not the token.
  it.each([
    ['as written', TOKEN, '<redacted>'],
    ['upper-cased', TOKEN.toUpperCase(), '<redacted>'],
    ['lower-cased', TOKEN.toLowerCase(), '<redacted>'],
    ['JSON-escaped', JSON.stringify(TOKEN).slice(1, -1), '<redacted>'],
    ['URL-encoded', encodeURIComponent(TOKEN), '<redacted>'],
    ['URL-encoded with lower-case hex', 'tok%2fEcho%2bFault%3d5e1f~9a7b%22c', '<redacted>'],
    ['base64', base64(TOKEN), '<redacted>M='],
    ['base64 after one byte (Basic x:token)', base64(`x:${TOKEN}`), 'eDp<redacted>w=='],
    ['base64 after two bytes', base64(`xy:${TOKEN}`), 'eHk6<redacted>M='],
    ['base64 after three bytes', base64(`xyz:${TOKEN}`), 'eHl6On<redacted>'],
    ['base64url', Buffer.from(`x:${TOKEN}`).toString('base64url'), 'eDp<redacted>w'],
    ['cut to 16 characters', `${TOKEN.slice(0, 16)}…`, '<redacted>…'],
    ['cut to 8 characters, upper-cased', `${TOKEN.slice(0, 8).toUpperCase()}...`, '<redacted>...'],
    ['cut, then base64-encoded', base64(TOKEN.slice(0, 15)), '<redacted>'],
    ['with only some characters URL-encoded', 'tok/Echo%2BFault=5e1f~9a7b"c', '<redacted>'],
    ['with letters and digits percent-encoded', '%74ok/Echo+F%61ult=%35e1f~9a7b"c', '<redacted>'],
    ['with mixed-case hex', 'tok%2fEcho%2BFault%3D5e1f%7e9a7b%22c', '<redacted>'],
    ['with every character percent-encoded', percentEncoded(TOKEN), '<redacted>'],
    ['percent-encoded and cut to 8 characters', '%74%6f%6b%2FEcho...', '<redacted>...'],
  ])('removes the token %s', (_name, echo, expected) => {
    expect(scrubSecrets(`401: invalid token "${echo}" (request 7)`, [TOKEN])).toBe(
      `401: invalid token "${expected}" (request 7)`,
    );
  });

  it('leaves ordinary text and short pieces of the token alone', () => {
    const text = `queue github.com/acme/web paused; tok/Ech is 7 characters; ${base64('hello')}`;
    expect(scrubSecrets(text, [TOKEN])).toBe(text);
  });

  it('scrubs the token with a dash written as %2D, as the API may echo it', () => {
    const token = 'tok_live-9f8e7d6c5b4a_SECRET';
    const echoes = ['tok_live%2D9f8e7d6c5b4a_SECRET', 'tok_live%2d9f8e7d6c5b4a_SECRET'];
    for (const echo of echoes) {
      expect(scrubSecrets(`GET /v1?token=${echo}&x=1`, [token])).toBe(
        'GET /v1?token=<redacted>&x=1',
      );
    }
  });

  it('leaves a percent-encoded text that only starts like the token alone', () => {
    const text = 'path=%74%6f%6b%2F7 and tok%2FEc';
    expect(scrubSecrets(text, [TOKEN])).toBe(text);
  });

  it("leaves a text alone that holds only a short API key's secret part, scrubbing the key itself", () => {
    const line = 'polling.pullRequestDetails does nothing with an API key: trunk_v2_k was refused';
    expect(scrubSecrets(line, ['trunk_v2_k'])).toBe(
      'polling.pullRequestDetails does nothing with an API key: <redacted> was refused',
    );
  });

  it('scrubs a short token only as written', () => {
    expect(scrubSecrets('abc ABC YWJj abcd', ['abc'])).toBe('<redacted> ABC YWJj <redacted>d');
  });
});

describe('scrubSecrets with an API v2 key', () => {
  // Trunk's v2 keys all begin with the published `trunk_v2_`; what follows it is the secret.
  const KEY = 'trunk_v2_Q7hX2mZ9pL4kW8vN';
  const SECRET_PART = 'Q7hX2mZ9pL4kW8vN';

  it("leaves the exporter's hint that names the public prefix readable", () => {
    const hint =
      'check trunk.apiKey (an API v2 key starts with trunk_v2_; a v1 token does not work on v2)';
    expect(scrubSecrets(hint, [KEY])).toBe(hint);
  });

  it.each([
    ['as written', KEY, '<redacted>'],
    ['upper-cased', KEY.toUpperCase(), '<redacted>'],
    ['cut one character after the prefix', 'trunk_v2_Q…', '<redacted>…'],
    ['cut four characters after the prefix', 'trunk_v2_Q7hX…', '<redacted>…'],
    ['without its prefix', SECRET_PART, '<redacted>'],
    ['without its prefix, cut to 8 characters', `${SECRET_PART.slice(0, 8)}…`, '<redacted>…'],
    ['base64 of its secret part', base64(SECRET_PART), '<redacted>g=='],
    ['JSON-escaped with the prefix percent-encoded', 'trunk%5Fv2%5FQ7hX2mZ9pL4kW8vN', '<redacted>'],
  ])('removes the key %s', (_name, echo, expected) => {
    expect(scrubSecrets(`401: invalid key "${echo}"`, [KEY])).toBe(
      `401: invalid key "${expected}"`,
    );
  });

  it('removes the secret part inside a base64 echo of the whole key, at any alignment', () => {
    for (const before of ['', 'x:', 'xy:']) {
      const scrubbed = scrubSecrets(base64(`${before}${KEY}`), [KEY]);
      expect(scrubbed).toContain('<redacted>');
      // At most the one base64 character mixing the prefix's last bits with the secret's is left.
      const kept = scrubbed.split('<redacted>').join('');
      expect(kept.length).toBeLessThanOrEqual(base64(`${before}trunk_v2_`).length + 3);
    }
  });
});

describe('the logger', () => {
  it('scrubs echoes of every known token and credentials from URLs in every line', async () => {
    let output = '';
    const destination = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        output += chunk.toString();
        callback();
      },
    });
    const logger = createLogger({ level: 'info', secrets: () => [TOKEN], destination });
    logger.warn(
      {
        url: 'https://robot:hunter2@api.example.com/v1',
        body: base64(`user:${TOKEN}`),
        query: 'token=tok%2FEcho%2bFault%3D5e1f~9a7b%22c',
      },
      `poll failed: ${TOKEN.toUpperCase()} rejected by http://a:b@c@proxy.local:8080/path?x=y@z`,
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(output).toContain('"url":"https://<redacted>@api.example.com/v1"');
    expect(output).toContain('http://<redacted>@proxy.local:8080/path?x=y@z');
    expect(output).not.toMatch(/hunter2|robot|a:b|c@proxy/);
    expect(output).not.toContain(TOKEN.toUpperCase().slice(0, 8));
    expect(output).not.toContain(base64(`user:${TOKEN}`).slice(8, 16));
    expect(output).toContain('"query":"token=<redacted>"');
  });
});
