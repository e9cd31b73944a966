// A replaced part of /metrics is freed as soon as nothing reads it, instead of at the next full
// garbage collection; nothing may free it while a response or its gzip still reads it.
import { randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { PagePart } from '../../src/metrics/pagePart.js';

/** A page-sized text: too large for Node's buffer pool, so the part owns its memory. */
function pageText(): Buffer {
  return Buffer.from('trunk_merge_queue_depth{repo="github.com/acme/web"} 3\n'.repeat(2_000));
}

describe('PagePart', () => {
  it('frees its text when retired with no reader', () => {
    const part = new PagePart(pageText());
    expect(part.text.length).toBeGreaterThan(0);
    part.retire();
    expect(part.released).toBe(true);
    expect(part.text.length).toBe(0);
  });

  it('keeps its text while a reader holds it, and frees it at the last release', () => {
    const text = pageText();
    const copy = Buffer.from(text);
    const part = new PagePart(text);
    part.hold();
    part.hold();
    part.retire();
    part.release();
    expect(part.text.equals(copy)).toBe(true);
    part.release();
    expect(part.text.length).toBe(0);
  });

  it('is never freed while it is the current part, however often it is read', () => {
    const part = new PagePart(pageText());
    for (let reader = 0; reader < 3; reader++) {
      part.hold();
      part.release();
    }
    expect(part.released).toBe(false);
    expect(part.text.length).toBeGreaterThan(0);
  });

  it('frees neither the text nor its gzip member while a response holds them', async () => {
    // Random, so that the gzip member is large enough to own its memory too.
    const copy = Buffer.from(`up{id="${randomBytes(50_000).toString('hex')}"} 1\n`);
    const part = new PagePart(Buffer.from(copy));
    part.hold();
    const gzipped = part.gzipped();
    part.retire();
    const bytes = await gzipped;
    expect(gunzipSync(bytes).equals(copy)).toBe(true);
    expect(part.text.equals(copy)).toBe(true);
    part.release();
    expect(part.text.length).toBe(0);
    expect(bytes.length).toBe(0);
  });

  it('holds itself while zlib reads it, retired or not', async () => {
    const part = new PagePart(pageText());
    const gzipped = part.gzipped();
    part.retire();
    expect(part.released).toBe(false);
    await gzipped;
    expect(part.released).toBe(true);
    expect(part.text.length).toBe(0);
  });

  it("leaves a small text alone: it shares Node's buffer pool with others", () => {
    const neighbour = Buffer.from('up 1\n');
    const part = new PagePart(Buffer.from('up 0\n'));
    part.retire();
    expect(part.released).toBe(true);
    expect(part.text.toString()).toBe('up 0\n');
    expect(neighbour.toString()).toBe('up 1\n');
  });
});
