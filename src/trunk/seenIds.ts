// The ids a walk of a list has met: its tests, so that a test the moving list shows twice counts
// once, and its page tokens or cursors, to tell a cycle. Kept as a 53-bit hash of each id rather
// than the id: a number per id held for the length of the walk, where the id would keep a string
// alive with it. Two ids share a hash about once in 10^6 walks of 100,000 tests (n² / 2^54), which
// would leave one test uncounted for one read.
//
// The hashes sit in an open-addressed table of doubles outside V8's heap, where a Set would keep
// each hash as a heap number and each outgrown table as garbage. The table is live for the whole
// walk, so it is sized for what the walk needs: the previous walk of the same list, and a little
// more.

/** Slots of the smallest table; a walk of a few tests never grows it. */
const MIN_SLOTS = 1024;
/** The most a table is filled: linear probes stay a few slots long. */
const MAX_LOAD = 0.7;
/** Room beyond the previous walk's count, for a list that grew since, before the table must grow. */
const HEADROOM = 1.1;

/** The ids met so far in one walk. */
export class SeenIds {
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
    if (this.#count > this.#slots.length * MAX_LOAD) this.#grow();
    return true;
  }

  /** The table's size in bytes, held for the length of the walk. */
  get byteLength(): number {
    return this.#slots.byteLength;
  }

  /** Puts `key` in its slot; false when it is there already. */
  #insert(slots: Float64Array, key: number): boolean {
    const size = slots.length;
    // The low 32 bits come from one FNV-1a hash: well mixed, so linear probing stays short.
    for (let index = (key >>> 0) % size; ; index = index + 1 === size ? 0 : index + 1) {
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

/** Slots for `expected` ids and HEADROOM more, at most MAX_LOAD full; at least MIN_SLOTS. */
function slotsFor(expected: number): number {
  return Math.max(MIN_SLOTS, Math.ceil((expected * HEADROOM) / MAX_LOAD));
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
