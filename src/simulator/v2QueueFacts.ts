// The facts of a merge queue that only v2 shows (its config beyond v1's settings, how it is
// managed, how old it is), drawn once per queue from a stream of their own: the v2 view shows
// them, and the queue model reads its not-ready timeout from them to say why it cancels an entry.
import { createRandom, deriveSeed } from './random.js';
import type { V2QueueFacts } from './v2Responses.js';

/** The drawn facts; ids and the creation time are the view's to add. */
export type V2QueueDraws = Omit<V2QueueFacts, 'id' | 'repositoryId' | 'createdAt'> & {
  /** Days before the view was made that the queue was created. */
  readonly createdDaysAgo: number;
};

/** The v2 facts of the queue `name` (`host/owner/name:branch`) in the world of `seed`. */
export function drawV2QueueFacts(seed: number, name: string): V2QueueDraws {
  const random = createRandom(deriveSeed(seed, `v2:merge-queue:${name}`));
  const managedRoll = random.next();
  const createdDaysAgo = random.int(30, 400);
  const managedState =
    managedRoll < 0.9 ? 'manual' : managedRoll < 0.97 ? 'terraform' : 'terraformWithDrift';
  const notReadyTimeoutMinutes = random.pick([60, 240, 1440]);
  const isExtensionEnabled = random.chance(0.5);
  const areLabelCommandsEnabled = random.chance(0.3);
  const areStateLabelsEnabled = random.chance(0.4);
  const allowedBotSubmitters = random.chance(0.5) ? ['renovate[bot]', 'dependabot[bot]'] : [];
  return {
    createdDaysAgo,
    managedState,
    notReadyTimeoutMinutes,
    isExtensionEnabled,
    areLabelCommandsEnabled,
    areStateLabelsEnabled,
    allowedBotSubmitters,
    testBranchConstructionMode: random.chance(0.85) ? 'renameTempBranch' : 'pushNewBranchFromTemp',
    enqueueingLabel: areLabelCommandsEnabled ? random.pick(['merge', 'ready-to-merge']) : '',
  };
}
