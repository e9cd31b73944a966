import { z } from 'zod';

// The numeric settings of a merge queue that the exporter exports, read alike from v1's getQueue
// and v2's queue `config` ("`getQueue` state and settings" are the queue's `config`,
// trunk-api-v2.md). Trunk's v2 definition answers each as an `integer` with no bounds, and its
// description gives the floor ("`0` means no timeout", "`0` disables this", "At least 1"): a
// fraction or a value below the floor is Trunk's error, read as absent and counted
// (`invalid_field`), never exported as a setting. The bounds where a setting is written
// (`UpdateMergeQueueConfigRequest`: at most 1000 or 10080) are not applied to what is read: the
// answer's definition allows more, and an older queue may hold it.

/** Each setting's least value, from its description in `MergeQueueConfig`. */
export const QUEUE_SETTING_FLOORS = {
  concurrency: 0,
  // "`0` means bisection gets no dedicated capacity and shares `concurrency`."
  bisectionConcurrency: 0,
  // "`0` disables this."
  pendingFailureDepth: 0,
  // "At least 1."
  batchingMinSize: 1,
  // "`0` means never wait"
  batchingMaxWaitTimeMinutes: 0,
  // "**`0` means no timeout**"
  testingTimeoutMinutes: 0,
} as const;

export type QueueSettingName = keyof typeof QUEUE_SETTING_FLOORS;

/** A queue's numeric settings as parsed: each undefined that was a fraction or below its floor. */
export type QueueSettingValues = Readonly<Record<QueueSettingName, number | undefined>>;

const QUEUE_SETTING_NAMES = Object.keys(QUEUE_SETTING_FLOORS) as QueueSettingName[];

/**
 * A required numeric setting: any other type (or none) is no number, as before. A whole number at
 * or above the setting's floor is read as it is; a fraction, one below the floor, or one past the
 * largest double (JSON.parse reads it as ±Infinity, which zod would refuse as no number, costing
 * the whole answer) reads as undefined, for the queue's check to count (countSettingsOutOfRange).
 */
export function queueSetting(name: QueueSettingName) {
  const floor = QUEUE_SETTING_FLOORS[name];
  return (
    z
      // ±Infinity becomes -1, below every floor: read as absent, like any other value below it.
      .preprocess((value) => (value === Infinity || value === -Infinity ? -1 : value), z.number())
      .transform((value) => (Number.isInteger(value) && value >= floor ? value : undefined))
  );
}

/** How many of a parsed queue's settings were read as absent by queueSetting. */
export function countSettingsOutOfRange(settings: QueueSettingValues): number {
  let outOfRange = 0;
  for (const name of QUEUE_SETTING_NAMES) if (settings[name] === undefined) outOfRange += 1;
  return outOfRange;
}
