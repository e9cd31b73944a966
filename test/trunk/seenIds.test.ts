import { describe, expect, it } from 'vitest';
import { SeenIds, idHash } from '../../src/trunk/seenIds.js';

/** A UUID-shaped id from a counter, as Trunk's test ids look. */
function uuidLike(n: number): string {
  const hex = n.toString(16).padStart(12, '0');
  return `3f2a9c1e-0b7d-4e21-9a6c-${hex}`;
}

describe('SeenIds', () => {
  it('meets each id once, however often the walk shows it', () => {
    const seen = new SeenIds();
    expect(seen.firstTime('checkout-test')).toBe(true);
    expect(seen.firstTime('cart-test')).toBe(true);
    expect(seen.firstTime('checkout-test')).toBe(false);
    expect(seen.firstTime('cart-test')).toBe(false);
    expect(seen.firstTime('Checkout-test')).toBe(true);
  });

  it('tells apart 200,000 ids that differ in one character or in their order', () => {
    const seen = new SeenIds();
    let first = 0;
    for (let n = 0; n < 100_000; n++) if (seen.firstTime(uuidLike(n))) first++;
    // The same characters in another order: a hash that only sums them would collide.
    for (let n = 0; n < 100_000; n++)
      if (seen.firstTime(uuidLike(n).split('').reverse().join(''))) first++;
    expect(first).toBe(200_000);
  });

  it('counts the ids met, whether its table was sized for them or grew to them', () => {
    for (const expected of [0, 100_000]) {
      const seen = new SeenIds(expected);
      // 5,000 ids, each shown three times, as a list that moves while it is walked may show them.
      for (let round = 0; round < 3; round++) {
        for (let n = 0; n < 5_000; n++) seen.firstTime(uuidLike(n * 7919));
      }
      expect(seen.count).toBe(5_000);
      expect(seen.firstTime(uuidLike(4_999 * 7919))).toBe(false);
      expect(seen.firstTime(uuidLike(5_000 * 7919))).toBe(true);
    }
  });

  it('holds a table sized for the previous walk, with room for a list grown by a tenth, and grows past it', () => {
    // The table is live for the whole walk: for 100,000 tests it holds at most 1.3 MB.
    const seen = new SeenIds(100_000);
    const sized = seen.byteLength;
    expect(sized).toBeLessThanOrEqual(1_300_000);
    for (let n = 0; n < 110_000; n++) seen.firstTime(uuidLike(n));
    expect(seen.byteLength).toBe(sized);
    for (let n = 110_000; n < 160_000; n++) seen.firstTime(uuidLike(n));
    expect(seen.byteLength).toBeGreaterThan(sized);
    expect(seen.count).toBe(160_000);
    expect(seen.firstTime(uuidLike(0))).toBe(false);
    expect(seen.firstTime(uuidLike(159_999))).toBe(false);
  });

  it('keeps every hash an exact integer a double holds', () => {
    for (const id of ['', 'a', uuidLike(0), 'ü'.repeat(64)]) {
      expect(Number.isSafeInteger(idHash(id))).toBe(true);
    }
  });
});
