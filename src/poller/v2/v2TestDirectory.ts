// The organization's tests through API v2: organization-wide lists (`GET /v2/tests`: the quarantined
// tests, the flaky and broken ones), grouped by repository and summarised as read, and the test
// collections, each shared by every flaky-tests target of a cycle; each row's `repoId` is named
// through RepositoryNames.
import { repositoryKey } from '../../config/repositoryKey.js';
import type { ExporterConfig } from '../../config/types.js';
import type { Logger } from '../../log/logger.js';
import type { TestCollections } from '../../snapshot/testCostTypes.js';
import type { QuarantinedTests, UnhealthyTests } from '../../snapshot/types.js';
import type { V2AnomalyReporter } from '../../trunk/v2Client.js';
import { organizationTarget } from '../../trunk/v2Requests.js';
import type { V2TestFilter } from '../../trunk/v2TestList.js';
import { V2_ENDPOINTS, type V2Test } from '../../trunk/v2Schemas.js';
import { SeenIds } from '../../trunk/seenIds.js';
import { nearestNames } from './nearestNames.js';
import {
  groupByRepository,
  namesIn,
  type RepositoryIdTally,
  type TestsByRepository,
} from './v2TestsByRepository.js';
import {
  QUARANTINE_TALLY,
  UNHEALTHY_TALLY,
  type ListRead,
  type ListTally,
} from './v2TestSummaries.js';
import {
  MAX_REPOSITORY_LOOKUPS_PER_READ,
  RepositoryNames,
  type V2RepositoryReader,
} from './v2RepositoryNames.js';
import { SharedRead, type SharedAnswer, type SharedReadTiming } from '../sharedRead.js';
import type { ReadOptions } from '../readOptions.js';
import { SharedTestCollections, type V2TestCollectionLister } from './v2TestCollectionsRead.js';

/** What the anomaly log names for odd rows of the organization's test lists. */
const TEST_LIST_TARGET = organizationTarget(V2_ENDPOINTS.listTests);

/** The v2 reads the test lists need (implemented by TrunkV2Client). */
export interface V2TestLister
  extends V2RepositoryReader, V2TestCollectionLister, V2AnomalyReporter {
  listTests(
    filter: V2TestFilter,
    what: string,
    take: (tests: readonly V2Test[]) => void,
    options?: ReadOptions,
  ): Promise<void>;
}

/** A repository's tests in one organization-wide list, summarised, as of its last good read. */
export interface RepositoryTests<S> {
  readonly summary: S;
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
  /** Which optional reads are made (the tests' metrics, the test collections); none when absent. */
  readonly reads?: ExporterConfig['reads'];
  /** Where a failed read of the test collections is told; nowhere when absent. */
  readonly logger?: Logger;
}

/** Each list's summary of one repository's tests. */
interface ListSummaries {
  readonly quarantined: QuarantinedTests;
  readonly unhealthy: UnhealthyTests;
}
export type ListName = keyof ListSummaries;

/** The organization-wide test lists the directory reads, each once per interval. */
const LISTS: {
  readonly [L in ListName]: { readonly filter: V2TestFilter; readonly what: string };
} = {
  quarantined: { filter: { quarantineState: 'quarantined' }, what: 'quarantined tests' },
  unhealthy: { filter: { statuses: ['flaky', 'broken'] }, what: 'flaky and broken tests' },
};

/**
 * The organization's quarantined tests, and its flaky and broken ones, by repository: each list
 * read at most once per `maxAgeSeconds` however many targets ask (SharedRead: a failed read too),
 * each failing alone. A repository is compared without regard to letter case.
 */
export class V2TestDirectory {
  readonly #names: RepositoryNames;
  #settings: TestDirectorySettings;
  readonly #lists: { readonly [L in ListName]: SharedRead<TestsByRepository<ListSummaries[L]>> };
  readonly #collections: SharedTestCollections;
  readonly #now: () => number;
  /** The different tests each list's last walk met: the next walk's table is sized for them. */
  readonly #testsMet: { [L in ListName]: number } = { quarantined: 0, unhealthy: 0 };

  constructor(settings: TestDirectorySettings, now: () => number = () => Date.now() / 1000) {
    this.#settings = settings;
    this.#now = now;
    this.#names = new RepositoryNames(now);
    const readers = this.#readers();
    this.#lists = {
      quarantined: new SharedRead(readers.quarantined, timingOf(settings), now),
      unhealthy: new SharedRead(readers.unhealthy, timingOf(settings), now),
    };
    this.#collections = new SharedTestCollections(
      settings.lister,
      timingOf(settings),
      settings.logger,
      now,
    );
  }

  /** Follows a reload: a new client, interval or bound; what was read stays until it is due. */
  configure(settings: TestDirectorySettings): void {
    this.#settings = settings;
    const readers = this.#readers();
    this.#lists.quarantined.configure(readers.quarantined, timingOf(settings));
    this.#lists.unhealthy.configure(readers.unhealthy, timingOf(settings));
    this.#collections.configure(settings.lister, timingOf(settings), settings.logger);
  }

  /**
   * The organization's test collections, read when due (SharedRead: once per interval however
   * many targets ask, a failed read too); undefined when reads.testCollections is off. Rejects
   * once no read is younger than staleAfterSeconds.
   */
  async testCollections(
    options: ReadOptions = {},
  ): Promise<SharedAnswer<TestCollections> | undefined> {
    if (this.#settings.reads?.testCollections !== true) return undefined;
    return this.#collections.get(options);
  }

  /**
   * The quarantined tests of `repo`; reads the list when due. Fails when no read of the list is
   * young enough (SharedRead), when the repository's id is not named yet and some ids of the list
   * could not be looked up (its tests may be theirs), and when Trunk does not know the repository.
   */
  quarantinedTestsOf(
    repo: string,
    options: ReadOptions = {},
  ): Promise<RepositoryTests<QuarantinedTests>> {
    return this.#testsOf('quarantined', repo, options);
  }

  /** The flaky and broken tests of `repo`, as quarantinedTestsOf reads the quarantined ones. */
  unhealthyTestsOf(
    repo: string,
    options: ReadOptions = {},
  ): Promise<RepositoryTests<UnhealthyTests>> {
    return this.#testsOf('unhealthy', repo, options);
  }

  /**
   * The lists are out of date (an event says they changed, or the credentials changed), or `only`
   * that one (the flaky and broken tests, asked with another metrics period): the next read of
   * each reads again (once, however many ask).
   */
  expire(only?: ListName): void {
    for (const [name, list] of Object.entries(this.#lists)) {
      if (only === undefined || name === only) list.invalidate();
    }
  }

  /**
   * New Trunk settings (URL, key): every list is read again when next asked, and every repository
   * id the old settings' answers left unnamed is looked up again then, not after its wait.
   */
  clientChanged(): void {
    this.#names.forgetUnnamed();
    this.expire();
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

  async #testsOf<L extends ListName>(
    list: L,
    repo: string,
    options: ReadOptions,
  ): Promise<RepositoryTests<ListSummaries[L]>> {
    const shared: SharedRead<TestsByRepository<ListSummaries[L]>> = this.#lists[list];
    const { value, readAt, failure } = await shared.get(options);
    const summary = value.byRepo.get(repositoryKey(repo));
    if (summary !== undefined) return { summary, readAt, failure };
    if (!this.#names.hasNamed(repo)) {
      if (value.unresolved > 0) {
        throw new Error(
          `${value.unresolved} repository id(s) of the organization's ${LISTS[list].what} are not named yet (GET /v2/repositories/{id} failed, or waits: at most ${String(MAX_REPOSITORY_LOOKUPS_PER_READ)} are looked up a read), and the tests of ${repo} may be theirs; looked up on the next read`,
        );
      }
      await this.#requireKnown(repo, options);
    }
    return { summary: value.none, readAt, failure };
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

  #readers(): {
    readonly [L in ListName]: (
      options: ReadOptions,
    ) => Promise<TestsByRepository<ListSummaries[L]>>;
  } {
    return {
      quarantined: (options) =>
        this.#read(LISTS.quarantined.filter, 'quarantined', QUARANTINE_TALLY, options),
      unhealthy: (options) => {
        // The flaky and broken tests carry their metrics at no extra call (reads.testMetricsPeriod).
        const period = this.#settings.reads?.testMetricsPeriod ?? 'off';
        const { filter } = LISTS.unhealthy;
        const withMetrics = period === 'off' ? filter : { ...filter, metricsPeriod: period };
        return this.#read(withMetrics, 'unhealthy', UNHEALTHY_TALLY, options);
      },
    };
  }

  /**
   * The list read by `filter`, each repository's tests tallied page by page as the walk meets them
   * and summarised: no parsed row outlives its page.
   */
  async #read<T, S>(
    filter: V2TestFilter,
    name: ListName,
    list: ListTally<T, S>,
    options: ReadOptions,
  ): Promise<TestsByRepository<S>> {
    const { lister, lookupsAtATime, maxAgeSeconds } = this.#settings;
    const { what } = LISTS[name];
    const byRepoId = new Map<string, RepositoryIdTally<T>>();
    // Cursors page over a list that moves while it is walked: a test may come twice.
    const seen = new SeenIds(this.#testsMet[name]);
    await lister.listTests(
      filter,
      what,
      (tests) => {
        for (const test of tests) {
          // A row the filter excludes (the test changed as the page was read) is none of the
          // list's: it must not hide the test's later row, which the list may give on a later page.
          if (!list.lists(test)) continue;
          // A test listed again keeps its first row, though the later page is the newer read: the
          // walk tallies page by page and keeps no row, so a row counted cannot be taken back. The
          // first is a state the test was in during the walk; the next walk reads it anew.
          if (test.id !== undefined && test.id !== '' && !seen.firstTime(test.id)) continue;
          let ofRepo = byRepoId.get(test.repoId);
          if (ofRepo === undefined) {
            byRepoId.set(test.repoId, (ofRepo = { tally: list.start(), rows: 0 }));
          }
          list.add(ofRepo.tally, test);
          ofRepo.rows += 1;
        }
      },
      options,
    );
    this.#testsMet[name] = seen.count;
    const { unresolved } = await this.#names.resolve(
      [...byRepoId.keys()],
      lister,
      { atATime: lookupsAtATime, intervalSeconds: maxAgeSeconds },
      options,
    );
    const { byRepo, names, withoutName } = groupByRepository(
      byRepoId,
      (id) => this.#names.nameOf(id),
      list.merge,
    );
    if (withoutName > 0) {
      lister.reportAnomaly(
        V2_ENDPOINTS.listTests,
        'unnamed_repository',
        withoutName,
        TEST_LIST_TARGET,
      );
    }
    const read: ListRead = {
      readAt: this.#now(),
      metricsPeriod: filter.metricsPeriod,
      unknownStatuses: (count) => {
        lister.reportAnomaly(V2_ENDPOINTS.listTests, 'unknown_value', count, TEST_LIST_TARGET);
      },
    };
    return {
      byRepo: new Map(Array.from(byRepo, ([key, tally]) => [key, list.summarise(tally, read)])),
      none: list.summarise(list.start(), read),
      names,
      unresolved: unresolved.size,
    };
  }
}

function timingOf(settings: TestDirectorySettings): SharedReadTiming {
  return {
    maxAgeSeconds: settings.maxAgeSeconds,
    staleAfterSeconds: settings.staleAfterSeconds ?? 0,
  };
}
