/** How a pull request left the queue, as the `outcome` label. */
export const EXIT_OUTCOMES = ['merged', 'failed', 'cancelled', 'unknown'] as const;
export type ExitOutcome = (typeof EXIT_OUTCOMES)[number];
