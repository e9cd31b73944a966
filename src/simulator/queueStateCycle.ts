// A merge queue's own state (trunk-api-v1.md section 3): running most of the time, now and then
// paused, draining or switching modes for a while, or held in one by a scripted incident.
import type { MergeQueueSettings } from './queueSettings.js';
import type { QueueState } from './queueState.js';
import type { Random } from './random.js';
import { recordQueueState, type SimulatorStatistics } from './statistics.js';

export interface QueueStateCycle {
  readonly state: QueueState;
  /** Unix seconds of the last change of the queue's state (and so of its mode). */
  readonly changedAt: number;
  /** Moves the state by one step ending at `now`: back to running, or into another for a while. */
  step(now: number): void;
  /** Enters `next` at `now` and stays in it until `until` (unix seconds). */
  hold(next: QueueState, now: number, until: number): void;
}

/** A running queue's state, drawn from the queue's `random` as it steps. */
export function createQueueStateCycle(
  random: Random,
  settings: MergeQueueSettings,
  statistics: SimulatorStatistics,
): QueueStateCycle {
  let state: QueueState = 'running';
  let changedAt = 0;
  let endsAt = 0;

  const hold = (next: QueueState, now: number, until: number): void => {
    state = next;
    changedAt = now;
    endsAt = until;
    recordQueueState(statistics, next);
  };

  const enter = (next: QueueState, now: number, minMinutes: number, maxMinutes: number) => {
    hold(next, now, now + random.int(minMinutes * 60, maxMinutes * 60));
  };

  return {
    get state() {
      return state;
    },
    get changedAt() {
      return changedAt;
    },
    step(now) {
      if (state !== 'running') {
        if (now < endsAt) return;
        // A mode change is what `switching_modes` is for; it ends in the other mode.
        if (state === 'switching_modes') {
          settings.mode = settings.mode === 'single' ? 'parallel' : 'single';
        }
        state = 'running';
        changedAt = now;
        recordQueueState(statistics, state);
        return;
      }
      const roll = random.next();
      if (roll < 0.00012) enter('paused', now, 5, 40);
      else if (roll < 0.00018) enter('draining', now, 10, 45);
      else if (roll < 0.00021) enter('switching_modes', now, 1, 3);
    },
    hold,
  };
}
