// The writer a render lays its page out with: every byte written lands, whatever the page outgrows.
import { describe, expect, it } from 'vitest';
import { PageWriter } from '../../src/metrics/pageWriter.js';

describe('PageWriter', () => {
  it('grows past what it expected without losing or cutting a byte, multi-byte text included', () => {
    const page = new PageWriter(0);
    const texts: string[] = [];
    // ASCII up to just short of the first capacity, then text whose UTF-16 length would fit in
    // what is left but whose UTF-8 bytes do not.
    texts.push('a'.repeat(64 * 1024 - 10));
    texts.push('€'.repeat(6), 'é😀');
    for (let index = 0; index < 2_000; index++) texts.push(`repo="github.com/acme/ü-${index}"\n`);
    for (const text of texts) page.write(text);
    const bytes = page.finish();
    expect(bytes.toString('utf8')).toBe(texts.join(''));
    expect(bytes.length).toBe(Buffer.byteLength(texts.join('')));
  });

  it('copies ranges of another buffer, and forgets what is truncated', () => {
    const source = Buffer.from('# HELP a\nsample 1\nsample 2\n');
    const page = new PageWriter(16);
    page.write('# HELP b\n');
    const mark = page.length;
    page.write('# HELP empty\n');
    page.truncate(mark);
    page.copy(source, 9, 18);
    for (let copies = 0; copies < 10_000; copies++) page.copy(source, 18, 27);
    const text = page.finish().toString();
    expect(text.startsWith('# HELP b\nsample 1\nsample 2\n')).toBe(true);
    expect(text.length).toBe(9 + 9 + 9 * 10_000);
    expect(text).not.toContain('empty');
  });

  it("keeps its page out of Node's shared buffer pool, even when small", () => {
    const page = new PageWriter(10);
    page.write('up 1\n');
    const bytes = page.finish();
    const pooled = Buffer.from('up 0\n');
    expect(bytes.buffer).not.toBe(pooled.buffer);
    expect(bytes.byteOffset).toBe(0);
  });
});
