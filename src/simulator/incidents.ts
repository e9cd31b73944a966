// Scripted incidents on top of the random model, for the demo: the random model pauses a queue a
// few times a day, so a user watching for minutes would never see an alert path. This script
// replays the same cycle of incidents, each on its own target, every INCIDENT_CYCLE_SECONDS of
// simulated time (a long one every few cycles). It changes the world only through the models'
// incident methods (incidentEffects.ts says what each kind does) and answers 503s through the
// server's fault hook, so `simulate` without it is the random model unchanged.
import type { FaultPlan, InterceptedCall } from './faults.js';
import { createIncidentEffects, type IncidentTarget } from './incidentEffects.js';
import type { WorldScript } from './world.js';

export {
  EVICTION_RESUBMIT_SECONDS,
  EVICTION_TESTING_SECONDS,
  FAILING_REQUIRED_CHECK,
  FAILURE_BURST_SIZE,
  QUARANTINE_JUMP_SIZE,
  TARGET_BRANCH_PUSH_EVERY_SECONDS,
} from './incidentEffects.js';
export type { IncidentKind } from './incidentEffects.js';

/** Simulated seconds from one incident cycle to the next. */
export const INCIDENT_CYCLE_SECONDS = 600;

/** One incident of the cycle: what happens, to which target, when, and the alert it drives. */
export interface ScriptedIncident extends IncidentTarget {
  /** Seconds after the start of each cycle. */
  readonly startsAfterSeconds: number;
  /** How often it comes back; INCIDENT_CYCLE_SECONDS when absent. */
  readonly everySeconds?: number;
  /**
   * It runs during the world's warm-up too, so that an occurrence that begins before the demo's
   * start (a negative time, modulo everySeconds) is under way, with its history, when it starts.
   */
  readonly beforeStart?: boolean;
  /** The alert of prometheus/alerts.yaml whose expression the incident makes true. */
  readonly alert: string;
  /** Other alerts it makes true on the way, pending or firing (the demo's alerts are its incidents'). */
  readonly alsoDrives?: readonly string[];
}

/**
 * How long a `required_check_failing` incident fails its queue's runs: longer than a cycle, so
 * such an incident comes back every few cycles (`everySeconds`).
 */
export const REQUIRED_CHECK_FAILING_SECONDS = 20 * 60;
/** How often the demo's failing check and its pushes to a target branch come back. */
const WHY_INCIDENTS_EVERY_SECONDS = 30 * 60;

/** How long before the demo's start its stalled queue stopped merging: more than the alert's hour. */
export const STALLED_BEFORE_START_SECONDS = 70 * 60;
/** How often the stall comes back. */
const STALL_EVERY_SECONDS = 3 * 3600;

/** The cycle, one incident per target so each shows on its own series. */
export const DEMO_INCIDENTS: readonly ScriptedIncident[] = [
  {
    kind: 'paused',
    repo: 'github.com/acme/web',
    branch: 'main',
    startsAfterSeconds: 30,
    lastsSeconds: 180,
    alert: 'TrunkMergeQueuePaused',
  },
  {
    kind: 'draining',
    repo: 'github.com/acme/api',
    branch: 'main',
    startsAfterSeconds: 60,
    lastsSeconds: 180,
    alert: 'TrunkMergeQueueDraining',
  },
  {
    kind: 'stuck_testing',
    repo: 'github.com/acme/web',
    branch: 'release',
    startsAfterSeconds: 90,
    lastsSeconds: 420,
    alert: 'TrunkMergeQueuePullRequestStuckTesting',
  },
  {
    // Submitted at the start, failed together at the end: the exporter sees them queue, then fail.
    kind: 'failure_burst',
    repo: 'github.com/acme/mobile',
    branch: 'develop',
    startsAfterSeconds: 120,
    lastsSeconds: 60,
    alert: 'TrunkMergeQueueFailureRatioHigh',
    // They fail before any run starts: a merge conflict (START_TEST_RUN_MERGE_CONFLICT), six an
    // incident, the reason their queue-entry history and their webhooks both give.
    alsoDrives: ['TrunkMergeQueueMergeConflicts'],
  },
  {
    // The jumped tests stay until the next cycle's jump replaces them, so the count stays up.
    kind: 'quarantine_jump',
    repo: 'github.com/acme/api',
    branch: '',
    startsAfterSeconds: 240,
    lastsSeconds: INCIDENT_CYCLE_SECONDS,
    alert: 'TrunkFlakyTestsQuarantineGrowing',
    // The jumped tests are flaky: through API v2 the repository's flaky tests grow by as many.
    alsoDrives: ['TrunkFlakyTestsGrowing'],
  },
  {
    kind: 'api_outage',
    repo: 'github.com/acme/mobile',
    branch: '',
    startsAfterSeconds: 300,
    lastsSeconds: 60,
    alert: 'TrunkExporterTargetDown',
    // A minute of 503s is over a tenth of an endpoint's requests in its 10-minute window.
    alsoDrives: ['TrunkApiErrors'],
  },
  {
    // One PR fails testing, is submitted again and fails again: four times, then left failed.
    kind: 'eviction_loop',
    repo: 'github.com/acme/api',
    branch: 'main',
    startsAfterSeconds: 250,
    lastsSeconds: 340,
    alert: 'TrunkMergeQueueEvictionLoop',
    // Its repeated failed exits count for neither side of TrunkMergeQueueFailureRatioHigh (one
    // failed pull request, not four). When its pull request is urgent (one in about 125), each
    // submission preempts every entry testing: a storm of SKIP_THE_LINE_INTERRUPTED restarts.
    alsoDrives: ['TrunkMergeQueueRestartStorm'],
  },
  {
    // e2e fails every run the queue concludes for 20 minutes of every half hour: runs testing when
    // it starts fail on it as they end (a run lasts 3 to 15 minutes).
    kind: 'required_check_failing',
    repo: 'github.com/acme/api',
    branch: 'main',
    startsAfterSeconds: 30,
    lastsSeconds: REQUIRED_CHECK_FAILING_SECONDS,
    everySeconds: WHY_INCIDENTS_EVERY_SECONDS,
    alert: 'TrunkMergeQueueRequiredCheckFailing',
    // Every pull request it tests fails: over 30% of the queue's merged and failed ones.
    alsoDrives: ['TrunkMergeQueueFailureRatioHigh'],
  },
  {
    // Someone pushes to the target branch every minute for 5 minutes of every half hour, after
    // the queue's pause of the cycle; each push restarts every entry testing.
    kind: 'target_branch_pushes',
    repo: 'github.com/acme/web',
    branch: 'main',
    startsAfterSeconds: 240,
    lastsSeconds: 300,
    everySeconds: WHY_INCIDENTS_EVERY_SECONDS,
    alert: 'TrunkMergeQueueRestartStorm',
  },
  {
    // The provider stops answering: no status check reports and no merge goes through, so
    // nothing that tests finishes, nothing new starts and nothing merges. It began 70 minutes
    // before the demo and lasts 25 minutes into it (then every 3 hours for 95 minutes), so the
    // last merge the exporter reads at start is over the alert's hour old; the alert waits until
    // it has seen PRs wait an hour, so it fires 65 minutes into each later stall, not in this
    // first one. (The random model itself often merges nothing for 10-20 minutes.)
    kind: 'stalled_queue',
    repo: 'github.com/acme/mobile',
    branch: 'develop',
    startsAfterSeconds: STALL_EVERY_SECONDS - STALLED_BEFORE_START_SECONDS,
    lastsSeconds: STALLED_BEFORE_START_SECONDS + 25 * 60,
    everySeconds: STALL_EVERY_SECONDS,
    beforeStart: true,
    alert: 'TrunkMergeQueueStalled',
  },
  {
    // A test that is not quarantined turns broken (v2 shows it; v1 lists quarantined tests only).
    kind: 'test_broken',
    repo: 'github.com/acme/web',
    branch: '',
    startsAfterSeconds: 150,
    lastsSeconds: 420,
    alert: 'TrunkTestsTurnedBroken',
  },
];

/** The demo's incident cycle: a world script plus the fault hook that answers the outage's 503s. */
export interface IncidentCycle extends WorldScript, Pick<FaultPlan, 'intercept'> {
  readonly incidents: readonly ScriptedIncident[];
}

/**
 * The incident cycle starting at `origin` (unix seconds, the demo's start); steps before it (the
 * world's warm-up) are left to the random model, but for incidents that run `beforeStart`.
 */
export function createIncidentCycle(
  origin: number,
  incidents: readonly ScriptedIncident[] = DEMO_INCIDENTS,
): IncidentCycle {
  // Longer than its period, an incident would start again before it ended, and never end.
  const overlapping = incidents.find(
    (incident) => incident.lastsSeconds > (incident.everySeconds ?? INCIDENT_CYCLE_SECONDS),
  );
  if (overlapping !== undefined) {
    throw new Error(
      `incident ${overlapping.kind} on ${overlapping.repo} lasts ${overlapping.lastsSeconds} s, longer than it recurs: give it everySeconds`,
    );
  }
  const effects = createIncidentEffects();

  return {
    incidents,
    afterStep(now, world) {
      for (const incident of incidents) {
        if (now < origin && incident.beforeStart !== true) continue;
        const every = incident.everySeconds ?? INCIDENT_CYCLE_SECONDS;
        const offset = (((now - origin) % every) + every) % every;
        const since = (offset - incident.startsAfterSeconds + every) % every;
        if (since === 0) effects.start(incident, now, world);
        else if (since === incident.lastsSeconds % every) effects.end(incident, now, world);
        else if (since < incident.lastsSeconds) effects.during(incident, since, now, world);
      }
    },
    intercept(call: InterceptedCall) {
      const outageRepo = effects.outageRepo();
      if (outageRepo === undefined || call.repo !== outageRepo) return false;
      call.response.writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8' });
      call.response.end('503 Service Unavailable: scripted demo outage\n');
      return true;
    },
  };
}
