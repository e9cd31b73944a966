// Failed pull requests their authors submit again, unchanged, a few minutes after the failure: a
// pure function of the pull request's id and trip, so the queue's stream draws nothing for it.
import type { SimulatedPullRequest } from './pullRequest.js';
import { unitHash } from './random.js';

const NONE: readonly SimulatedPullRequest[] = [];

/** Share of failed pull requests their author submits again, 2-20 minutes later, unchanged. */
const RESUBMIT_CHANCE = 0.15;

export interface Resubmissions {
  /** `pr` failed out of the queue at `now`: its author may submit it again later. */
  failed(pr: SimulatedPullRequest, now: number): void;
  /** The pull requests due for resubmission at `now`, taken off the schedule. */
  due(now: number): readonly SimulatedPullRequest[];
}

/** A queue's schedule of resubmissions; `enabled` false keeps it empty (benchmark shapes). */
export function createResubmissions(enabled: boolean): Resubmissions {
  const scheduled: { readonly pr: SimulatedPullRequest; readonly at: number }[] = [];
  return {
    failed(pr, now) {
      const trip = `${pr.id}:${pr.conclusions.length}`;
      if (!enabled || unitHash(`resubmit:${trip}`) >= RESUBMIT_CHANCE) return;
      const at = now + 120 + Math.floor(unitHash(`resubmit-delay:${trip}`) * 1080);
      scheduled.push({ pr, at });
      scheduled.sort((x, y) => x.at - y.at);
    },
    due(now) {
      if ((scheduled[0]?.at ?? Infinity) > now) return NONE;
      const due: SimulatedPullRequest[] = [];
      while ((scheduled[0]?.at ?? Infinity) <= now) {
        const next = scheduled.shift();
        if (next !== undefined) due.push(next.pr);
      }
      return due;
    },
  };
}
