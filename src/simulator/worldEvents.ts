// What happens in the simulated world that Trunk would announce by webhook: a pull request changing
// state in a merge queue, a quarantined test changing status or setting, another test's status. Told as it happens, during
// the world's advance(); a listener reads what it needs at once, since the models move on.
import type { TransitionReason } from './entryHistory.js';
import type { PullRequestState, SimulatedPullRequest } from './pullRequest.js';
import type { QuarantineChange } from './quarantineModel.js';
import type { SimulatedRepository } from './repositories.js';
import type { TestStatusChange } from './testCollectionModel.js';

export type WorldEvent =
  | {
      readonly kind: 'pull_request';
      readonly repository: SimulatedRepository;
      readonly branch: string;
      /** The queue tests pull requests in batches. */
      readonly batched: boolean;
      /** As it is right after the change. */
      readonly pr: SimulatedPullRequest;
      /** The state it left; undefined for a submission. */
      readonly from: PullRequestState | undefined;
      /** The reason its queue-entry history records for the change: both views tell one model. */
      readonly reason: TransitionReason | null;
      readonly at: number;
    }
  | {
      readonly kind: 'quarantine';
      readonly repository: SimulatedRepository;
      readonly change: QuarantineChange;
    }
  | {
      /** A test that is not quarantined changed status. */
      readonly kind: 'test';
      readonly repository: SimulatedRepository;
      readonly change: TestStatusChange;
    };

/** Called synchronously inside advance(): must return quickly and never throw. */
export type WorldEventListener = (event: WorldEvent) => void;
