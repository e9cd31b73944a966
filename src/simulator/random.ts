// A small seeded PRNG: the simulator must replay identically from a seed, which Math.random cannot.

/** A deterministic source of randomness with the helpers the simulated world needs. */
export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T;
  /** True with probability `probability`. */
  chance(probability: number): boolean;
  /** `length` lowercase hexadecimal digits. */
  hex(length: number): string;
  /** A UUID-shaped identifier (version 4 layout), from this generator. */
  uuid(): string;
}

/** A mulberry32 generator: 32-bit state, good enough spread for simulation, trivially replayable. */
export function createRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  const hex = (length: number): string => {
    let out = '';
    for (let i = 0; i < length; i++) out += int(0, 15).toString(16);
    return out;
  };
  return {
    next,
    int,
    pick<T>(items: readonly T[]): T {
      const item = items[int(0, items.length - 1)];
      if (item === undefined) throw new Error('pick() needs a non-empty list');
      return item;
    },
    chance: (probability) => next() < probability,
    hex,
    uuid: () => `${hex(8)}-${hex(4)}-4${hex(3)}-${'89ab'.charAt(int(0, 3))}${hex(3)}-${hex(12)}`,
  };
}

/**
 * Derives an independent seed for one part of the world (a queue, a quarantine list) from the world
 * seed and a stable key, so adding a repository does not reshuffle every other one.
 */
export function deriveSeed(seed: number, key: string): number {
  // FNV-1a over the key, mixed with the seed.
  let hash = 0x811c9dc5 ^ (seed >>> 0);
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * A well-mixed 32-bit hash of `key`: FNV-1a (deriveSeed) barely moves its high bits when only
 * the last characters change (ids, counters), so MurmurHash3's finalizer spreads them.
 */
function mixedHash(seed: number, key: string): number {
  let hash = deriveSeed(seed, key);
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}

/** A stable number in [0, 1) for `key`: a shape drawn per thing (a PR, a test) without a stream. */
export function unitHash(key: string): number {
  return mixedHash(0x9e3779b9, key) / 4294967296;
}

/** A version-4-shaped uuid that is a pure function of `name` (stable ids for named things). */
export function stableUuid(name: string): string {
  const hex = [1, 2, 3, 4]
    .map((part) => mixedHash(part, name).toString(16).padStart(8, '0'))
    .join('');
  const variant = '89ab'.charAt(Number.parseInt(hex.charAt(16), 16) % 4);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
