// trunk_merge_queue_last_merge_timestamp_seconds end to end: a real exporter polls the simulator
// through API v2 and through API v1, and is sent a pull_request.merged webhook. Its clock (Date
// alone is faked) is the world's, as Trunk's and the exporter's agree in life: each merge the world
// makes is set on both at once, so whichever poll reads the world then places the merge exactly.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { MergeQueueModel } from '../src/simulator/mergeQueueModel.js';
import { SIMULATOR_STEP_SECONDS, createSimulatorWorld } from '../src/simulator/world.js';
import type { SimulatorWorld } from '../src/simulator/world.js';
import { select } from './support/exposition.js';
import {
  SIMULATOR_TOKEN,
  configYaml,
  startTestExporter,
  type ExporterUnderTest,
} from './support/exporterHarness.js';
import { startTestSimulator } from './support/simulator.js';
import { WEB, startWebhookExporter } from './support/webhookExporter.js';
import { mergedEventBody } from './support/webhooks.js';

const API_KEY = 'trunk_v2_last-merge-key-7c2';
const FAMILY = 'trunk_merge_queue_last_merge_timestamp_seconds';
const QUEUE = { repo: 'github.com/acme/web', branch: 'main' };

afterEach(() => {
  vi.useRealTimers();
});

/** The world's latest merge from the queue: the latest final state change of a merged PR. */
function latestMerge(model: MergeQueueModel): number | undefined {
  const merged = model.concluded.filter((pr) => pr.state === 'merged');
  return merged.length === 0 ? undefined : Math.max(...merged.map((pr) => pr.stateChangedAt));
}

/** Moves the world (and the exporter's clock with it) step by step until the queue merges a PR. */
function stepUntilMerge(world: SimulatorWorld, model: MergeQueueModel): number {
  const before = latestMerge(model);
  for (let step = 0; step < 4 * 3600; step += SIMULATOR_STEP_SECONDS) {
    world.advance(world.now() + SIMULATOR_STEP_SECONDS);
    vi.setSystemTime(world.now() * 1000);
    const latest = latestMerge(model);
    if (latest !== undefined && latest !== before) return latest;
  }
  throw new Error('the queue merged nothing in 4 simulated hours');
}

/**
 * Waits (the harness's wait: a busy machine's bound) until the exporter's last merge of QUEUE is
 * `expected`; a wait that runs out names the last merge the page held.
 */
async function lastMergeBecomes(exporter: ExporterUnderTest, expected: number | undefined) {
  try {
    await exporter.waitFor(
      (samples) => select(samples, FAMILY, QUEUE)[0]?.value === expected,
      `the last merge at ${String(expected)}`,
    );
  } catch (error) {
    const [last] = select(await exporter.samples(), FAMILY, QUEUE);
    throw new Error(`${(error as Error).message}; last merge ${String(last?.value)}`, {
      cause: error,
    });
  }
}

/** A simulator world two hours in, the exporter's clock on it, and an exporter polling QUEUE often. */
async function exporterOnTheWorldsClock(credentials: { token: null; apiKey: string } | object) {
  const world = createSimulatorWorld({ seed: 23 });
  const { simulator } = await startTestSimulator({
    world,
    token: SIMULATOR_TOKEN,
    apiKey: API_KEY,
  });
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(world.now() * 1000);
  const model = world.mergeQueues.find(
    ({ repository, model: queue }) =>
      `${repository.host}/${repository.owner}/${repository.name}` === QUEUE.repo &&
      queue.branch === QUEUE.branch,
  )?.model;
  if (model === undefined) throw new Error('no queue model');
  const exporter = await startTestExporter(
    configYaml({
      apiUrl: simulator.origin,
      ...credentials,
      targets: `  - repo: ${QUEUE.repo}\n    branches: [${QUEUE.branch}]`,
      polling: '  mergeQueueIntervalSeconds: 0.2\n  flakyTestsIntervalSeconds: 600',
    }),
  );
  return { world, model, exporter };
}

describe('trunk_merge_queue_last_merge_timestamp_seconds', () => {
  it("through API v2 is the world's latest merge from the first poll, and follows each merge", async () => {
    const { world, model, exporter } = await exporterOnTheWorldsClock({
      token: null,
      apiKey: API_KEY,
    });
    const atStart = latestMerge(model);
    expect(atStart).toBeDefined();
    await lastMergeBecomes(exporter, atStart);
    for (let merges = 0; merges < 2; merges++) {
      await lastMergeBecomes(exporter, stepUntilMerge(world, model));
    }
  });

  it('through API v1 is absent until the first merge after start, then follows each merge', async () => {
    const { world, model, exporter } = await exporterOnTheWorldsClock({ token: SIMULATOR_TOKEN });
    await exporter.waitFor(
      (samples) =>
        select(samples, 'trunk_exporter_target_up', { ...QUEUE, kind: 'merge_queue' }).some(
          (sample) => sample.value === 1,
        ),
      'the first poll',
    );
    expect(select(await exporter.samples(), FAMILY)).toEqual([]);
    for (let merges = 0; merges < 2; merges++) {
      await lastMergeBecomes(exporter, stepUntilMerge(world, model));
    }
  });

  it("with webhooks on, moves to a pull_request.merged event's time: never back, never ahead", async () => {
    const { test, post } = await startWebhookExporter();
    const lastMerge = async () =>
      select(await test.samples(), FAMILY, { repo: WEB, branch: 'main' })[0]?.value;
    expect(await lastMerge()).toBeUndefined();
    // Merges after the exporter started (one from before counts only as an event received).
    const now = Math.floor(Date.now() / 1000);
    expect((await post(mergedEventBody(90_001, now))).status).toBe(204);
    expect(await lastMerge()).toBe(now);
    // An older merge told later changes nothing.
    expect((await post(mergedEventBody(90_002, now - 20))).status).toBe(204);
    expect(await lastMerge()).toBe(now);
    // A time an hour ahead is not used: the merge counts when its event came.
    const before = Date.now() / 1000;
    expect((await post(mergedEventBody(90_003, now + 3600))).status).toBe(204);
    const received = await lastMerge();
    expect(received).toBeGreaterThanOrEqual(before);
    expect(received).toBeLessThanOrEqual(Date.now() / 1000);
  });
});
