// The organization's test collections through API v2 (`GET /v2/test-collections`): one call,
// organization-wide, made once per flaky-tests interval and shared by every flaky-tests target.
import type { Logger } from '../log/logger.js';
import type { TestCollection, TestCollections } from '../snapshot/testCostTypes.js';
import type { V2TestCollectionsPage } from '../trunk/v2Client.js';
import { V2_MAX_TEST_COLLECTIONS } from '../trunk/v2Schemas.js';
import type { ReadOptions } from './trunkReader.js';

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
 * The organization's test collections, each name once: the first page only (the newest
 * V2_MAX_TEST_COLLECTIONS), so the read is one call however many there are; a name listed again
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
  for (const { name, testCaseCount, quarantineEnabled } of page.collections) {
    if (byName.has(name)) repeated.add(name);
    else byName.set(name, { name, testCases: testCaseCount, quarantineEnabled });
  }
  if (page.more) {
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
