/**
 * How many webhook bodies are read at once. Svix delivers a burst of events concurrently from a
 * few addresses and each body arrives at once, so these suffice for genuine deliveries; what can
 * hold a read open for long is a client trickling its body, and a newcomer drops the slowest such
 * one rather than being refused.
 */
export interface BodyReadLimits {
  /** Bodies read at once, over all peers; with the 1 MiB limit it bounds the memory they take. */
  readonly total: number;
  /** Bodies read at once from one peer address. */
  readonly perPeer: number;
}

export const DEFAULT_BODY_READ_LIMITS: BodyReadLimits = { total: 16, perPeer: 4 };

/**
 * A reader younger than this is dropped only when no older one can be: a genuine delivery's body
 * follows its headers within milliseconds, but may come in a later read, and until then it has
 * fewer bytes a millisecond than any trickling client.
 */
export const BODY_READ_GRACE_MS = 1000;

/** One body being read: report what arrived, release when done. */
export interface BodyRead {
  received(bytes: number): void;
  release(): void;
}

interface Reader {
  readonly peer: string;
  readonly startedAt: number;
  receivedBytes: number;
  /** Called when a newcomer takes this reader's place. */
  readonly drop: () => void;
}

/**
 * The webhook bodies being read at once, bounded per peer address and overall, never refusing a
 * newcomer: when its peer holds `perPeer` bodies, that peer's slowest reader is dropped for it;
 * when all `total` are taken, the slowest reader of the peers holding the most is. Slowest is fewest bytes a millisecond so far
 * (the oldest of equals) among the readers past BODY_READ_GRACE_MS, else the oldest: a trickling
 * client, never a delivery whose body came at once or is about to.
 */
export class ConcurrentBodyReads {
  readonly #readers = new Set<Reader>();

  constructor(
    private readonly limits: BodyReadLimits = DEFAULT_BODY_READ_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Starts reading a body from `peer`; `drop` is called if a later newcomer takes its place. */
  acquire(peer: string, drop: () => void): BodyRead {
    const ofPeer = [...this.#readers].filter((reader) => reader.peer === peer);
    const victim =
      ofPeer.length >= this.limits.perPeer
        ? this.#slowest(ofPeer)
        : this.#readers.size >= this.limits.total
          ? this.#slowest(this.#ofBusiestPeers())
          : undefined;
    if (victim !== undefined) {
      this.#readers.delete(victim);
      victim.drop();
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

  /** The readers of the peers reading the most bodies. */
  #ofBusiestPeers(): Reader[] {
    const byPeer = new Map<string, Reader[]>();
    for (const reader of this.#readers) {
      byPeer.set(reader.peer, [...(byPeer.get(reader.peer) ?? []), reader]);
    }
    const most = Math.max(...[...byPeer.values()].map((readers) => readers.length));
    return [...byPeer.values()].filter((readers) => readers.length === most).flat();
  }

  #slowest(readers: readonly Reader[]): Reader | undefined {
    const now = this.now();
    let slowest: Reader | undefined;
    let slowestRate = Infinity;
    let oldest: Reader | undefined;
    // Each peer's readers are in arrival order, so the first of equal rates is the oldest.
    for (const reader of readers) {
      if (oldest === undefined || reader.startedAt < oldest.startedAt) oldest = reader;
      const elapsed = now - reader.startedAt;
      if (elapsed < BODY_READ_GRACE_MS) continue;
      const rate = reader.receivedBytes / elapsed;
      if (rate < slowestRate) {
        slowest = reader;
        slowestRate = rate;
      }
    }
    return slowest ?? oldest;
  }
}
