// One repository's list of quarantined tests. Tests are added and removed over time, slowly growing
// on average. Every change makes a new immutable version of the list and recent versions are kept,
// so a client walking the pages with tokens sees one consistent list even while it changes.
import type { Random } from './random.js';
import type { SimulatorStatistics } from './statistics.js';
import {
  codeownerTeams,
  drawTestCaseFields,
  pickTestIdentity,
  type TestCase,
  type TestStyle,
} from './vocabulary.js';

export type QuarantineStatus = 'HEALTHY' | 'FLAKY' | 'BROKEN';
export type QuarantineSetting = 'ALWAYS_QUARANTINE' | 'AUTO_QUARANTINE';

/** An immutable quarantined test; a status change replaces the object. */
export interface SimulatedQuarantinedTest extends TestCase {
  /** Unix seconds. */
  readonly quarantinedAt: number;
  /** Unix seconds. */
  readonly statusLastUpdatedAt: number;
  readonly status: QuarantineStatus;
  readonly setting: QuarantineSetting;
  /**
   * False for a test quarantined by hand that no monitor ever flagged: v2 shows no `statusSince`.
   * v1 has no such notion and shows `statusLastUpdatedAt` all the same.
   */
  readonly classified: boolean;
}

export interface QuarantineListModel {
  /** Increases on every change of the list. */
  readonly version: number;
  /** The current list, oldest quarantine first. */
  readonly tests: readonly SimulatedQuarantinedTest[];
  /** The list as it was at `version`, while that version is still kept. */
  atVersion(version: number): readonly SimulatedQuarantinedTest[] | undefined;
  /** Moves the list forward by one step ending at `now`. */
  step(now: number): void;
  /** Scripted incidents: quarantines `count` new tests at once; returns their test case ids. */
  quarantineBatch(now: number, count: number): readonly string[];
  /** Scripted incidents: releases the tests with these ids (those still quarantined). */
  release(testCaseIds: readonly string[]): void;
}

/** Who hears of the list's changes. */
export interface QuarantineListListeners {
  /** Every change Trunk announces by webhook. */
  readonly onChange?: ((change: QuarantineChange) => void) | undefined;
  /** Tests that left the list (released by auto-quarantine, by hand or by a script). */
  readonly onRelease?: ((tests: readonly SimulatedQuarantinedTest[]) => void) | undefined;
}

/**
 * `test_case.quarantining_setting_changed` values: UNSPECIFIED leaves the test to the repository's
 * auto-quarantine (the simulator's AUTO_QUARANTINE); NEVER_QUARANTINE releases it for good.
 */
export type QuarantiningSetting = 'UNSPECIFIED' | 'ALWAYS_QUARANTINE' | 'NEVER_QUARANTINE';

/** A change to one test that Trunk announces by webhook, as it happened in the list. */
export type QuarantineChange =
  | {
      readonly kind: 'status';
      readonly test: SimulatedQuarantinedTest;
      readonly previous: QuarantineStatus;
      readonly at: number;
    }
  | {
      readonly kind: 'setting';
      readonly test: SimulatedQuarantinedTest;
      readonly previous: QuarantiningSetting;
      readonly updated: QuarantiningSetting;
      readonly at: number;
    };

/** The webhook value of a test's setting. */
function quarantiningSetting(setting: QuarantineSetting): QuarantiningSetting {
  return setting === 'ALWAYS_QUARANTINE' ? 'ALWAYS_QUARANTINE' : 'UNSPECIFIED';
}

/** How many past versions stay readable through page tokens. */
const KEPT_VERSIONS = 32;

const DAY = 86_400;

/** How a list deviates from its natural behaviour, for benchmarks, soak runs and the demo. */
export interface QuarantineListShape {
  /** Start with this many tests instead of 40-150. */
  readonly tests?: number | undefined;
  /** Tests are added and released many times more often, around the starting size. */
  readonly heavyChurn?: boolean | undefined;
  /** A test the model draws broken is flaky instead (see drawnStatus). */
  readonly brokenAsFlaky?: boolean | undefined;
}

/**
 * The status a test gets where the random model draws `drawn`: with `brokenAsFlaky` (the demo) a
 * broken draw is flaky, so that only a script breaks a test. The draw itself is made either way,
 * so the rest of the world's random stream is the same.
 */
export function drawnStatus(drawn: QuarantineStatus, brokenAsFlaky: boolean): QuarantineStatus {
  return brokenAsFlaky && drawn === 'BROKEN' ? 'FLAKY' : drawn;
}

/** Heavy churn: chance per step of an add, and of a release when the list is at its start size. */
const HEAVY_CHURN_CHANCE = 0.3;

/** A list of 40-150 tests quarantined over the last four months, for a repository of `owner`. */
export function createQuarantineListModel(
  random: Random,
  style: TestStyle,
  owner: string,
  now: number,
  statistics: SimulatorStatistics,
  shape: QuarantineListShape = {},
  listeners: QuarantineListListeners = {},
): QuarantineListModel {
  const { onChange, onRelease } = listeners;
  const statusOf = (drawn: QuarantineStatus) => drawnStatus(drawn, shape.brokenAsFlaky === true);
  const teams = codeownerTeams(style, owner);

  const drawTest = (
    quarantinedAt: number,
    statusLastUpdatedAt: number,
    status: QuarantineStatus,
  ): SimulatedQuarantinedTest => {
    const test = {
      ...pickTestIdentity(random, style),
      ...drawTestCaseFields(random, style, teams),
      quarantinedAt,
      statusLastUpdatedAt,
      status,
      setting: random.chance(0.8) ? ('AUTO_QUARANTINE' as const) : ('ALWAYS_QUARANTINE' as const),
    };
    return {
      ...test,
      classified: test.status !== 'HEALTHY' || test.setting !== 'ALWAYS_QUARANTINE',
    };
  };

  const initial: SimulatedQuarantinedTest[] = [];
  const count = shape.tests ?? random.int(40, 150);
  for (let i = 0; i < count; i++) {
    const quarantinedAt = now - random.int(3600, 120 * DAY);
    const statusRoll = random.next();
    const status = statusOf(statusRoll < 0.7 ? 'FLAKY' : statusRoll < 0.9 ? 'BROKEN' : 'HEALTHY');
    initial.push(drawTest(quarantinedAt, random.int(quarantinedAt, now), status));
  }
  initial.sort((a, b) => a.quarantinedAt - b.quarantinedAt);

  let version = 0;
  let tests: readonly SimulatedQuarantinedTest[] = initial;
  const history = new Map<number, readonly SimulatedQuarantinedTest[]>([[version, tests]]);

  const publish = (next: readonly SimulatedQuarantinedTest[]): void => {
    version += 1;
    tests = next;
    history.set(version, next);
    history.delete(version - KEPT_VERSIONS);
  };

  const add = (now: number): void => {
    const test = drawTest(now, now, statusOf(random.chance(0.8) ? 'FLAKY' : 'BROKEN'));
    publish([...tests, test]);
    statistics.quarantineAdded += 1;
    // Always-quarantined from the start: someone set it so by hand.
    if (test.setting === 'ALWAYS_QUARANTINE') {
      onChange?.({
        kind: 'setting',
        test,
        previous: 'UNSPECIFIED',
        updated: 'ALWAYS_QUARANTINE',
        at: now,
      });
    }
  };

  const remove = (now: number): void => {
    // Auto-quarantine releases tests that turned healthy; a person sometimes releases any test.
    const healthy = tests.filter((test) => test.status === 'HEALTHY');
    const victim =
      healthy.length > 0 && random.chance(0.7) ? random.pick(healthy) : random.pick(tests);
    publish(tests.filter((test) => test !== victim));
    statistics.quarantineRemoved += 1;
    onRelease?.([victim]);
    // A test released while not healthy was released by a person: never quarantine it again.
    if (victim.status !== 'HEALTHY') {
      onChange?.({
        kind: 'setting',
        test: victim,
        previous: quarantiningSetting(victim.setting),
        updated: 'NEVER_QUARANTINE',
        at: now,
      });
    }
  };

  const changeStatus = (now: number): void => {
    const target = random.pick(tests);
    const others = (['HEALTHY', 'FLAKY', 'BROKEN'] as const).filter((s) => s !== target.status);
    const status = statusOf(random.pick(others));
    if (status === target.status) return;
    const changed = { ...target, status, statusLastUpdatedAt: now, classified: true };
    publish(tests.map((test) => (test === target ? changed : test)));
    statistics.quarantineStatusChanges += 1;
    onChange?.({ kind: 'status', test: changed, previous: target.status, at: now });
  };

  return {
    get version() {
      return version;
    },
    get tests() {
      return tests;
    },
    atVersion: (wanted) => history.get(wanted),
    quarantineBatch(now, count) {
      const added = Array.from({ length: count }, () => drawTest(now, now, 'FLAKY'));
      publish([...tests, ...added]);
      statistics.quarantineAdded += count;
      return added.map((test) => test.testCaseId);
    },
    release(testCaseIds) {
      const released = new Set(testCaseIds);
      const kept = tests.filter((test) => !released.has(test.testCaseId));
      if (kept.length === tests.length) return;
      statistics.quarantineRemoved += tests.length - kept.length;
      onRelease?.(tests.filter((test) => released.has(test.testCaseId)));
      publish(kept);
    },
    step(now) {
      if (shape.heavyChurn) {
        // Releases grow with the list, so it wanders around its starting size instead of drifting.
        if (random.chance(HEAVY_CHURN_CHANCE)) add(now);
        const releaseChance = Math.min(0.95, (HEAVY_CHURN_CHANCE * tests.length) / count);
        if (tests.length > 0 && random.chance(releaseChance)) remove(now);
        if (tests.length > 0 && random.chance(HEAVY_CHURN_CHANCE)) changeStatus(now);
        return;
      }
      // Adds slightly outpace removals, so the list grows slowly; growth halves past 400 tests.
      if (random.chance(tests.length > 400 ? 0.00125 : 0.0025)) add(now);
      if (tests.length > 0 && random.chance(0.0022)) remove(now);
      if (tests.length > 0 && random.chance(0.004)) changeStatus(now);
    },
  };
}
