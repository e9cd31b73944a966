// The organization's test collections through API v2 (`GET /v2/test-collections`): one call,
// organization-wide, made once per flaky-tests interval and shared by every flaky-tests target.
import { silentLogger, type Logger } from '../../log/logger.js';
import type { TestCollection, TestCollections } from '../../snapshot/testCostTypes.js';
import type { V2TestCollectionsPage } from '../../trunk/v2Client.js';
import { V2_MAX_TEST_COLLECTIONS } from '../../trunk/v2Schemas.js';
import { failureFields } from '../failureHint.js';
import type { ReadOptions } from '../readOptions.js';
import { SharedRead, type SharedAnswer, type SharedReadTiming } from '../sharedRead.js';

/** The v2 read of the test collections (implemented by TrunkV2Client). */
export interface V2TestCollectionLister {
  listTestCollections(options?: ReadOptions): Promise<V2TestCollectionsPage>;
}

/** What a read of the test collections needs besides the client. */
export interface TestCollectionsReadPlan {
  readonly now: () => number;
  readonly logger: Logger;
}

/**
 * The organization's test collections, each name once: the newest V2_MAX_TEST_COLLECTIONS only,
 * so the read is one call however many there are when Trunk fills its pages; a name listed again
 * keeps the newest collection of that name ("newest first"). What is left out is logged.
 */
export async function readTestCollections(
  client: V2TestCollectionLister,
  plan: TestCollectionsReadPlan,
  options: ReadOptions,
): Promise<TestCollections> {
  const page = await client.listTestCollections(options);
  const byName = new Map<string, TestCollection>();
  const repeated = new Set<string>();
  // A page longer than the limit asked for is read as far as the limit, as if it had said more.
  const rows = page.collections.slice(0, V2_MAX_TEST_COLLECTIONS);
  for (const { name, testCaseCount, quarantineEnabled } of rows) {
    if (byName.has(name)) repeated.add(name);
    else byName.set(name, { name, testCases: testCaseCount, quarantineEnabled });
  }
  if (page.more || rows.length < page.collections.length) {
    plan.logger.warn(
      `the organization has more than ${V2_MAX_TEST_COLLECTIONS} test collections (GET /v2/test-collections): the newest ${V2_MAX_TEST_COLLECTIONS} are exported, the rest left out`,
    );
  }
  if (repeated.size > 0) {
    plan.logger.warn(
      { collections: [...repeated] },
      'test collections share a name (GET /v2/test-collections): the newest of each name is exported, the others left out',
    );
  }
  return { collections: [...byName.values()], readAt: plan.now() };
}

/**
 * The organization's test collections, read at most once per interval however many targets ask
 * (SharedRead: a failed read too, logged once); a reload may change the client and the timing.
 */
export class SharedTestCollections {
  readonly #shared: SharedRead<TestCollections>;
  readonly #read: (options: ReadOptions) => Promise<TestCollections>;
  #client: V2TestCollectionLister;
  #logger: Logger;

  constructor(
    client: V2TestCollectionLister,
    timing: SharedReadTiming,
    logger: Logger | undefined,
    now: () => number,
  ) {
    this.#client = client;
    this.#logger = logger ?? silentLogger();
    this.#read = (options) =>
      readTestCollections(this.#client, { now, logger: this.#logger }, options);
    this.#shared = new SharedRead(this.#read, timing, now, (error) => {
      this.#logger.warn(
        failureFields(error),
        `the organization's test collections could not be read (${error.message}); their last read stays until polling.staleAfterSeconds`,
      );
    });
  }

  /** Follows a reload: what was read stays until it is due. */
  configure(client: V2TestCollectionLister, timing: SharedReadTiming, logger?: Logger): void {
    this.#client = client;
    this.#logger = logger ?? silentLogger();
    this.#shared.configure(this.#read, timing);
  }

  /** The last good read when younger than the interval, else a new one; rejects once stale. */
  get(options: ReadOptions): Promise<SharedAnswer<TestCollections>> {
    return this.#shared.get(options);
  }
}
