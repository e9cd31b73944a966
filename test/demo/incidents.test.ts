// The demo's incident cycle, time compressed: the test moves the demo's world (random model plus
// incident script) forward itself, waits for the exporter's next poll and reads /metrics, so ten
// simulated minutes take seconds.
import { afterEach, describe, expect, it } from 'vitest';
import { createDemoWorld, demoConfig } from '../../src/demo/demo.js';
import { startExporter, type RunningExporter } from '../../src/exporter.js';
import { silentLogger } from '../../src/log/logger.js';
import {
  DEMO_INCIDENTS,
  FAILURE_BURST_SIZE,
  INCIDENT_CYCLE_SECONDS,
  QUARANTINE_JUMP_SIZE,
  type IncidentKind,
} from '../../src/simulator/incidents.js';
import { SIMULATOR_DEMO_API_KEY, SIMULATOR_DEMO_TOKEN } from '../../src/simulator/repositories.js';
import { createSimulatorWorld, type SimulatorWorld } from '../../src/simulator/world.js';
import { parseExposition, sum, type Sample } from '../support/exposition.js';
import { startTestSimulator } from '../support/simulator.js';

let exporter: RunningExporter | undefined;
afterEach(async () => {
  await exporter?.stop();
  exporter = undefined;
});

const incident = (kind: IncidentKind) => {
  const found = DEMO_INCIDENTS.find((candidate) => candidate.kind === kind);
  if (found === undefined) throw new Error(`no ${kind} incident in the cycle`);
  return found;
};

async function waitFor(what: string, condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('demo incident cycle', () => {
  it('leaves the random model alone until its first incident', () => {
    const origin = 1_767_225_600;
    const plain = createSimulatorWorld({ seed: 1, startTime: origin });
    const { world: scripted } = createDemoWorld(1, origin);
    const queues = (world: SimulatorWorld) =>
      world.repositories.flatMap((repository) =>
        repository.branches.map((branch) => world.getQueue(repository, branch)),
      );
    const first = incident('paused').startsAfterSeconds;
    plain.advance(origin + first - 5);
    scripted.advance(origin + first - 5);
    expect(queues(scripted)).toEqual(queues(plain));
    plain.advance(origin + first);
    scripted.advance(origin + first);
    expect(queues(scripted)).not.toEqual(queues(plain));
  });

  it('shows every scripted incident on /metrics, and the cycle repeats', async () => {
    // The world starts 15 simulated minutes in the past, so the test can move it up to the present
    // and every timestamp stays in the past as the live demo's do.
    const origin = Math.floor(Date.now() / 1000) - 15 * 60;
    const { world, incidents } = createDemoWorld(1, origin);
    const { simulator } = await startTestSimulator({
      world,
      token: SIMULATOR_DEMO_TOKEN,
      apiKey: SIMULATOR_DEMO_API_KEY,
      faults: incidents,
    });
    const base = demoConfig(simulator.baseUrl, { port: 0, address: '127.0.0.1' });
    const running = await startExporter(
      {
        ...base,
        polling: {
          ...base.polling,
          mergeQueueIntervalSeconds: 0.3,
          flakyTestsIntervalSeconds: 0.3,
        },
      },
      { logger: silentLogger(), version: '0.0.0-test' },
    );
    exporter = running;
    // The demo lists no target: wait until discovery has found them and each was polled.
    await waitFor('discovery and a first poll of every target', () =>
      running.store.allPolledOnce(),
    );

    /** Moves the world to `offset` seconds after the origin and reads /metrics after a full poll. */
    const at = async (offset: number, settle?: (samples: Sample[]) => boolean) => {
      moveWorld(world, origin + offset);
      const movedAt = Date.now() / 1000;
      await waitFor(`a poll of every target after offset ${offset}`, () =>
        running.store
          .statuses()
          .every(
            (status) =>
              status.lastAttemptAt !== undefined &&
              status.lastAttemptAt - (status.lastDurationSeconds ?? 0) > movedAt,
          ),
      );
      let samples = parseExposition(await (await fetch(`${running.url}/metrics`)).text());
      const deadline = Date.now() + 20_000;
      while (settle !== undefined && !settle(samples) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        samples = parseExposition(await (await fetch(`${running.url}/metrics`)).text());
      }
      return samples;
    };
    const queueState = (samples: Sample[], repo: string, branch: string, state: string) =>
      sum(samples, 'trunk_merge_queue_state', { repo, branch, state });

    const paused = incident('paused');
    const draining = incident('draining');
    const stuck = incident('stuck_testing');
    const burst = incident('failure_burst');
    const jump = incident('quarantine_jump');
    const outage = incident('api_outage');

    // Read through API v2, a queue's state comes from the organization's list of queues, which the
    // polls of one interval share: it may show the move one poll later.
    const inState = (repo: string, branch: string, state: string) => (list: Sample[]) =>
      queueState(list, repo, branch, state) === 1;
    let samples = await at(
      paused.startsAfterSeconds - 5,
      inState(paused.repo, paused.branch, 'running'),
    );
    expect(queueState(samples, paused.repo, paused.branch, 'running')).toBe(1);
    samples = await at(
      paused.startsAfterSeconds + 5,
      inState(paused.repo, paused.branch, 'paused'),
    );
    expect(queueState(samples, paused.repo, paused.branch, 'paused')).toBe(1);

    samples = await at(
      draining.startsAfterSeconds + 5,
      inState(draining.repo, draining.branch, 'draining'),
    );
    expect(queueState(samples, draining.repo, draining.branch, 'draining')).toBe(1);

    samples = await at(stuck.startsAfterSeconds + 5);
    const testingSince = sum(samples, 'trunk_merge_queue_oldest_state_change_timestamp_seconds', {
      repo: stuck.repo,
      branch: stuck.branch,
      state: 'testing',
    });
    const timeout = sum(samples, 'trunk_merge_queue_testing_timeout_seconds', {
      repo: stuck.repo,
      branch: stuck.branch,
    });
    // The alert's expression, on the simulated clock: testing for longer than timeout + 30 min.
    expect(timeout).toBeGreaterThan(0);
    expect(world.now() - testingSince).toBeGreaterThan(timeout + 1800);

    const failed = (list: Sample[]) =>
      sum(list, 'trunk_merge_queue_pull_requests_exited_total', {
        repo: burst.repo,
        branch: burst.branch,
        outcome: 'failed',
      });
    samples = await at(burst.startsAfterSeconds + 5);
    const failedBefore = failed(samples);
    samples = await at(
      burst.startsAfterSeconds + burst.lastsSeconds + 5,
      (list) => failed(list) >= failedBefore + FAILURE_BURST_SIZE,
    );
    expect(failed(samples) - failedBefore).toBeGreaterThanOrEqual(FAILURE_BURST_SIZE);

    // The pause is over: the queue runs again.
    samples = await at(
      paused.startsAfterSeconds + paused.lastsSeconds + 5,
      inState(paused.repo, paused.branch, 'running'),
    );
    expect(queueState(samples, paused.repo, paused.branch, 'running')).toBe(1);

    const quarantined = (list: Sample[]) =>
      sum(list, 'trunk_flaky_tests_quarantined', { repo: jump.repo });
    samples = await at(jump.startsAfterSeconds - 5);
    const quarantinedBefore = quarantined(samples);
    // As queue states: the organization's quarantine list is read once per interval for all lists.
    samples = await at(
      jump.startsAfterSeconds + 5,
      (list) => quarantined(list) - quarantinedBefore === QUARANTINE_JUMP_SIZE,
    );
    expect(quarantined(samples) - quarantinedBefore).toBe(QUARANTINE_JUMP_SIZE);

    const up = (list: Sample[]) =>
      sum(list, 'trunk_exporter_target_up', { repo: outage.repo, kind: 'merge_queue' });
    const answered503 = (list: Sample[]) =>
      sum(list, 'trunk_exporter_api_requests_total', { code: '503' });
    samples = await at(outage.startsAfterSeconds - 5);
    expect(up(samples)).toBe(1);
    expect(answered503(samples)).toBe(0);
    samples = await at(outage.startsAfterSeconds + 5, (list) => up(list) === 0);
    expect(up(samples)).toBe(0);
    expect(answered503(samples)).toBeGreaterThan(0);
    samples = await at(
      outage.startsAfterSeconds + outage.lastsSeconds + 5,
      (list) => up(list) === 1,
    );
    expect(up(samples)).toBe(1);

    // The next cycle pauses the same queue again.
    samples = await at(
      INCIDENT_CYCLE_SECONDS + paused.startsAfterSeconds + 5,
      inState(paused.repo, paused.branch, 'paused'),
    );
    expect(queueState(samples, paused.repo, paused.branch, 'paused')).toBe(1);
  }, 120_000);
});

function moveWorld(world: SimulatorWorld, to: number): void {
  if (to > Date.now() / 1000)
    throw new Error('the test moved the simulated world past the present');
  world.advance(to);
}
