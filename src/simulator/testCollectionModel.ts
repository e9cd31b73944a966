// The tests of one repository that are not quarantined: mostly healthy, some flaky or broken that
// nobody quarantined (an override, or auto-quarantine off for them), and the tests released from
// the quarantine list. Monitors flag and clear them as the world moves, so `statusSince` moves.
// Its own random stream: the quarantine list v1 shows is the same with or without it.
import {
  drawnStatus,
  type QuarantineStatus,
  type SimulatedQuarantinedTest,
} from './quarantineModel.js';
import type { Random } from './random.js';
import type { SimulatorStatistics } from './statistics.js';
import {
  codeownerTeams,
  drawTestCaseFields,
  pickTestIdentity,
  type TestCase,
  type TestStyle,
} from './vocabulary.js';

/** An immutable test that is not quarantined; a status change replaces the object. */
export interface SimulatedTest extends TestCase {
  readonly status: QuarantineStatus;
  /** Unix seconds of the last status change; undefined while no monitor ever classified it. */
  readonly statusSince: number | undefined;
}

/** A test's status changed (Trunk announces it by webhook). */
export interface TestStatusChange {
  readonly test: SimulatedTest;
  readonly previous: QuarantineStatus;
  readonly at: number;
}

export interface TestCollectionModel {
  /** Increases on every change of `tests`. */
  readonly version: number;
  /** The tests not quarantined, oldest first. */
  readonly tests: readonly SimulatedTest[];
  /** Moves the collection forward by one step ending at `now`. */
  step(now: number): void;
  /** Takes in tests released from the quarantine list, as they were when released. */
  adopt(released: readonly SimulatedQuarantinedTest[]): void;
  /** Scripted incidents: sets a test's status now; returns the test as changed. */
  setStatus(testCaseId: string, status: QuarantineStatus, now: number): SimulatedTest | undefined;
}

/** Released tests kept at most; older ones are dropped, as a deleted test would be. */
const ADOPTED_KEPT = 200;
/** Chance per step that a monitor looks at one test (about four status changes an hour). */
const REVIEW_CHANCE = 0.015;
const DAY = 86_400;

/** Where a reviewed test goes from each status: healthy tests mostly stay so. */
function nextStatus(random: Random, status: QuarantineStatus): QuarantineStatus | undefined {
  switch (status) {
    case 'HEALTHY':
      if (!random.chance(0.25)) return undefined;
      return random.chance(0.8) ? 'FLAKY' : 'BROKEN';
    case 'FLAKY':
      return random.chance(0.7) ? 'HEALTHY' : 'BROKEN';
    case 'BROKEN':
      return random.chance(0.65) ? 'HEALTHY' : 'FLAKY';
  }
}

/** How a collection deviates from its natural behaviour, for benchmarks and the demo. */
export interface TestCollectionShape {
  /** This many tests instead of 60-160. */
  readonly tests?: number | undefined;
  /** A test the model draws broken is flaky instead (see drawnStatus). */
  readonly brokenAsFlaky?: boolean | undefined;
}

/** A collection of tests not quarantined for a repository of `owner`. */
export function createTestCollectionModel(
  random: Random,
  style: TestStyle,
  owner: string,
  now: number,
  shape: TestCollectionShape,
  statistics: SimulatorStatistics,
  onChange?: (change: TestStatusChange) => void,
): TestCollectionModel {
  const teams = codeownerTeams(style, owner);
  const statusOf = (drawn: QuarantineStatus) => drawnStatus(drawn, shape.brokenAsFlaky === true);
  const count = shape.tests ?? random.int(60, 160);
  let own: readonly SimulatedTest[] = Array.from({ length: count }, () => {
    const identity = pickTestIdentity(random, style);
    const roll = random.next();
    const status = statusOf(roll < 0.8 ? 'HEALTHY' : roll < 0.95 ? 'FLAKY' : 'BROKEN');
    // Most healthy tests were never flagged by a monitor; unhealthy ones were, recently.
    const statusSince =
      status === 'HEALTHY'
        ? random.chance(0.55)
          ? undefined
          : now - random.int(DAY, 120 * DAY)
        : now - random.int(3600, 30 * DAY);
    return {
      ...identity,
      ...drawTestCaseFields(random, style, teams),
      status,
      statusSince,
    };
  });
  let adopted: readonly SimulatedTest[] = [];
  let version = 0;
  let tests: readonly SimulatedTest[] = own;

  const publish = (): void => {
    version += 1;
    tests = [...own, ...adopted];
  };

  const change = (target: SimulatedTest, status: QuarantineStatus, now: number): SimulatedTest => {
    const changed = { ...target, status, statusSince: now };
    const replace = (list: readonly SimulatedTest[]) =>
      list.map((test) => (test === target ? changed : test));
    own = replace(own);
    adopted = replace(adopted);
    publish();
    statistics.testStatusChanges += 1;
    onChange?.({ test: changed, previous: target.status, at: now });
    return changed;
  };

  return {
    get version() {
      return version;
    },
    get tests() {
      return tests;
    },
    step(now) {
      if (tests.length === 0 || !random.chance(REVIEW_CHANCE)) return;
      const target = random.pick(tests);
      const drawn = nextStatus(random, target.status);
      const status = drawn === undefined ? undefined : statusOf(drawn);
      if (status !== undefined && status !== target.status) change(target, status, now);
    },
    adopt(released) {
      if (released.length === 0) return;
      const joined = released.map((test) => ({
        name: test.name,
        parent: test.parent,
        file: test.file,
        classname: test.classname,
        testCaseId: test.testCaseId,
        codeowners: test.codeowners,
        variant: test.variant,
        status: test.status,
        statusSince: test.classified ? test.statusLastUpdatedAt : undefined,
      }));
      adopted = [...adopted, ...joined].slice(-ADOPTED_KEPT);
      publish();
    },
    setStatus(testCaseId, status, now) {
      const target = tests.find((test) => test.testCaseId === testCaseId);
      if (target === undefined || target.status === status) return target;
      return change(target, status, now);
    },
  };
}
