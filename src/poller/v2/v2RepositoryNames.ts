// The names of the repositories API v2's tests belong to: a test row carries only `repoId`, which
// `GET /v2/repositories/{id}` turns into `host/owner/name` (v2RepositoryName.ts).
import { repositoryKey } from '../../config/repositoryKey.js';
import { TrunkApiError } from '../../trunk/errors.js';
import { repositoryNameOf } from '../../trunk/v2RepositoryName.js';
import type { V2Repository } from '../../trunk/v2Schemas.js';
import { mapAtMost } from '../lookupFanOut.js';
import type { ReadOptions } from '../readOptions.js';

/** Trunk's `repoId` of tests uploaded without a repository (the nil UUID): no repository's. */
export const NO_REPOSITORY_ID = '00000000-0000-0000-0000-000000000000';

/**
 * Repository lookups one read of a test list makes at most; the ids beyond wait for the next
 * read, so an answer naming thousands of new ids costs a bounded number of calls per interval.
 */
export const MAX_REPOSITORY_LOOKUPS_PER_READ = 1000;

/**
 * Ids answered 400 remembered at most, and the longest remembered (a uuid has 36 characters): an
 * upstream naming new malformed ids at every read, or ids of megabytes, grows the memory no further;
 * an id past either is not remembered, and is looked up again at each read.
 */
export const MAX_MALFORMED_IDS = 10_000;
export const MAX_MALFORMED_ID_LENGTH = 100;

/**
 * Repository names kept at most, the first named forgotten first (and asked again by the next read
 * that lists its id): an upstream naming new repositories at every read grows the memory no
 * further. An id longer than MAX_MALFORMED_ID_LENGTH (no uuid) is not kept: its tests count as
 * `unnamed_repository`.
 */
export const MAX_NAMED_REPOSITORIES = 100_000;

/** The longest an id answered without a usable name waits before it is asked again (unnamedWaitSeconds). */
export const MAX_UNNAMED_WAIT_SECONDS = 3600;

/**
 * Ids answered without a usable name kept waiting at most, the one answered longest ago forgotten
 * first (and asked by the next read that lists it): an upstream naming new
 * unnamed ids at every read grows the memory no further. An id longer than MAX_MALFORMED_ID_LENGTH
 * does not wait.
 */
export const MAX_UNNAMED_IDS = 10_000;

/** The repository reads the names need (implemented by TrunkV2Client). */
export interface V2RepositoryReader {
  getRepository(id: string, options?: ReadOptions): Promise<V2Repository | undefined>;
  hasRepository(providerUrl: string, options?: ReadOptions): Promise<boolean>;
}

/** How a round of lookups is made: how many at once, and how often the lists that ask are read. */
export interface LookupRound {
  readonly atATime: number;
  /** The interval of the reads that list the ids: the first wait of an id answered unnamed. */
  readonly intervalSeconds: number;
}

/** An id Trunk answered without a usable name: such answers since it was last named, and when it may be asked again. */
interface UnnamedAnswers {
  readonly count: number;
  /** Unix seconds. */
  readonly askAgainAt: number;
}

/** What a round of lookups could not name. */
export interface UnnamedRepositories {
  /** Ids whose lookup failed (an error, not an answer): any repository not yet named may be one. */
  readonly unresolved: ReadonlySet<string>;
  /**
   * Ids Trunk answered without a usable name (404, 400, no host, a path not owner/name), asked
   * this round or waiting since such an answer (unnamedWaitSeconds), or the nil UUID.
   */
  readonly unnamed: ReadonlySet<string>;
}

/**
 * repoId → `host/owner/name`: each id named once and kept (ids never change). An id Trunk answered
 * 400 is malformed ("a malformed id is 400": ids are uuids), so it is asked once and remembered as
 * unnamed for the life of the process (whatever the credentials: the form of an id is no
 * organization's). An id answered otherwise without a usable name (404, no host, a path not
 * owner/name) waits before it is asked again (unnamedWaitSeconds); one whose lookup failed (5xx, a
 * timeout, the network: no answer) is looked up again by the next read that lists it.
 */
export class RepositoryNames {
  readonly #maxNamed: number;
  readonly #maxUnnamed: number;
  /** In the order they were named, so the first is the one to forget. */
  readonly #names = new Map<string, string>();
  /** Ids Trunk answered 400: never looked up again (MAX_MALFORMED_IDS at most). */
  readonly #malformed = new Set<string>();
  /** Ids answered without a usable name, in the order of their latest such answer (MAX_UNNAMED_IDS at most). */
  readonly #unnamed = new Map<string, UnnamedAnswers>();
  /** Every repository known to Trunk so far, by repositoryKey: as a list named it, else as configured. */
  readonly #known = new Map<string, string>();
  /** Lookups in flight, so that two lists naming one id share its lookup. */
  readonly #pending = new Map<string, Promise<'named' | 'unnamed' | 'unresolved'>>();
  /** Provider-URL lookups in flight, by repositoryKey, so that two parts of a poll share one. */
  readonly #confirming = new Map<string, Promise<boolean>>();

  constructor(
    /** Unix seconds (the poller's clock). */
    private readonly now: () => number = () => Date.now() / 1000,
    /** At most how many names, and how many waits of unnamed ids, are kept (for tests). */
    maxKept: { readonly named?: number; readonly unnamed?: number } = {},
  ) {
    this.#maxNamed = maxKept.named ?? MAX_NAMED_REPOSITORIES;
    this.#maxUnnamed = maxKept.unnamed ?? MAX_UNNAMED_IDS;
  }

  /** The name of `id` as Trunk spells it; undefined until a lookup named it. */
  nameOf(id: string): string | undefined {
    return this.#names.get(id);
  }

  /** Whether some id was named `repo`, or Trunk confirmed it (compared without regard to letter case). */
  hasNamed(repo: string): boolean {
    return this.#known.has(repositoryKey(repo));
  }

  /** Every repository known so far (hasNamed), for suggesting names near an unknown one. */
  names(): Iterable<string> {
    return this.#known.values();
  }

  /**
   * Whether Trunk knows `repo` (`host/owner/name`): true once an id was named so, else asked by its
   * provider URL (a known one is remembered; an unknown one is asked again next time, since it
   * may be added). Rejects when the lookup fails.
   *
   * Unlike an unnamed id, an unknown repository does not wait: each call is a configured target's
   * poll failing "unknown" (a bounded number, not what a list names), and a repository added to
   * Trunk without quarantined, flaky or broken tests is in no list, so only this call ends its
   * target's failure; a wait would keep it failing up to an hour after Trunk knows it.
   */
  async knows(repo: string, reader: V2RepositoryReader, options: ReadOptions): Promise<boolean> {
    const key = repositoryKey(repo);
    if (this.#known.has(key)) return true;
    let lookup = this.#confirming.get(key);
    if (lookup === undefined) {
      lookup = reader
        .hasRepository(`https://${repo}`, options)
        .then((known) => {
          if (known) this.#known.set(key, repo);
          return known;
        })
        .finally(() => this.#confirming.delete(key));
      this.#confirming.set(key, lookup);
    }
    return lookup;
  }

  /**
   * Looks up the ids not named yet and not waiting after an answer without a usable name,
   * `round.atATime` at once; says which could not be named.
   */
  async resolve(
    ids: Iterable<string>,
    reader: V2RepositoryReader,
    round: LookupRound,
    options: ReadOptions,
  ): Promise<UnnamedRepositories> {
    const unresolved = new Set<string>();
    const unnamed = new Set<string>();
    const toLookUp: string[] = [];
    const now = this.now();
    for (const id of new Set(ids)) {
      if (this.#names.has(id)) continue;
      if (id === NO_REPOSITORY_ID || this.#malformed.has(id) || this.#waits(id, now)) {
        unnamed.add(id);
      } else if (toLookUp.length < MAX_REPOSITORY_LOOKUPS_PER_READ) toLookUp.push(id);
      else unresolved.add(id);
    }
    await mapAtMost(toLookUp, round.atATime, async (id) => {
      let lookup = this.#pending.get(id);
      if (lookup === undefined) {
        lookup = this.#lookUp(id, reader, round, options).finally(() => this.#pending.delete(id));
        this.#pending.set(id, lookup);
      }
      const outcome = await lookup;
      if (outcome === 'unnamed') unnamed.add(id);
      else if (outcome === 'unresolved') unresolved.add(id);
    });
    return { unresolved, unnamed };
  }

  /**
   * New Trunk settings (URL, key): every id answered without a usable name is asked at the next
   * read, since the old settings' answers may not hold (a 404 is also another organization's).
   */
  forgetUnnamed(): void {
    this.#unnamed.clear();
  }

  #waits(id: string, now: number): boolean {
    const answers = this.#unnamed.get(id);
    return answers !== undefined && now < answers.askAgainAt;
  }

  async #lookUp(
    id: string,
    reader: V2RepositoryReader,
    round: LookupRound,
    options: ReadOptions,
  ): Promise<'named' | 'unnamed' | 'unresolved'> {
    let repository: V2Repository | undefined;
    try {
      repository = await reader.getRepository(id, options);
    } catch (error) {
      if (options.signal?.aborted === true) throw error;
      // A malformed id is an answer (400, as a 404 is), and one that stays true: it is not asked
      // again. Any other failure (5xx, a timeout, the network) says nothing of the id.
      if (!(error instanceof TrunkApiError) || error.status !== 400) return 'unresolved';
      if (this.#malformed.size < MAX_MALFORMED_IDS && id.length <= MAX_MALFORMED_ID_LENGTH) {
        this.#malformed.add(id);
      }
      return 'unnamed';
    }
    const name = repository === undefined ? undefined : repositoryNameOf(repository);
    if (name === undefined) {
      if (id.length <= MAX_MALFORMED_ID_LENGTH) {
        const count = (this.#unnamed.get(id)?.count ?? 0) + 1;
        const askAgainAt = this.now() + unnamedWaitSeconds(count, round.intervalSeconds);
        remember(this.#unnamed, id, { count, askAgainAt }, this.#maxUnnamed);
      }
      return 'unnamed';
    }
    this.#unnamed.delete(id);
    remember(this.#names, id, name, id.length <= MAX_MALFORMED_ID_LENGTH ? this.#maxNamed : 0);
    const key = repositoryKey(name);
    if (!this.#known.has(key)) remember(this.#known, key, name, this.#maxNamed);
    return 'named';
  }
}

/**
 * How long an id waits after its `count`-th answer without a usable name (404, no host, a path not
 * owner/name) before it is asked again: the interval of the lists' reads, doubled at each further
 * such answer, at most MAX_UNNAMED_WAIT_SECONDS. A list is read again no sooner than its interval
 * after its read ended (SharedRead), so the first wait ends by the next read: one 404 (a repository
 * Trunk is still setting up) costs what it always did. An id answered so at every lookup is asked
 * at the 1st, 2nd, 4th, 8th… read of a steady cadence, then hourly: a deleted repository costs one
 * lookup an hour rather than one a read, and one that comes back is named within the hour.
 */
function unnamedWaitSeconds(count: number, intervalSeconds: number): number {
  return Math.min(intervalSeconds * 2 ** (count - 1), MAX_UNNAMED_WAIT_SECONDS);
}

/**
 * Sets `key` in `map`, first forgetting its oldest entries so that it keeps at most `max`; with a
 * `max` of 0 (an id too long to keep) only forgets `key`, the others staying.
 */
function remember<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key);
  if (max <= 0) return;
  for (const oldest of map.keys()) {
    if (map.size < max) break;
    map.delete(oldest);
  }
  map.set(key, value);
}
