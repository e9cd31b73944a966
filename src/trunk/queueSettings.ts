import { z } from 'zod';

// The settings of a merge queue that the exporter reads for a gauge or a label only (its numeric
// settings, the flags of `trunk_merge_queue_setting_enabled`, the mode and methods of
// `trunk_merge_queue_info`, its required statuses), read alike from v1's getQueue and v2's queue
// `config` ("`getQueue` state and settings" are the queue's `config`, trunk-api-v2.md). Both
// definitions require each of them and allow no null: one present but of another type, or a
// number that is a fraction or below the floor its description gives, is Trunk's error. It costs
// that setting alone: read as absent and counted (`invalid_field`), its series left out, the rest
// of the queue read. One absent fails the answer: neither definition lets Trunk leave
// it out. What identifies or counts the queue (its id, repository, branch, state, the PR list) is
// not read this way.
//
// Trunk's v2 definition answers each numeric setting as an `integer` with no bounds, and its
// description gives the floor ("`0` means no timeout", "`0` disables this", "At least 1"). The
// bounds where a setting is written (`UpdateMergeQueueConfigRequest`: at most 1000 or 10080) are
// not applied to what is read: the answer's definition allows more, and an older queue may hold it.

/** Each numeric setting's least value, from its description in `MergeQueueConfig`. */
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

/**
 * A setting read only when present: absent fails the answer (zod's own words, `expected number,
 * received undefined`, name it and its path); present, it is `read(value)`, undefined when the
 * value cannot be used, for the queue's check to count (settingsReadAsAbsent).
 */
function presentSetting<T>(expected: string, read: (value: unknown) => T | undefined) {
  return z
    .unknown()
    .refine((value) => value !== undefined, {
      message: `expected ${expected}, received undefined`,
      abort: true,
    })
    .transform(read);
}

/**
 * A numeric setting: a whole number at or above its floor is read as it is; anything else
 * present (a fraction, one below the floor, ±Infinity that JSON.parse makes of one past the
 * largest double, a string, null, an object) reads as undefined.
 */
export function queueSetting(name: QueueSettingName) {
  const floor = QUEUE_SETTING_FLOORS[name];
  return presentSetting('number', (value) =>
    typeof value === 'number' && Number.isInteger(value) && value >= floor ? value : undefined,
  );
}

/** A flag (`trunk_merge_queue_setting_enabled`): a boolean, else undefined. */
export const queueFlag = presentSetting('boolean', (value) =>
  typeof value === 'boolean' ? value : undefined,
);

/**
 * A mode or method (`trunk_merge_queue_info`): a string, any but the empty one, else undefined. An
 * empty label value is to Prometheus no label at all, so '' is as unusable as another type.
 */
export const queueLabelValue = presentSetting('string', (value) =>
  typeof value === 'string' && value !== '' ? value : undefined,
);

/** `requiredStatuses` (counted by `trunk_merge_queue_required_statuses`): a list of names, else undefined. */
export const queueCheckNames = presentSetting('array', (value) =>
  Array.isArray(value) && value.every((name) => typeof name === 'string')
    ? (value as readonly string[])
    : undefined,
);

/** The names among `names` of the settings a parsed queue holds as undefined: read as absent. */
export function settingsReadAsAbsent<N extends string>(
  settings: Readonly<Record<N, unknown>>,
  names: readonly N[],
): N[] {
  return names.filter((name) => settings[name] === undefined);
}
