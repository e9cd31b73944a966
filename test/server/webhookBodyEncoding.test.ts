// Undoing a webhook body's Content-Encoding before its signature is checked.
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  contentCodings,
  decodeContent,
  UndecodableBody,
} from '../../src/server/webhookBodyEncoding.js';

const JSON_BODY = '{"type":"pull_request.merged","pr_number":7}';

describe('contentCodings', () => {
  it('lists the codings in the order applied, without identity, in any letter case', () => {
    expect(contentCodings(undefined)).toEqual([]);
    expect(contentCodings('identity')).toEqual([]);
    expect(contentCodings('GZIP')).toEqual(['gzip']);
    expect(contentCodings('deflate, br')).toEqual(['deflate', 'br']);
    expect(contentCodings('x-gzip,identity')).toEqual(['x-gzip']);
  });

  it('refuses a coding it does not decode', () => {
    expect(contentCodings('compress')).toBeUndefined();
    expect(contentCodings('gzip, zstd')).toBeUndefined();
  });
});

describe('decodeContent', () => {
  it('undoes the last coding applied first', async () => {
    const twice = brotliCompressSync(deflateSync(JSON_BODY));
    expect((await decodeContent(twice, ['deflate', 'br'], 1024)).toString()).toBe(JSON_BODY);
  });

  it('stops a body inflating past the limit, and tells it from one that does not decode', async () => {
    const large = gzipSync(' '.repeat(1025));
    await expect(decodeContent(large, ['gzip'], 1024)).rejects.toMatchObject({ tooLarge: true });
    expect((await decodeContent(gzipSync(' '.repeat(1024)), ['gzip'], 1024)).length).toBe(1024);
    const notGzip = decodeContent(Buffer.from(JSON_BODY), ['gzip'], 1024);
    await expect(notGzip).rejects.toBeInstanceOf(UndecodableBody);
    await expect(notGzip).rejects.toMatchObject({ tooLarge: false });
  });

  it('lets a body grow 32 times its encoded size, or to 64 KiB, and no more', async () => {
    const MIB = 1024 * 1024;
    // 512 KiB of spaces gzip to about 500 bytes: far past 32 times, and past 64 KiB.
    const bomb = gzipSync(' '.repeat(512 * 1024));
    await expect(decodeContent(bomb, ['gzip'], MIB)).rejects.toMatchObject({ tooLarge: true });
    const floor = gzipSync(' '.repeat(64 * 1024));
    expect((await decodeContent(floor, ['gzip'], MIB)).length).toBe(64 * 1024);
    // JSON of varied values compresses a few times over: 1,000 events, about 90 KiB.
    const events = JSON.stringify(
      Array.from({ length: 1000 }, (_, index) => ({
        type: 'pull_request.merged',
        pr_number: index * 7919,
        timestamp: new Date(Date.UTC(2026, 2, 2, 10, index)).toISOString(),
      })),
    );
    const encoded = gzipSync(events);
    expect(events.length).toBeGreaterThan(64 * 1024);
    expect((await decodeContent(encoded, ['gzip'], MIB)).toString()).toBe(events);
  });
});
