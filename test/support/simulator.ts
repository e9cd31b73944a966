// Starts the project's Trunk API simulator on a loopback port for one test and closes it after the
// test, however the test ended.
import type { SimulatorFlavour } from '../../src/simulator/responses.js';
import {
  startSimulatorServer,
  type RunningSimulator,
  type SimulatorServerOptions,
} from '../../src/simulator/server.js';
import { createSimulatorWorld, type SimulatorWorld } from '../../src/simulator/world.js';
import { afterThisTest } from './afterTest.js';

/** Options of startSimulatorServer, with the world made from `seed` and `flavour` unless given. */
export type TestSimulatorOptions = { seed?: number; flavour?: SimulatorFlavour } & Partial<
  Omit<SimulatorServerOptions, 'token'>
> & { token: string };

/** A simulator for this test; its world moves only when the test calls `world.advance`. */
export async function startTestSimulator(
  options: TestSimulatorOptions,
): Promise<{ world: SimulatorWorld; simulator: RunningSimulator }> {
  const world =
    options.world ??
    createSimulatorWorld({ seed: options.seed ?? 42, flavour: options.flavour ?? 'documented' });
  const started = await startSimulatorServer({ ...options, world });
  // A test may close it itself (to make the API vanish); closing twice must not fail cleanup.
  let closed = false;
  const simulator: RunningSimulator = {
    ...started,
    close: async () => {
      if (closed) return;
      closed = true;
      await started.close();
    },
  };
  afterThisTest(() => simulator.close());
  return { world, simulator };
}

/** The simulator's v2 merge-queue ids, by `host/owner/name branch`, as its API lists them. */
export async function v2QueueIds(
  simulator: RunningSimulator,
  apiKey: string,
): Promise<Map<string, string>> {
  const response = await fetch(`${simulator.origin}/v2/merge-queues?limit=100`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
  const { data } = (await response.json()) as {
    data: { id: string; repositoryUrl: string; targetBranch: string }[];
  };
  return new Map(
    data.map((queue) => [
      `${queue.repositoryUrl.replace('https://', '')} ${queue.targetBranch}`,
      queue.id,
    ]),
  );
}
