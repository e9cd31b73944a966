// Folding flow events into cumulative counts. Counts only grow; every fold returns new maps.
import { emptyHistogram, observe, type HistogramCounts } from '../snapshot/histogram.js';
import { NO_ENTRIES, orShared } from '../snapshot/noEntries.js';
import {
  EXIT_OUTCOMES,
  MAX_UNKNOWN_STATES,
  OTHER_STATE,
  transitionKey,
  type FlowEvent,
  type QueueFlowCounts,
  type TransitionCount,
} from '../snapshot/queueFlowTypes.js';
import { KNOWN_PULL_REQUEST_STATES, KNOWN_QUEUE_STATES } from '../snapshot/types.js';

/**
 * Zero counts. Every outcome and every known queue state is present from the start, so the first
 * merge after a restart is an increase that rate() and increase() can see. Transitions and
 * time-in-state series appear when first seen: 8 × 8 state pairs would be mostly noise.
 */
export function emptyFlowCounts(): QueueFlowCounts {
  return {
    exited: new Map(EXIT_OUTCOMES.map((outcome) => [outcome, 0])),
    transitions: NO_ENTRIES,
    timeInQueue: new Map(EXIT_OUTCOMES.map((outcome) => [outcome, emptyHistogram()])),
    timeInState: NO_ENTRIES,
    queueStateSeconds: new Map(KNOWN_QUEUE_STATES.map((state) => [state, 0])),
    repeatedFailures: 0,
  };
}

const KNOWN_PR_STATES: ReadonlySet<string> = new Set([...KNOWN_PULL_REQUEST_STATES, OTHER_STATE]);
const KNOWN_QUEUE_STATE_SET: ReadonlySet<string> = new Set([...KNOWN_QUEUE_STATES, OTHER_STATE]);

/**
 * A family's state label values: the documented ones, the first MAX_UNKNOWN_STATES others it
 * already holds or meets, and OTHER_STATE for the rest.
 */
function stateLabels(
  known: ReadonlySet<string>,
  held: Iterable<string>,
): (state: string) => string {
  const unknown = new Set<string>();
  for (const state of held) if (!known.has(state)) unknown.add(state);
  return (state) => {
    if (known.has(state) || unknown.has(state)) return state;
    if (unknown.size >= MAX_UNKNOWN_STATES) return OTHER_STATE;
    unknown.add(state);
    return state;
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
  const transitionLabel = stateLabels(
    KNOWN_PR_STATES,
    [...transitions.values()].flatMap(({ from, to }) => [from, to]),
  );
  const timeInStateLabel = stateLabels(KNOWN_PR_STATES, timeInState.keys());
  const queueStateLabel = stateLabels(KNOWN_QUEUE_STATE_SET, queueStateSeconds.keys());
  for (const event of events) {
    switch (event.kind) {
      case 'exit':
        exited.set(event.outcome, (exited.get(event.outcome) ?? 0) + 1);
        timeInQueue.set(
          event.outcome,
          observe(timeInQueue.get(event.outcome) ?? emptyHistogram(), event.secondsInQueue, {
            pullRequest: event.prNumber,
            timestampSeconds: event.leftAt,
          }),
        );
        break;
      case 'transition': {
        if (event.heldFor !== undefined) {
          observeTimeInState(timeInState, timeInStateLabel, event.from, event.secondsInFrom);
          break;
        }
        const from = transitionLabel(event.from);
        const to = transitionLabel(event.to);
        const key = transitionKey(from, to);
        const previous: TransitionCount = transitions.get(key) ?? { from, to, count: 0 };
        transitions.set(key, { ...previous, count: previous.count + 1 });
        observeTimeInState(timeInState, timeInStateLabel, event.from, event.secondsInFrom);
        break;
      }
      case 'queue_state': {
        const state = queueStateLabel(event.state);
        queueStateSeconds.set(state, (queueStateSeconds.get(state) ?? 0) + event.seconds);
        break;
      }
    }
  }
  return {
    exited,
    transitions: orShared(transitions),
    timeInQueue,
    timeInState: orShared(timeInState),
    queueStateSeconds,
    repeatedFailures: counts.repeatedFailures,
  };
}

/** Observes `seconds` in `from` (its label) when the transition has them. */
function observeTimeInState(
  timeInState: Map<string, HistogramCounts>,
  label: (state: string) => string,
  from: string,
  seconds: number | undefined,
): void {
  if (seconds === undefined) return;
  const left = label(from);
  timeInState.set(left, observe(timeInState.get(left) ?? emptyHistogram(), seconds));
}
