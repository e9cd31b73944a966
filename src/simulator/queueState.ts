/** Queue states of trunk-api-v1.md section 3. */
export const QUEUE_STATES = ['running', 'paused', 'draining', 'switching_modes'] as const;
export type QueueState = (typeof QUEUE_STATES)[number];
