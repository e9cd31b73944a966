// The one empty map that snapshot and ledger fields hold while they have no entries.
import { describe, expect, it } from 'vitest';
import { NO_ENTRIES, NO_ITEMS, orNoItems, orShared } from '../../src/snapshot/noEntries.js';

describe('orShared', () => {
  it('gives the shared empty map for an empty one', () => {
    const empty = new Map<string, number>();
    expect(orShared(empty)).toBe(NO_ENTRIES);
    expect(NO_ENTRIES.size).toBe(0);
  });

  it('gives a map with entries back as it is', () => {
    const counts = new Map([['merged', 1]]);
    expect(orShared(counts)).toBe(counts);
  });
});

describe('orNoItems', () => {
  it('gives the shared empty list for an empty one, and it cannot be changed', () => {
    expect(orNoItems([])).toBe(NO_ITEMS);
    expect(Object.isFrozen(NO_ITEMS)).toBe(true);
  });

  it('gives a list with items back as it is', () => {
    const reasons = ['draft'];
    expect(orNoItems(reasons)).toBe(reasons);
  });
});
