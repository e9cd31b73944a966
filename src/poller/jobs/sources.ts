// Each target's source, chosen once from the credentials (config/targetApis.ts): the same choice
// gives the poll jobs each target's poll and the API budget the reads to sum.
import {
  credentialsOf,
  targetApis,
  type ApiVersion,
  type CredentialsSet,
} from '../../config/targetApis.js';
import type { DiscoverySettings } from '../../config/types.js';
import { readsTestCollections } from '../../config/targets.js';
import type { PollKind } from '../../snapshot/types.js';
import type { ReadDeclaration } from '../readDeclaration.js';
import { flakyTestsSource, type Poll, type PolledTarget, type TestPart } from '../source.js';
import type { LookupMemories } from '../v1/lookupMemories.js';
import type { TrunkReader } from '../v1/trunkReader.js';
import { V1_QUARANTINE } from '../v1/v1Reads.js';
import { V1_QUEUE_READS, v1QuarantinePart, v1QueueSource } from '../v1/v1Sources.js';
import { V2_QUEUE_READS, v2QueueSource } from '../v2/v2QueueSource.js';
import type { V2Readers } from '../v2/v2Readers.js';
import { QUARANTINED_TESTS, QUEUE_LIST, TEST_COLLECTIONS, UNHEALTHY_TESTS } from '../v2/v2Reads.js';
import { v2CollectionsPart, v2QuarantinePart, v2UnhealthyPart } from '../v2/v2TestParts.js';

/** What the sources read with. */
export interface SourceReaders {
  readonly v1: TrunkReader;
  /** API v2's client and shared reads; needed with an API key. */
  readonly v2: V2Readers | undefined;
  /** Every merge queue's remembered PR lookups (API v1). */
  readonly lookupMemories: LookupMemories;
  /** PR lookups one poll keeps in progress (API v1). */
  readonly lookupsAtATime: number;
}

function v2Of(readers: SourceReaders): V2Readers {
  if (readers.v2 === undefined)
    throw new Error('an API key is set, but no API v2 readers were given');
  return readers.v2;
}

/** A source of a merge queue: its reads, and its poll of a target. */
interface QueueSource {
  readonly reads: readonly ReadDeclaration[];
  readonly poll: (polled: PolledTarget, readers: SourceReaders) => Poll;
}

/** A source of one part of a flaky-tests target. */
interface PartSource<T> {
  readonly read: ReadDeclaration;
  readonly part: (polled: PolledTarget, readers: SourceReaders) => TestPart<T>;
}

const QUEUE_SOURCES: Readonly<Record<ApiVersion, QueueSource>> = {
  v1: {
    reads: V1_QUEUE_READS,
    poll: (polled, readers) =>
      v1QueueSource(polled, {
        reader: readers.v1,
        lookupMemory: readers.lookupMemories.of(
          polled.target,
          polled.config.polling.pullRequestRecheckSeconds,
        ),
        lookupsAtATime: readers.lookupsAtATime,
      }),
  },
  v2: { reads: V2_QUEUE_READS, poll: (polled, readers) => v2QueueSource(polled, v2Of(readers)) },
};

const QUARANTINE_SOURCES = {
  v1: { read: V1_QUARANTINE, part: (polled, readers) => v1QuarantinePart(polled, readers.v1) },
  v2: {
    read: QUARANTINED_TESTS,
    part: (polled, readers) => v2QuarantinePart(polled, v2Of(readers)),
  },
} as const satisfies Record<ApiVersion, PartSource<unknown>>;

const UNHEALTHY_SOURCE = {
  read: UNHEALTHY_TESTS,
  part: (polled, readers) => v2UnhealthyPart(polled, v2Of(readers)),
} as const satisfies PartSource<unknown>;

/** The reads the polls of a target make under `credentials`. */
export function readsOf(
  credentials: CredentialsSet,
  target: { readonly kind: PollKind; readonly discovered?: boolean },
): readonly ReadDeclaration[] {
  const apis = targetApis(credentials, target);
  if (apis.kind === 'merge_queue') return QUEUE_SOURCES[apis.queue].reads;
  // The collections come with the key, as the flaky and broken tests do (off: no calls, no cost).
  const v2Only = apis.unhealthy === undefined ? [] : [UNHEALTHY_SOURCE.read, TEST_COLLECTIONS];
  return [QUARANTINE_SOURCES[apis.quarantine].read, ...v2Only];
}

/** One poll of a target, from the source its credentials choose. */
export function pollOf(polled: PolledTarget, readers: SourceReaders): Poll {
  const apis = targetApis(credentialsOf(polled.config), polled.target);
  if (apis.kind === 'merge_queue') return QUEUE_SOURCES[apis.queue].poll(polled, readers);
  return flakyTestsSource(
    polled,
    QUARANTINE_SOURCES[apis.quarantine].part(polled, readers),
    apis.unhealthy === undefined ? undefined : UNHEALTHY_SOURCE.part(polled, readers),
    apis.unhealthy === undefined ||
      !polled.config.reads.testCollections ||
      !readsTestCollections(polled.config)
      ? undefined
      : v2CollectionsPart(v2Of(readers)),
  );
}

/** The organization-wide reads discovery asks for (it reads through the polls' shared reads). */
export function discoveryReads(discovery: DiscoverySettings): readonly ReadDeclaration[] {
  return [QUEUE_LIST, ...(discovery.flakyTests ? [QUARANTINED_TESTS, UNHEALTHY_TESTS] : [])];
}

/** Every read a source or discovery may make, each once: the docs' cost table. */
export const ALL_READS: readonly ReadDeclaration[] = [
  ...new Set([
    ...Object.values(QUEUE_SOURCES).flatMap((source) => source.reads),
    ...Object.values(QUARANTINE_SOURCES).map((source) => source.read),
    UNHEALTHY_SOURCE.read,
    TEST_COLLECTIONS,
  ]),
];
