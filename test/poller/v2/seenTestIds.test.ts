import { describe, expect, it } from 'vitest';
import { SeenTestIds, idHash } from '../../../src/poller/v2/seenTestIds.js';

/** A UUID-shaped id from a counter, as Trunk's test ids look. */
function uuidLike(n: number): string {
  const hex = n.toString(16).padStart(12, '0');
  return `3f2a9c1e-0b7d-4e21-9a6c-${hex}`;
}

describe('SeenTestIds', () => {
  it('meets each id once, however often the walk shows it', () => {
    const seen = new SeenTestIds();
    expect(seen.firstTime('checkout-test')).toBe(true);
    expect(seen.firstTime('cart-test')).toBe(true);
    expect(seen.firstTime('checkout-test')).toBe(false);
    expect(seen.firstTime('cart-test')).toBe(false);
    expect(seen.firstTime('Checkout-test')).toBe(true);
  });

  it('tells apart 200,000 ids that differ in one character or in their order', () => {
    const seen = new SeenTestIds();
    let first = 0;
    for (let n = 0; n < 100_000; n++) if (seen.firstTime(uuidLike(n))) first++;
    // The same characters in another order: a hash that only sums them would collide.
    for (let n = 0; n < 100_000; n++)
      if (seen.firstTime(uuidLike(n).split('').reverse().join(''))) first++;
    expect(first).toBe(200_000);
  });

  it('keeps every hash an exact integer a double holds', () => {
    for (const id of ['', 'a', uuidLike(0), 'ü'.repeat(64)]) {
      expect(Number.isSafeInteger(idHash(id))).toBe(true);
    }
  });
});
