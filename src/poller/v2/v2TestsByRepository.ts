// One read of an organization-wide test list grouped by repository: each repository id's tests
// under the name the id was given, compared without regard to letter case.
import { repositoryKey } from '../../config/repositoryKey.js';

/** One read of a test list, each repository's tests summarised (`S`). */
export interface TestsByRepository<S> {
  /** By repositoryKey of the repository's name. */
  readonly byRepo: ReadonlyMap<string, S>;
  /** The summary of a repository without tests in the list. */
  readonly none: S;
  /** The repositories with tests in the list, as Trunk spells their names. */
  readonly names: readonly string[];
  /** Ids whose lookup failed at this read: a repository not named yet may be one of them. */
  readonly unresolved: number;
}

/** One repository id's tests in a list read so far, tallied (`T`). */
export interface RepositoryIdTally<T> {
  readonly tally: T;
  /** The rows tallied. */
  rows: number;
}

/**
 * The tallies by repositoryKey of their repository's name (`nameOf` their repository id; two ids
 * of one name merged), the names as Trunk spells them, and how many tests had no name yet.
 */
export function groupByRepository<T>(
  byRepoId: ReadonlyMap<string, RepositoryIdTally<T>>,
  nameOf: (repoId: string) => string | undefined,
  merge: (into: T, from: T) => void,
): { byRepo: Map<string, T>; names: string[]; withoutName: number } {
  const byRepo = new Map<string, T>();
  const names = new Map<string, string>();
  let withoutName = 0;
  for (const [repoId, { tally, rows }] of byRepoId) {
    const name = nameOf(repoId);
    if (name === undefined) {
      withoutName += rows;
      continue;
    }
    const key = repositoryKey(name);
    names.set(key, name);
    const kept = byRepo.get(key);
    if (kept === undefined) byRepo.set(key, tally);
    else merge(kept, tally);
  }
  return { byRepo, names: [...names.values()], withoutName };
}

/** The repositories the reads name, each once however it is cased (the first spelling). */
export function namesIn(reads: readonly { readonly names: readonly string[] }[]): string[] {
  const names = new Map<string, string>();
  for (const name of reads.flatMap((read) => read.names)) {
    if (!names.has(repositoryKey(name))) names.set(repositoryKey(name), name);
  }
  return [...names.values()];
}
