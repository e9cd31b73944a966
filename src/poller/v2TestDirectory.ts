// The organization's tests through API v2: one organization-wide list (`GET /v2/tests`), grouped by
// repository, shared by every flaky-tests target of a cycle; each row's `repoId` is named through
// RepositoryNames.
import { repositoryKey } from '../config/repositoryKey.js';
import type { ApiAnomalyKind } from '../trunk/observer.js';
import type { V2TestFilter } from '../trunk/v2Client.js';
import { V2_ENDPOINTS, type V2Endpoint, type V2Test } from '../trunk/v2Schemas.js';
import { RepositoryNames, type V2RepositoryReader } from './v2RepositoryNames.js';
import { SharedRead } from './sharedRead.js';
import type { ReadOptions } from './trunkReader.js';

/** The v2 reads the test lists need (implemented by TrunkV2Client). */
export interface V2TestLister extends V2RepositoryReader {
  listTests(filter: V2TestFilter, what: string, options?: ReadOptions): Promise<V2Test[]>;
  reportAnomaly(endpoint: V2Endpoint, kind: ApiAnomalyKind, count: number): void;
}

/** One read of a test list, by repository. */
interface TestsByRepository {
  /** By repositoryKey of the repository's name. */
  readonly byRepo: ReadonlyMap<string, readonly V2Test[]>;
  /** The repositories with tests in the list, as Trunk spells their names. */
  readonly names: readonly string[];
  /** Ids whose lookup failed at this read: a repository not named yet may be one of them. */
  readonly unresolved: number;
}

/** What the directory's reads use; a reload may change any of it. */
interface TestDirectorySettings {
  readonly lister: V2TestLister;
  readonly maxAgeSeconds: number;
  /** Repository lookups in progress at once (lookupsAtATime()). */
  readonly lookupsAtATime: number;
}

/**
 * The organization's quarantined tests by repository, read at most once per `maxAgeSeconds`
 * however many targets ask (SharedRead: a failed read too). A repository is compared without
 * regard to letter case.
 */
export class V2TestDirectory {
  readonly #names = new RepositoryNames();
  #settings: TestDirectorySettings;
  readonly #quarantined: SharedRead<TestsByRepository>;

  constructor(settings: TestDirectorySettings, now?: () => number) {
    this.#settings = settings;
    this.#quarantined = new SharedRead(
      (options) => this.#read({ quarantineState: 'quarantined' }, 'quarantined tests', options),
      settings.maxAgeSeconds,
      now,
    );
  }

  /** Follows a reload: a new client, interval or bound; what was read stays until it is due. */
  configure(settings: TestDirectorySettings): void {
    this.#settings = settings;
    this.#quarantined.configure(
      (options) => this.#read({ quarantineState: 'quarantined' }, 'quarantined tests', options),
      settings.maxAgeSeconds,
    );
  }

  /**
   * The quarantined tests of `repo`; reads the list when due. Fails when the repository's id is
   * not named yet and some ids of the list could not be looked up: its tests may be theirs.
   */
  async quarantinedTestsOf(repo: string, options: ReadOptions = {}): Promise<readonly V2Test[]> {
    const list = await this.#quarantined.get(options);
    const tests = list.byRepo.get(repositoryKey(repo));
    if (tests === undefined && list.unresolved > 0 && !this.#names.hasNamed(repo)) {
      throw new Error(
        `${list.unresolved} repository id(s) of the quarantined tests could not be looked up (GET /v2/repositories/{id}), and the tests of ${repo} may be theirs; looked up again on the next read`,
      );
    }
    return tests ?? [];
  }

  /** The next read of each list reads again (once, however many ask): an event says they changed. */
  expire(): void {
    this.#quarantined.invalidate();
  }

  /** The repositories (Trunk's spelling) with quarantined tests, from a read when due. */
  async repositoriesWithTests(options: ReadOptions = {}): Promise<readonly string[]> {
    return (await this.#quarantined.get(options)).names;
  }

  async #read(
    filter: V2TestFilter,
    what: string,
    options: ReadOptions,
  ): Promise<TestsByRepository> {
    const { lister, lookupsAtATime } = this.#settings;
    const tests = await lister.listTests(filter, what, options);
    const { unresolved } = await this.#names.resolve(
      tests.map((test) => test.repoId),
      lister,
      lookupsAtATime,
      options,
    );
    const byRepo = new Map<string, V2Test[]>();
    const names = new Map<string, string>();
    let withoutName = 0;
    for (const test of tests) {
      const name = this.#names.nameOf(test.repoId);
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
    if (withoutName > 0) {
      lister.reportAnomaly(V2_ENDPOINTS.listTests, 'unnamed_repository', withoutName);
    }
    return { byRepo, names: [...names.values()], unresolved: unresolved.size };
  }
}
