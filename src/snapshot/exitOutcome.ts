/** How a pull request left the queue, as the `outcome` label. */
export const EXIT_OUTCOMES = ['merged', 'failed', 'cancelled', 'unknown'] as const;
export type ExitOutcome = (typeof EXIT_OUTCOMES)[number];

/** The final states a pull request's stay ends in, as the polls and Trunk's v2 spell them alike. */
export const FINAL_PR_STATES: ReadonlySet<string> = new Set<ExitOutcome>([
  'merged',
  'failed',
  'cancelled',
]);
