// Quarantined tests through API v2: one organization-wide list (`GET /v2/tests`), grouped by
// repository, shared by every flaky-tests target of a cycle; each row's `repoId` is resolved to
// `host/owner/name` once through `GET /v2/repositories/{id}` (ids never change).
import { NO_CODEOWNER, type FlakyTestsSnapshot } from '../snapshot/types.js';
import type { V2Repository, V2Test } from '../trunk/v2Schemas.js';
import { quarantineAgeCounts } from './flakyTestsPoll.js';
import { parseTimestampSeconds } from './timestamps.js';
import type { ReadOptions } from './trunkReader.js';
import { sharedRead } from './v2QueueDirectory.js';

/** The v2 reads the quarantine list needs (implemented by TrunkV2Client). */
export interface V2TestLister {
  listQuarantinedTests(options?: ReadOptions): Promise<V2Test[]>;
  getRepository(id: string, options?: ReadOptions): Promise<V2Repository | undefined>;
}

/**
 * The organization's quarantined tests by repository (`host/owner/name`), read at most once per
 * `maxAgeSeconds` however many targets ask (they share the read in progress).
 */
export class V2QuarantineDirectory {
  #byRepo: ReadonlyMap<string, readonly V2Test[]> | undefined;
  #readAt = Number.NEGATIVE_INFINITY;
  #reading: Promise<ReadonlyMap<string, readonly V2Test[]>> | undefined;
  /** repoId → `host/owner/name`, or null for an id Trunk answers 404 for. */
  readonly #repoNames = new Map<string, string | null>();

  constructor(
    private lister: V2TestLister,
    private maxAgeSeconds: number,
    private readonly now: () => number = () => Date.now() / 1000,
  ) {}

  /** Follows a reload: a new client or interval; what was read stays until it is due. */
  configure(lister: V2TestLister, maxAgeSeconds: number): void {
    this.lister = lister;
    this.maxAgeSeconds = maxAgeSeconds;
  }

  /** The quarantined tests of `repo`; reads the list when due. */
  async testsOf(repo: string, options: ReadOptions = {}): Promise<readonly V2Test[]> {
    if (this.#byRepo === undefined || this.now() - this.#readAt >= this.maxAgeSeconds) {
      this.#reading ??= this.#read(options).finally(() => {
        this.#reading = undefined;
      });
      await this.#reading;
    }
    return this.#byRepo?.get(repo) ?? [];
  }

  async #read(options: ReadOptions): Promise<ReadonlyMap<string, readonly V2Test[]>> {
    const shared = sharedRead(options);
    const tests = await this.lister.listQuarantinedTests(shared);
    const unknownIds = [...new Set(tests.map((test) => test.repoId))].filter(
      (id) => !this.#repoNames.has(id),
    );
    const repositories = await Promise.all(
      unknownIds.map((id) => this.lister.getRepository(id, shared)),
    );
    unknownIds.forEach((id, index) => {
      const repository = repositories[index];
      this.#repoNames.set(id, repository ? `${repository.host}/${repository.path}` : null);
    });
    const byRepo = new Map<string, V2Test[]>();
    for (const test of tests) {
      const repo = this.#repoNames.get(test.repoId);
      if (repo === undefined || repo === null) continue;
      const list = byRepo.get(repo);
      if (list === undefined) byRepo.set(repo, [test]);
      else list.push(test);
    }
    this.#byRepo = byRepo;
    this.#readAt = this.now();
    return byRepo;
  }
}

/** One flaky-tests target's snapshot from the organization's list (V2QuarantineDirectory). */
export async function pollQuarantinedTestsV2(request: {
  readonly directory: V2QuarantineDirectory;
  /** `host/owner/name`. */
  readonly repoName: string;
  readonly options: ReadOptions;
  readonly now: () => number;
}): Promise<FlakyTestsSnapshot> {
  const tests = await request.directory.testsOf(request.repoName, request.options);
  const byCodeowner = new Map<string, number>();
  const quarantineTimes: number[] = [];
  for (const test of tests) {
    const named = test.codeowners.filter((owner) => owner !== '');
    const owners = named.length > 0 ? new Set(named) : [NO_CODEOWNER];
    for (const owner of owners) byCodeowner.set(owner, (byCodeowner.get(owner) ?? 0) + 1);
    // Older answers lack quarantinedSince: statusSince says since when the test is as it is.
    const since = parseTimestampSeconds(test.quarantinedSince ?? test.statusSince ?? undefined);
    if (since !== undefined) quarantineTimes.push(since);
  }
  const takenAt = request.now();
  let oldest: number | undefined;
  for (const at of quarantineTimes) if (oldest === undefined || at < oldest) oldest = at;
  return {
    kind: 'flaky_tests',
    repo: request.repoName,
    takenAt,
    quarantined: tests.length,
    byCodeowner,
    oldestQuarantinedAt: oldest,
    ...quarantineAgeCounts(quarantineTimes, takenAt),
  };
}
