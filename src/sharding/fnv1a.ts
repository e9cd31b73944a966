// FNV-1a, 64-bit, over the UTF-8 bytes of a string: the hash kube-state-metrics shards by. It is
// stable across processes, versions and platforms, which is all sharding needs from it.

const OFFSET_BASIS = 0xcbf29ce484222325n;
const PRIME = 0x100000001b3n;
const MASK = 0xffffffffffffffffn;

const encoder = new TextEncoder();

/** The 64-bit FNV-1a hash of `text`'s UTF-8 bytes, as an unsigned bigint. */
export function fnv1a64(text: string): bigint {
  let hash = OFFSET_BASIS;
  for (const byte of encoder.encode(text)) {
    hash ^= BigInt(byte);
    hash = (hash * PRIME) & MASK;
  }
  return hash;
}
