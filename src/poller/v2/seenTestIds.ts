// The tests a walk of an organization-wide list has met, so that a test the moving list shows twice
// counts once. Kept as a 53-bit hash of each id rather than the id: a number per test held for
// the length of the walk, where the id would keep a string per test alive with it. Two ids
// share a hash about once in 10^6 walks of 100,000 tests (n² / 2^54), which would leave one test
// uncounted for one read.
//
// The hashes sit in an open-addressed table of doubles sized for the previous walk of the same
// list, outside V8's heap: a Set of them kept every hash as a heap number and left each outgrown
// table behind as garbage, which is what made the heap rise during a walk.

/** Slots of the smallest table; a walk of a few tests never grows it. */
const MIN_SLOTS = 1024;

/** The ids met so far in one walk. */
export class SeenTestIds {
  /** Each slot 0 (empty) or a hash plus one: every such number is exact in a double. */
  #slots: Float64Array;
  #count = 0;

  /** `expected`: about how many tests the walk will meet (the previous walk's count). */
  constructor(expected = 0) {
    this.#slots = new Float64Array(slotsFor(expected));
  }

  /** How many different ids were met. */
  get count(): number {
    return this.#count;
  }

  /** Whether `id` is met for the first time in this walk; remembers it. */
  firstTime(id: string): boolean {
    const key = idHash(id) + 1;
    if (!this.#insert(this.#slots, key)) return false;
    this.#count += 1;
    // At most half full, so that a probe stays a few slots long.
    if (this.#count * 2 > this.#slots.length) this.#grow();
    return true;
  }

  /** Puts `key` in its slot; false when it is there already. */
  #insert(slots: Float64Array, key: number): boolean {
    const mask = slots.length - 1;
    // The low 32 bits come from one FNV-1a hash: well mixed, so linear probing stays short.
    for (let index = (key >>> 0) & mask; ; index = (index + 1) & mask) {
      const slot = slots[index];
      if (slot === key) return false;
      if (slot === 0) {
        slots[index] = key;
        return true;
      }
    }
  }

  #grow(): void {
    const old = this.#slots;
    const slots = new Float64Array(old.length * 2);
    for (const key of old) if (key !== 0) this.#insert(slots, key);
    this.#slots = slots;
  }
}

/** A power of two at least twice `expected`, and at least MIN_SLOTS. */
function slotsFor(expected: number): number {
  let slots = MIN_SLOTS;
  while (slots < expected * 2) slots *= 2;
  return slots;
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
