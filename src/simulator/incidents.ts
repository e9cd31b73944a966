// Scripted incidents on top of the random model, for the demo: the random model pauses a queue a
// few times a day, so a user watching for minutes would never see an alert path. This script
// replays the same cycle of incidents, each on its own target, every INCIDENT_CYCLE_SECONDS of
// simulated time (a long one every few cycles). It changes the world only through the models'
// incident methods and answers 503s through the server's fault hook, so `simulate` without it is
// the random model unchanged.
import type { FaultPlan, InterceptedCall } from './faults.js';
import type { SimulatedPullRequest } from './pullRequest.js';
import type { ScriptableWorld, WorldScript } from './world.js';

/** Simulated seconds from one incident cycle to the next. */
export const INCIDENT_CYCLE_SECONDS = 600;

export type IncidentKind =
  | 'paused'
  | 'draining'
  | 'stuck_testing'
  | 'failure_burst'
  | 'quarantine_jump'
  | 'api_outage'
  | 'eviction_loop'
  | 'stalled_queue'
  | 'test_broken';

/** One incident of the cycle: what happens, to which target, when, and the alert it drives. */
export interface ScriptedIncident {
  readonly kind: IncidentKind;
  /** `host/owner/name`. */
  readonly repo: string;
  /** '' for repository-wide incidents (quarantine, outage). */
  readonly branch: string;
  /** Seconds after the start of each cycle. */
  readonly startsAfterSeconds: number;
  readonly lastsSeconds: number;
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

/** How far past its testing timeout the stuck pull request already is when it appears. */
const STUCK_PAST_TIMEOUT_SECONDS = 35 * 60;
/** Pull requests submitted and then failed together in a failure burst. */
export const FAILURE_BURST_SIZE = 6;
/** Tests quarantined at once in a quarantine jump (the alert's threshold is 10). */
export const QUARANTINE_JUMP_SIZE = 15;
/** How long each testing of the pull request in an eviction loop lasts before it fails. */
export const EVICTION_TESTING_SECONDS = 45;
/** How long its author waits after a failure before submitting it again. */
export const EVICTION_RESUBMIT_SECONDS = 30;

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
    // Its four failed exits an incident are over 30% of the queue's merged and failed ones.
    alsoDrives: ['TrunkMergeQueueFailureRatioHigh'],
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
  let burst: SimulatedPullRequest[] = [];
  let jumpedTests: readonly string[] = [];
  let outageRepo: string | undefined;
  let evicted: SimulatedPullRequest | undefined;
  /** The test that turns broken: the same one every cycle, chosen at the first. */
  let breaking: string | undefined;

  const start = (incident: ScriptedIncident, now: number, world: ScriptableWorld): void => {
    const until = now + incident.lastsSeconds;
    const queue = world.queue(incident.repo, incident.branch);
    switch (incident.kind) {
      case 'paused':
      case 'draining':
        queue?.holdState(incident.kind, now, until);
        return;
      case 'stuck_testing': {
        if (queue === undefined) return;
        // A CI run that hung long ago and that the queue never timed out; it fails when released.
        const pr = makeReady(queue.submit(now));
        pr.state = 'testing';
        pr.stateChangedAt =
          now - queue.settings.testingTimeoutMinutes * 60 - STUCK_PAST_TIMEOUT_SECONDS;
        pr.phaseEndsAt = until;
        pr.testWillPass = false;
        return;
      }
      case 'failure_burst':
        if (queue === undefined) return;
        burst = Array.from({ length: FAILURE_BURST_SIZE }, () => {
          const pr = makeReady(queue.submit(now));
          pr.state = 'pending';
          return pr;
        });
        return;
      case 'quarantine_jump': {
        const list = world.quarantine(incident.repo);
        if (list === undefined) return;
        list.release(jumpedTests);
        jumpedTests = list.quarantineBatch(now, QUARANTINE_JUMP_SIZE);
        return;
      }
      case 'api_outage':
        outageRepo = incident.repo;
        return;
      case 'eviction_loop':
        evicted = queue === undefined ? undefined : makeReady(queue.submit(now));
        return;
      case 'stalled_queue':
        queue?.stall(until);
        return;
      case 'test_broken': {
        const tests = world.tests(incident.repo);
        breaking ??= tests?.tests.find((test) => test.status === 'HEALTHY')?.testCaseId;
        if (breaking !== undefined) tests?.setStatus(breaking, 'BROKEN', now);
        return;
      }
    }
  };

  /** Every step while the incident lasts, after its start. */
  const during = (incident: ScriptedIncident, now: number, world: ScriptableWorld): void => {
    if (incident.kind !== 'eviction_loop' || evicted === undefined) return;
    const queue = world.queue(incident.repo, incident.branch);
    if (queue === undefined) return;
    const pr = evicted;
    // One state change per step: each waits for the step after the last change.
    const settled = pr.stateChangedAt < now;
    switch (pr.state) {
      case 'pending':
        if (settled) queue.testNow(pr, now, EVICTION_TESTING_SECONDS, false);
        return;
      case 'testing':
        // Started by the queue itself: it fails all the same.
        pr.testWillPass = false;
        pr.phaseEndsAt = Math.min(pr.phaseEndsAt, pr.stateChangedAt + EVICTION_TESTING_SECONDS);
        return;
      case 'pending_failure':
        if (settled) queue.fail(pr, now);
        return;
      case 'failed':
        if (now - pr.stateChangedAt >= EVICTION_RESUBMIT_SECONDS) {
          queue.resubmit(pr, now);
          makeReady(pr);
        }
        return;
      case 'not_ready':
      case 'tests_passed':
      case 'merged':
      case 'cancelled':
        return;
    }
  };

  const end = (incident: ScriptedIncident, now: number, world: ScriptableWorld): void => {
    if (incident.kind === 'failure_burst') {
      const queue = world.queue(incident.repo, incident.branch);
      for (const pr of burst) queue?.fail(pr, now);
      burst = [];
    } else if (incident.kind === 'api_outage' && outageRepo === incident.repo) {
      outageRepo = undefined;
    } else if (incident.kind === 'eviction_loop') {
      // Its author gives up: a loop still in the queue is cancelled.
      if (evicted !== undefined) world.queue(incident.repo, incident.branch)?.cancel(evicted, now);
      evicted = undefined;
    } else if (incident.kind === 'test_broken' && breaking !== undefined) {
      world.tests(incident.repo)?.setStatus(breaking, 'HEALTHY', now);
    }
    // Queue states and stalls end on their own; the stuck pull request fails when its run ends.
  };

  return {
    incidents,
    afterStep(now, world) {
      for (const incident of incidents) {
        if (now < origin && incident.beforeStart !== true) continue;
        const every = incident.everySeconds ?? INCIDENT_CYCLE_SECONDS;
        const offset = (((now - origin) % every) + every) % every;
        const since = (offset - incident.startsAfterSeconds + every) % every;
        if (since === 0) start(incident, now, world);
        else if (since === incident.lastsSeconds % every) end(incident, now, world);
        else if (since < incident.lastsSeconds) during(incident, now, world);
      }
    },
    intercept(call: InterceptedCall) {
      if (outageRepo === undefined || call.repo !== outageRepo) return false;
      call.response.writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8' });
      call.response.end('503 Service Unavailable: scripted demo outage\n');
      return true;
    },
  };
}

/** Readiness met, so the pull request may test (scripted pull requests skip the readiness wait). */
function makeReady(pr: SimulatedPullRequest): SimulatedPullRequest {
  pr.readiness.doesBaseBranchMatch = true;
  pr.readiness.mergeability = 'mergeable';
  pr.readiness.hasImpactedTargets = true;
  return pr;
}
