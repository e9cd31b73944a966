import type { MergeQueue } from '../trunk/schemas.js';

/** The numeric settings of a queue, named alike by v1's getQueue and v2's queue `config`. */
type QueueNumberSettings = Pick<
  MergeQueue,
  | 'concurrency'
  | 'testingTimeoutMinutes'
  | 'pendingFailureDepth'
  | 'bisectionConcurrency'
  | 'batchingMaxWaitTimeMinutes'
  | 'batchingMinSize'
  | 'requiredStatuses'
>;

/** A queue's numeric settings as its snapshot holds them: durations in seconds, checks counted. */
export function queueNumbers(settings: QueueNumberSettings) {
  return {
    concurrency: settings.concurrency,
    testingTimeoutSeconds: settings.testingTimeoutMinutes * 60,
    pendingFailureDepth: settings.pendingFailureDepth,
    bisectionConcurrency: settings.bisectionConcurrency,
    batchingMaxWaitSeconds: settings.batchingMaxWaitTimeMinutes * 60,
    batchingMinSize: settings.batchingMinSize,
    requiredStatuses: settings.requiredStatuses.length,
  };
}
