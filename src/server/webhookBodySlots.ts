/**
 * How many webhook bodies are read at once. Svix delivers a burst of events concurrently from a
 * few addresses and each body arrives at once, so slots are plenty for genuine deliveries; what
 * can hold a slot for long is a client trickling its body, and a newcomer frees the slowest such
 * one rather than being refused.
 */
export interface BodySlotLimits {
  /** Bodies read at once, over all peers; with the 1 MiB limit it bounds the memory they take. */
  readonly total: number;
  /** Bodies read at once from one peer address. */
  readonly perPeer: number;
  /** A reader is judged slow only once it has had this long; a younger one is never dropped. */
  readonly minAgeMs: number;
}

export const DEFAULT_BODY_SLOT_LIMITS: BodySlotLimits = { total: 16, perPeer: 4, minAgeMs: 1_000 };

/** One body being read: report what arrived, release when done. */
export interface BodySlot {
  received(bytes: number): void;
  release(): void;
}

interface Reader {
  readonly peer: string;
  readonly startedAt: number;
  receivedBytes: number;
  /** Called when a newcomer takes this reader's slot. */
  readonly drop: () => void;
}

/**
 * Hands out body slots per peer address. When the peer or every slot is taken, the slowest reader
 * (fewest bytes a millisecond, among those older than `minAgeMs`) of that peer or of all is
 * dropped for the newcomer; only when none is old enough to judge is the newcomer refused.
 */
export class BodySlots {
  readonly #readers = new Set<Reader>();

  constructor(
    private readonly limits: BodySlotLimits = DEFAULT_BODY_SLOT_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  /** A slot for a body from `peer`, or undefined (refuse it); `drop` is called if it is taken. */
  acquire(peer: string, drop: () => void): BodySlot | undefined {
    const ofPeer = [...this.#readers].filter((reader) => reader.peer === peer);
    const contenders =
      ofPeer.length >= this.limits.perPeer
        ? ofPeer
        : this.#readers.size >= this.limits.total
          ? [...this.#readers]
          : undefined;
    if (contenders !== undefined) {
      const slowest = this.#slowest(contenders);
      if (slowest === undefined) return undefined;
      this.#readers.delete(slowest);
      slowest.drop();
    }
    const reader: Reader = { peer, startedAt: this.now(), receivedBytes: 0, drop };
    this.#readers.add(reader);
    return {
      received: (bytes) => {
        reader.receivedBytes += bytes;
      },
      release: () => {
        this.#readers.delete(reader);
      },
    };
  }

  /** Bodies being read now. */
  get size(): number {
    return this.#readers.size;
  }

  #slowest(readers: readonly Reader[]): Reader | undefined {
    const now = this.now();
    let slowest: Reader | undefined;
    let slowestRate = Infinity;
    for (const reader of readers) {
      const age = now - reader.startedAt;
      if (age < this.limits.minAgeMs) continue;
      const rate = reader.receivedBytes / age;
      if (rate < slowestRate) {
        slowest = reader;
        slowestRate = rate;
      }
    }
    return slowest;
  }
}
