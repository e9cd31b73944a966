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

/**
 * A queue's numeric settings as its snapshot holds them: durations in seconds, checks counted; a
 * setting the client read as absent (of another type, or a number that is a fraction or below its
 * floor) stays absent.
 */
export function queueNumbers(settings: QueueNumberSettings) {
  return {
    concurrency: settings.concurrency,
    testingTimeoutSeconds: inSeconds(settings.testingTimeoutMinutes),
    pendingFailureDepth: settings.pendingFailureDepth,
    bisectionConcurrency: settings.bisectionConcurrency,
    batchingMaxWaitSeconds: inSeconds(settings.batchingMaxWaitTimeMinutes),
    batchingMinSize: settings.batchingMinSize,
    requiredStatuses: settings.requiredStatuses?.length,
  };
}

function inSeconds(minutes: number | undefined): number | undefined {
  return minutes === undefined ? undefined : minutes * 60;
}
