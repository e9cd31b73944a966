// The organization's tests through API v2: organization-wide lists (`GET /v2/tests`: the quarantined
// tests, the flaky and broken ones), grouped by repository, shared by every flaky-tests target of a
// cycle; each row's `repoId` is named through RepositoryNames.
import { repositoryKey } from '../../config/repositoryKey.js';
import type { ApiAnomalyKind } from '../../trunk/observer.js';
import type { V2TestFilter } from '../../trunk/v2Client.js';
import { V2_ENDPOINTS, type V2Endpoint, type V2Test } from '../../trunk/v2Schemas.js';
import { nearestNames } from './nearestNames.js';
import { RepositoryNames, type V2RepositoryReader } from './v2RepositoryNames.js';
import { SharedRead, type SharedReadTiming } from '../sharedRead.js';
import type { ReadOptions } from '../readOptions.js';

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

/** A repository's tests in one organization-wide list, as of its last good read. */
export interface RepositoryTests {
  readonly tests: readonly V2Test[];
  /** Unix seconds when the list was read. */
  readonly readAt: number;
  /** The error of the list's latest read, when it failed after readAt; undefined when it did not. */
  readonly failure: Error | undefined;
}

/** What the directory's reads use; a reload may change any of it. */
interface TestDirectorySettings {
  readonly lister: V2TestLister;
  readonly maxAgeSeconds: number;
  /** How long a list's last good read outlives failed reads; 0 (the default) not at all. */
  readonly staleAfterSeconds?: number;
  /** Repository lookups in progress at once (lookupsAtATime()). */
  readonly lookupsAtATime: number;
}

/** The organization-wide test lists the directory reads, each once per interval. */
const LISTS = {
  quarantined: { filter: { quarantineState: 'quarantined' }, what: 'quarantined tests' },
  unhealthy: { filter: { statuses: ['flaky', 'broken'] }, what: 'flaky and broken tests' },
} as const satisfies Record<string, { filter: V2TestFilter; what: string }>;
type ListName = keyof typeof LISTS;

/**
 * The organization's quarantined tests, and its flaky and broken ones, by repository: each list
 * read at most once per `maxAgeSeconds` however many targets ask (SharedRead: a failed read too),
 * each failing alone. A repository is compared without regard to letter case.
 */
export class V2TestDirectory {
  readonly #names = new RepositoryNames();
  #settings: TestDirectorySettings;
  readonly #lists: Readonly<Record<ListName, SharedRead<TestsByRepository>>>;

  constructor(settings: TestDirectorySettings, now?: () => number) {
    this.#settings = settings;
    const shared = (list: ListName) => new SharedRead(this.#reader(list), timingOf(settings), now);
    this.#lists = { quarantined: shared('quarantined'), unhealthy: shared('unhealthy') };
  }

  /** Follows a reload: a new client, interval or bound; what was read stays until it is due. */
  configure(settings: TestDirectorySettings): void {
    this.#settings = settings;
    for (const list of Object.keys(LISTS) as ListName[]) {
      this.#lists[list].configure(this.#reader(list), timingOf(settings));
    }
  }

  /**
   * The quarantined tests of `repo`; reads the list when due. Fails when no read of the list is
   * young enough (SharedRead), when the repository's id is not named yet and some ids of the list
   * could not be looked up (its tests may be theirs), and when Trunk does not know the repository.
   */
  quarantinedTestsOf(repo: string, options: ReadOptions = {}): Promise<RepositoryTests> {
    return this.#testsOf('quarantined', repo, options);
  }

  /** The flaky and broken tests of `repo`, as quarantinedTestsOf reads the quarantined ones. */
  unhealthyTestsOf(repo: string, options: ReadOptions = {}): Promise<RepositoryTests> {
    return this.#testsOf('unhealthy', repo, options);
  }

  /**
   * The lists are out of date (an event says they changed, or the credentials changed): the next
   * read of each reads again (once, however many ask).
   */
  expire(): void {
    for (const list of Object.values(this.#lists)) list.invalidate();
  }

  /**
   * The repositories (Trunk's spelling) with quarantined, flaky or broken tests, from reads when
   * due; fails when the latest read of either list failed.
   */
  async repositoriesWithTests(options: ReadOptions = {}): Promise<readonly string[]> {
    const answers = await Promise.all([
      this.#lists.quarantined.get(options),
      this.#lists.unhealthy.get(options),
    ]);
    for (const { failure } of answers) if (failure !== undefined) throw failure;
    return namesIn(answers.map(({ value }) => value));
  }

  /** The repositories (Trunk's spelling) the last successful read of either list named; no read. */
  repositoriesRead(): readonly string[] {
    return namesIn(Object.values(this.#lists).flatMap((list) => list.latest() ?? []));
  }

  async #testsOf(list: ListName, repo: string, options: ReadOptions): Promise<RepositoryTests> {
    const { value, readAt, failure } = await this.#lists[list].get(options);
    const tests = value.byRepo.get(repositoryKey(repo));
    if (tests !== undefined) return { tests, readAt, failure };
    if (!this.#names.hasNamed(repo)) {
      if (value.unresolved > 0) {
        throw new Error(
          `${value.unresolved} repository id(s) of the organization's ${LISTS[list].what} could not be looked up (GET /v2/repositories/{id}), and the tests of ${repo} may be theirs; looked up again on the next read`,
        );
      }
      await this.#requireKnown(repo, options);
    }
    return { tests: [], readAt, failure };
  }

  /** Fails, naming the nearest repositories Trunk has, when Trunk does not know `repo`. */
  async #requireKnown(repo: string, options: ReadOptions): Promise<void> {
    const url = `https://${repo}`;
    let known: boolean;
    try {
      known = await this.#names.knows(repo, this.#settings.lister, options);
    } catch (error) {
      throw new Error(
        `could not ask Trunk whether it knows ${repo} (GET /v2/repositories?providerUrl=${url}): ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
    if (known) return;
    const nearest = nearestNames(repo, this.#names.names());
    throw new Error(
      `Trunk API v2 knows no repository ${repo} (GET /v2/repositories?providerUrl=${url} answered 404): check that the repository is right and that the API key belongs to its organization; ` +
        (nearest.length === 0
          ? 'no repository its test lists name is near that name'
          : `nearest names its test lists have: ${nearest.join(', ')}`),
    );
  }

  #reader(list: ListName): (options: ReadOptions) => Promise<TestsByRepository> {
    return (options) => this.#read(LISTS[list].filter, LISTS[list].what, options);
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

/** The repositories the reads name, each once however it is cased (the first spelling). */
function namesIn(reads: readonly TestsByRepository[]): string[] {
  const names = new Map<string, string>();
  for (const name of reads.flatMap((read) => read.names)) {
    if (!names.has(repositoryKey(name))) names.set(repositoryKey(name), name);
  }
  return [...names.values()];
}

function timingOf(settings: TestDirectorySettings): SharedReadTiming {
  return {
    maxAgeSeconds: settings.maxAgeSeconds,
    staleAfterSeconds: settings.staleAfterSeconds ?? 0,
  };
}
