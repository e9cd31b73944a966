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
 * an id past either is looked up again at each read, as before it was remembered.
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

/** The repository reads the names need (implemented by TrunkV2Client). */
export interface V2RepositoryReader {
  getRepository(id: string, options?: ReadOptions): Promise<V2Repository | undefined>;
  hasRepository(providerUrl: string, options?: ReadOptions): Promise<boolean>;
}

/** What a round of lookups could not name. */
export interface UnnamedRepositories {
  /** Ids whose lookup failed (an error, not an answer): any repository not yet named may be one. */
  readonly unresolved: ReadonlySet<string>;
  /** Ids Trunk answered without a usable name (404, 400, no host, a path not owner/name), or the nil UUID. */
  readonly unnamed: ReadonlySet<string>;
}

/**
 * repoId → `host/owner/name`: each id named once and kept (ids never change). An id Trunk answered
 * 400 is malformed ("a malformed id is 400": ids are uuids), so it is asked once and remembered as
 * unnamed for the life of the process (whatever the credentials: the form of an id is no
 * organization's); any other id that could not be named (404, an error) is looked up again by the
 * next read that lists it.
 */
export class RepositoryNames {
  readonly #maxNamed: number;
  /** In the order they were named, so the first is the one to forget. */
  readonly #names = new Map<string, string>();
  /** Ids Trunk answered 400: never looked up again (MAX_MALFORMED_IDS at most). */
  readonly #malformed = new Set<string>();
  /** Every repository known to Trunk so far, by repositoryKey: as a list named it, else as configured. */
  readonly #known = new Map<string, string>();
  /** Lookups in flight, so that two lists naming one id share its lookup. */
  readonly #pending = new Map<string, Promise<'named' | 'unnamed' | 'unresolved'>>();
  /** Provider-URL lookups in flight, by repositoryKey, so that two parts of a poll share one. */
  readonly #confirming = new Map<string, Promise<boolean>>();

  constructor(maxNamed = MAX_NAMED_REPOSITORIES) {
    this.#maxNamed = maxNamed;
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

  /** Looks up the ids not named yet, `atATime` at once; says which could not be named. */
  async resolve(
    ids: Iterable<string>,
    reader: V2RepositoryReader,
    atATime: number,
    options: ReadOptions,
  ): Promise<UnnamedRepositories> {
    const unresolved = new Set<string>();
    const unnamed = new Set<string>();
    const toLookUp: string[] = [];
    for (const id of new Set(ids)) {
      if (this.#names.has(id)) continue;
      if (id === NO_REPOSITORY_ID || this.#malformed.has(id)) unnamed.add(id);
      else if (toLookUp.length < MAX_REPOSITORY_LOOKUPS_PER_READ) toLookUp.push(id);
      else unresolved.add(id);
    }
    await mapAtMost(toLookUp, atATime, async (id) => {
      let lookup = this.#pending.get(id);
      if (lookup === undefined) {
        lookup = this.#lookUp(id, reader, options).finally(() => this.#pending.delete(id));
        this.#pending.set(id, lookup);
      }
      const outcome = await lookup;
      if (outcome === 'unnamed') unnamed.add(id);
      else if (outcome === 'unresolved') unresolved.add(id);
    });
    return { unresolved, unnamed };
  }

  async #lookUp(
    id: string,
    reader: V2RepositoryReader,
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
    if (name === undefined) return 'unnamed';
    remember(this.#names, id, name, id.length <= MAX_MALFORMED_ID_LENGTH ? this.#maxNamed : 0);
    const key = repositoryKey(name);
    if (!this.#known.has(key)) remember(this.#known, key, name, this.#maxNamed);
    return 'named';
  }
}

/** Sets `key` in `map`, first forgetting its oldest entries so that it keeps at most `max`. */
function remember(map: Map<string, string>, key: string, value: string, max: number): void {
  map.delete(key);
  for (const oldest of map.keys()) {
    if (map.size < max) break;
    map.delete(oldest);
  }
  if (max > 0) map.set(key, value);
}
