// Hours of the simulator's model, in process and at once: the queues of the page benchmark's world
// (30 PRs each) after a warm-up, advanced `hours`, for what a run of minutes cannot show.
import type * as WorldModule from '../../src/simulator/world.js';
import type { SimulatorWorld } from '../../src/simulator/world.js';
import { loadBuilt } from './built.ts';
import { simulatedRepositories } from './scale.ts';

/** The model of `queues` queues advanced `hours`, and when those hours began (unix seconds). */
export interface ModelHours {
  readonly world: SimulatorWorld;
  readonly queues: number;
  readonly hours: number;
  readonly start: number;
}

/** Runs `hours` of the model of `queues` queues; see the module comment. */
export async function modelHours(queues: number, hours: number): Promise<ModelHours> {
  const { createSimulatorWorld } = await loadBuilt<typeof WorldModule>('simulator/world.js');
  const world = createSimulatorWorld({
    seed: 1,
    flavour: 'live',
    repositories: simulatedRepositories({
      queues,
      pullRequestsPerQueue: 30,
      flakyRepositories: 0,
      quarantinedTests: 0,
    }),
    churn: 'normal',
    warmUpSeconds: 600,
  });
  const start = world.now();
  world.advance(start + hours * 3600);
  return { world, queues, hours, start };
}
