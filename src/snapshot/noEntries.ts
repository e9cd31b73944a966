// One empty map for every snapshot and ledger field with nothing in it, and one empty list: each
// merge queue (or pull request) would otherwise keep an empty one of its own per such field
// (docs/benchmarks.md has what they cost).

/** The empty map a snapshot or ledger field holds while it has no entries; read-only by type. */
export const NO_ENTRIES: ReadonlyMap<never, never> = new Map<never, never>();

/** `map`, or NO_ENTRIES when it is empty: for a field to keep, once nothing adds to `map` any more. */
export function orShared<K, V>(map: ReadonlyMap<K, V>): ReadonlyMap<K, V> {
  return map.size === 0 ? NO_ENTRIES : map;
}

/** The empty list a snapshot field holds while it has no items; read-only by type and frozen. */
export const NO_ITEMS: readonly never[] = Object.freeze([]);

/** `list`, or NO_ITEMS when it is empty. */
export function orNoItems<T>(list: readonly T[]): readonly T[] {
  return list.length === 0 ? NO_ITEMS : list;
}
