import { z } from 'zod';

// The numeric settings of a merge queue that the exporter exports, read alike from v1's getQueue
// and v2's queue `config` ("`getQueue` state and settings" are the queue's `config`,
// trunk-api-v2.md). Trunk's v2 definition answers each as an `integer` and bounds it where it is
// set (`UpdateMergeQueueConfigRequest`, `CreateMergeQueueRequest`): no queue holds a value outside
// those bounds, so one outside them is Trunk's error, read as absent and counted (`invalid_field`),
// never exported as a setting.

/** Each setting's bounds as `UpdateMergeQueueConfigRequest` gives them (`minimum`, `maximum`). */
export const QUEUE_SETTING_RANGES = {
  concurrency: { min: 1, max: 1000 },
  bisectionConcurrency: { min: 0, max: 1000 },
  pendingFailureDepth: { min: 0, max: 1000 },
  // "The batch size the queue prefers before starting a run [...]. At least 1."
  batchingMinSize: { min: 1, max: 1000 },
  batchingMaxWaitTimeMinutes: { min: 0, max: 10_080 },
  // "**`0` means no timeout**"
  testingTimeoutMinutes: { min: 0, max: 10_080 },
} as const;

export type QueueSettingName = keyof typeof QUEUE_SETTING_RANGES;

/** A queue's numeric settings as parsed: each undefined that was out of its range. */
export type QueueSettingValues = Readonly<Record<QueueSettingName, number | undefined>>;

const QUEUE_SETTING_NAMES = Object.keys(QUEUE_SETTING_RANGES) as QueueSettingName[];

/**
 * A required numeric setting: any other type (or none) is no number, as before. A whole number
 * within the setting's range is read as it is; a fraction, or one out of range, reads as
 * undefined, for the queue's check to count (countSettingsOutOfRange). JSON.parse reads a number
 * too large for a double as ±Infinity, which zod refuses as no number: it is read as the largest
 * double of its sign, out of range like any other, so it costs the setting and not the answer.
 */
export function queueSetting(name: QueueSettingName) {
  const { min, max } = QUEUE_SETTING_RANGES[name];
  return z
    .preprocess(
      (value) =>
        value === Infinity ? Number.MAX_VALUE : value === -Infinity ? -Number.MAX_VALUE : value,
      z.number(),
    )
    .transform((value) =>
      Number.isInteger(value) && value >= min && value <= max ? value : undefined,
    );
}

/** How many of a parsed queue's settings were out of range (read as absent by queueSetting). */
export function countSettingsOutOfRange(settings: QueueSettingValues): number {
  let outOfRange = 0;
  for (const name of QUEUE_SETTING_NAMES) if (settings[name] === undefined) outOfRange += 1;
  return outOfRange;
}
