// The tests a walk of an organization-wide list has met, so that a test the moving list shows twice
// counts once. Kept as a 53-bit hash of each id rather than the id: a number per test held for
// the length of the walk, where the id would keep a string per test alive with it. Two ids
// share a hash about once in 10^6 walks of 100,000 tests (n² / 2^54), which would leave one test
// uncounted for one read.

/** The ids met so far in one walk. */
export class SeenTestIds {
  readonly #hashes = new Set<number>();

  /** Whether `id` is met for the first time in this walk; remembers it. */
  firstTime(id: string): boolean {
    const hash = idHash(id);
    if (this.#hashes.has(hash)) return false;
    this.#hashes.add(hash);
    return true;
  }
}

/** Two 32-bit FNV-1a hashes of the id's UTF-16 code units, with different offsets, in 53 bits. */
export function idHash(id: string): number {
  let high = 0x811c9dc5;
  let low = 0x050c5d1f;
  for (let index = 0; index < id.length; index++) {
    const unit = id.charCodeAt(index);
    high = Math.imul(high ^ unit, 0x01000193);
    low = Math.imul(low ^ unit, 0x01000193);
  }
  // 21 bits of one and 32 of the other: every such number is exact in a double.
  return (high >>> 11) * 2 ** 32 + (low >>> 0);
}
