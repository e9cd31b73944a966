// Folding flow events into cumulative counts. Counts only grow; every fold returns new maps.
import { emptyHistogram, observe } from '../snapshot/histogram.js';
import {
  EXIT_OUTCOMES,
  transitionKey,
  type FlowEvent,
  type QueueFlowCounts,
  type TransitionCount,
} from '../snapshot/queueFlowTypes.js';
import { KNOWN_QUEUE_STATES } from '../snapshot/types.js';

/**
 * Zero counts. Every outcome and every known queue state is present from the start, so the first
 * merge after a restart is an increase that rate() and increase() can see. Transitions and
 * time-in-state series appear when first seen: 8 × 8 state pairs would be mostly noise.
 */
export function emptyFlowCounts(): QueueFlowCounts {
  return {
    exited: new Map(EXIT_OUTCOMES.map((outcome) => [outcome, 0])),
    transitions: new Map(),
    timeInQueue: new Map(EXIT_OUTCOMES.map((outcome) => [outcome, emptyHistogram()])),
    timeInState: new Map(),
    queueStateSeconds: new Map(KNOWN_QUEUE_STATES.map((state) => [state, 0])),
  };
}

/** The counts after `events`; `counts` itself is left as it was. */
export function applyFlowEvents(
  counts: QueueFlowCounts,
  events: readonly FlowEvent[],
): QueueFlowCounts {
  if (events.length === 0) return counts;
  const exited = new Map(counts.exited);
  const transitions = new Map(counts.transitions);
  const timeInQueue = new Map(counts.timeInQueue);
  const timeInState = new Map(counts.timeInState);
  const queueStateSeconds = new Map(counts.queueStateSeconds);
  for (const event of events) {
    switch (event.kind) {
      case 'exit':
        exited.set(event.outcome, (exited.get(event.outcome) ?? 0) + 1);
        timeInQueue.set(
          event.outcome,
          observe(timeInQueue.get(event.outcome) ?? emptyHistogram(), event.secondsInQueue),
        );
        break;
      case 'transition': {
        const key = transitionKey(event.from, event.to);
        const previous: TransitionCount = transitions.get(key) ?? {
          from: event.from,
          to: event.to,
          count: 0,
        };
        transitions.set(key, { ...previous, count: previous.count + 1 });
        timeInState.set(
          event.from,
          observe(timeInState.get(event.from) ?? emptyHistogram(), event.secondsInFrom),
        );
        break;
      }
      case 'queue_state':
        queueStateSeconds.set(
          event.state,
          (queueStateSeconds.get(event.state) ?? 0) + event.seconds,
        );
        break;
    }
  }
  return { exited, transitions, timeInQueue, timeInState, queueStateSeconds };
}
