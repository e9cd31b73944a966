// A merge-queue webhook event as the flow ledger reads it: the stay of one pull request beginning
// (submitted, queued) or ending (merged, failed, canceled). Testing and batch events leave the
// ledger as it is; the poll they trigger shows what they changed.
import { EMPTY_ENTRY_HISTORY, type EntryHistory } from '../snapshot/entryHistoryTypes.js';
import type { QueueFlow } from '../snapshot/queueFlowTypes.js';
import type { PullRequestQueueEvent, WebhookExitSettings } from '../snapshot/prStayTypes.js';
import type { MergeQueueEvent } from '../trunk/webhookEvents.js';
import { recordEventFailure } from './failureWitnesses.js';
import { recordQueueEvent } from './queueFlow.js';

/** A queue's history before any read: nothing counted, its families hidden. */
const HIDDEN_ENTRY_HISTORY: EntryHistory = Object.freeze({ ...EMPTY_ENTRY_HISTORY, shown: false });

/** The ledger's reading of an event, or undefined when it says nothing about a stay. */
export function pullRequestQueueEvent(event: MergeQueueEvent): PullRequestQueueEvent | undefined {
  if (event.kind !== 'pull_request' || event.prNumber === undefined) return undefined;
  const { prNumber, transitionSeconds: at } = event;
  switch (event.type) {
    case 'pull_request.submitted':
      return { kind: 'submitted', prNumber, at };
    case 'pull_request.queued':
      return { kind: 'queued', prNumber, at };
    case 'pull_request.merged':
      return { kind: 'exit', prNumber, outcome: 'merged', at };
    case 'pull_request.failed':
      return { kind: 'exit', prNumber, outcome: 'failed', at };
    // Trunk spells it `canceled`; the `outcome` label value is `cancelled`.
    case 'pull_request.canceled':
      return { kind: 'exit', prNumber, outcome: 'cancelled', at };
    default:
      return undefined;
  }
}

/**
 * The queue's ledger after an event received at `receivedAt` (unix seconds, the exporter's
 * clock); the same ledger when the event says nothing about a stay.
 */
export function applyMergeQueueEvent(
  flow: QueueFlow,
  event: MergeQueueEvent,
  receivedAt: number,
  settings: WebhookExitSettings,
): QueueFlow {
  const queueEvent = pullRequestQueueEvent(event);
  if (queueEvent === undefined) return flow;
  const recorded = recordQueueEvent(flow, queueEvent, receivedAt, settings);
  // The failure's reason is counted from the event (webhookCounting.ts) unless its history counted
  // it first: either way the two have met, and neither counts it again. With the history read off
  // the event is remembered in a hidden history all the same, so that a reload turning the read on
  // does not count this failure again when its history lists it.
  return withEventFailure(recorded, queueEvent, receivedAt);
}

/**
 * What a ledger that a queue's first poll starts takes of an event received before it (the event's
 * reason was counted then): the failure it tells of, so that its history, once read, does not count
 * it again; undefined for any other event, which that poll sees for itself.
 */
export function eventBeforeLedger(
  event: MergeQueueEvent,
  receivedAt: number,
): ((flow: QueueFlow) => QueueFlow) | undefined {
  const queueEvent = pullRequestQueueEvent(event);
  if (queueEvent?.kind !== 'exit' || queueEvent.outcome !== 'failed') return undefined;
  return (flow) => withEventFailure(flow, queueEvent, receivedAt);
}

function withEventFailure(
  flow: QueueFlow,
  queueEvent: PullRequestQueueEvent,
  receivedAt: number,
): QueueFlow {
  if (queueEvent.kind !== 'exit' || queueEvent.outcome !== 'failed') return flow;
  const entryHistory = flow.entryHistory ?? HIDDEN_ENTRY_HISTORY;
  const at = queueEvent.at ?? receivedAt;
  return {
    ...flow,
    entryHistory: recordEventFailure(entryHistory, queueEvent.prNumber, at, receivedAt),
  };
}
