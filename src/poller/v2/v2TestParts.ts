// The parts of a flaky-tests target through API v2, each from its organization-wide list
// (V2TestDirectory): the quarantined tests counted as v1's walk counts them, and the flaky and
// broken tests, which only v2 lists.
import type { TestCollections } from '../../snapshot/testCostTypes.js';
import type { QuarantinedTests, UnhealthyTests } from '../../snapshot/types.js';
import type { ReadAnswer } from '../pollReads.js';
import type { PolledTarget, TestPart } from '../source.js';
import type { V2Readers } from './v2Readers.js';
import { QUARANTINED_TESTS, TEST_COLLECTIONS, UNHEALTHY_TESTS } from './v2Reads.js';
import type { RepositoryTests } from './v2TestDirectory.js';

/** A repository's tests in an organization-wide list as the part of a target they make. */
function partOf<T>({ summary, readAt, failure }: RepositoryTests<T>): ReadAnswer<T> {
  return { value: summary, readAt, failure };
}

/** A flaky-tests target's quarantined tests from the organization's list (QUARANTINED_TESTS). */
export function v2QuarantinePart(
  polled: PolledTarget,
  readers: V2Readers,
): TestPart<QuarantinedTests> {
  return {
    read: QUARANTINED_TESTS,
    answer: async (options) => {
      return partOf(await readers.tests.quarantinedTestsOf(polled.repository.name, options));
    },
  };
}

/** A flaky-tests target's flaky and broken tests from the organization's list (UNHEALTHY_TESTS). */
export function v2UnhealthyPart(
  polled: PolledTarget,
  readers: V2Readers,
): TestPart<UnhealthyTests> {
  return {
    read: UNHEALTHY_TESTS,
    answer: async (options) =>
      partOf(await readers.tests.unhealthyTestsOf(polled.repository.name, options)),
  };
}

/** The organization's test collections (TEST_COLLECTIONS), the same for every flaky-tests target. */
export function v2CollectionsPart(readers: V2Readers): TestPart<TestCollections> {
  return {
    read: TEST_COLLECTIONS,
    answer: async (options) => {
      const read = await readers.tests.testCollections(options);
      if (read === undefined) throw new Error('reads.testCollections is off');
      return read;
    },
  };
}
