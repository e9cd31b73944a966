// Pull-request rows of one merge queue for the fake organization (fakeTrunkV2.ts), as a test moves
// them: each a copy of a fixture row shaped by Trunk's definition, with its number, queue-entry
// state, entry id and times set.
import { fixtureAt, pageAt, startFakeV2, type EntryRow, type FakeV2 } from './fakeTrunkV2.js';

/** The id of github.com/acme/web main in merge-queues-of-an-organization.json. */
export const WEB_QUEUE = 'xK9mP2nQ';

/** A row of PR `number` whose queue entry (`entry-<number>` unless `entryId`) is in `state` since `at`. */
export function entryRow(
  number: number,
  state: string,
  at: number,
  entryId = `entry-${String(number)}`,
): EntryRow {
  const page = fixtureAt('pull-request-concluded-after-a-resubmission.json') as {
    data: { queueEntry: Record<string, unknown> }[];
  };
  const [template] = page.data;
  const stamp = new Date(at * 1000).toISOString();
  return {
    ...template,
    id: pullRequestIdOf(number),
    number,
    queueEntry: {
      ...template?.queueEntry,
      id: entryId,
      state,
      stateChangedAt: stamp,
      updatedAt: stamp,
    },
  } as EntryRow;
}

/** The id (a uuid, as Trunk's are) of pull request `number`'s row. */
export function pullRequestIdOf(number: number): string {
  return `0f8fad5b-d9cb-469f-a165-${String(number).padStart(12, '0')}`;
}

/** A fake organization whose only queue with entries is github.com/acme/web main. */
export function startFakeWebQueue(rows: EntryRow[]): Promise<FakeV2> {
  return startFakeV2({
    queues: pageAt('merge-queues-of-an-organization.json'),
    entries: { [WEB_QUEUE]: rows },
  });
}

/** Moves the entry of `row` to `state` at `at`, as Trunk's list will show it from then on. */
export function moveEntry(row: EntryRow, state: string, at: number): void {
  row.queueEntry.state = state;
  row.queueEntry.stateChangedAt = new Date(at * 1000).toISOString();
}

/**
 * The entry of `row` concluded at `concludedAt` and was submitted again at `at`, as `entryId` when
 * Trunk gave it a new one: in `notReady`, where a stay begins.
 */
export function resubmitEntry(
  row: EntryRow,
  concludedAt: number,
  at: number,
  entryId?: string,
): void {
  row.earlierConclusions = [
    ...(row.earlierConclusions ?? []),
    new Date(concludedAt * 1000).toISOString(),
  ];
  if (entryId !== undefined) row.queueEntry.id = entryId;
  moveEntry(row, 'notReady', at);
}

/** A testing result of PR `number` (`TestingResult`) that ended at `endedAt` after a minute. */
export function testingResult(
  number: number,
  endedAt: number,
  outcome: string,
  entryConclusion?: string,
): { endedAt: string } {
  return {
    pullRequestNumber: number,
    endedAt: new Date(endedAt * 1000).toISOString(),
    testingDurationMs: 60_000,
    outcome,
    ...(entryConclusion === undefined ? {} : { entryConclusion }),
    isBisection: false,
    startedBisection: false,
  } as { endedAt: string };
}

/** A verification run of the fake organization: who it tested, and when and how it ended. */
export interface RunShape {
  readonly id: string;
  readonly status: string;
  readonly isBisection?: boolean;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly tested: readonly number[];
  /** The fixture's checks (build passes; e2e twice, unit, lint and preview fail) unless given. */
  readonly checks?: readonly unknown[];
}

/** A run shaped as the fixture (a `VerificationRun` with every field the definition has). */
export function verificationRunRow(
  shape: RunShape,
): { createdAt: string } & Record<string, unknown> {
  const template = fixtureAt('verification-run-failed-on-a-required-check.json') as Record<
    string,
    unknown
  > & { testedPullRequests: Record<string, unknown>[] };
  const [pr] = template.testedPullRequests;
  return {
    ...template,
    id: shape.id,
    status: shape.status,
    isBisection: shape.isBisection ?? false,
    createdAt: new Date(shape.createdAt * 1000).toISOString(),
    updatedAt: new Date(shape.updatedAt * 1000).toISOString(),
    testedPullRequests: shape.tested.map((number) => ({ ...pr, number })),
    ...(shape.checks === undefined ? {} : { checks: shape.checks }),
  };
}
