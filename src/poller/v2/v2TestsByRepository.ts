// One read of an organization-wide test list grouped by repository: each test under the name its
// `repoId` was given, compared without regard to letter case.
import { repositoryKey } from '../../config/repositoryKey.js';
import type { V2Test } from '../../trunk/v2Schemas.js';

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

/**
 * The tests by repositoryKey of their repository's name (`nameOf` their `repoId`), the names as
 * Trunk spells them, and how many tests had no name yet.
 */
export function groupByRepository(
  tests: readonly V2Test[],
  nameOf: (repoId: string) => string | undefined,
): { byRepo: Map<string, V2Test[]>; names: string[]; withoutName: number } {
  const byRepo = new Map<string, V2Test[]>();
  const names = new Map<string, string>();
  let withoutName = 0;
  for (const test of tests) {
    const name = nameOf(test.repoId);
    if (name === undefined) {
      withoutName += 1;
      continue;
    }
    const key = repositoryKey(name);
    names.set(key, name);
    const list = byRepo.get(key);
    if (list === undefined) byRepo.set(key, [test]);
    else list.push(test);
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
