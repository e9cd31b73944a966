// Why the host calls a pull request not mergeable: v2's `mergeabilityDetails.reasons`. v1 shows
// only `not_mergeable` for the same pull request; the reasons are a pure function of its id, so
// every read of one PR names the same blockers and the world's random streams stay untouched.
import { createRandom, deriveSeed } from './random.js';

/** The documented reason codes (trunk-api-v2.md "readiness"). */
export const MERGEABILITY_REASON_CODES = [
  'conflict',
  'behind',
  'draft',
  'closed',
  'pending',
  'awaitingCheck',
  'failingCheck',
  'reviewRequired',
  'changesRequested',
  'stackNeedsRebase',
  'other',
] as const;
export type MergeabilityReasonCode = (typeof MERGEABILITY_REASON_CODES)[number];

export interface MergeabilityReason {
  readonly code: MergeabilityReasonCode;
  readonly message: string;
}

const MESSAGES: Readonly<Record<MergeabilityReasonCode, string>> = {
  conflict: 'This branch has conflicts that must be resolved',
  behind: 'This branch is out-of-date with the base branch',
  draft: 'This pull request is still a work in progress',
  closed: 'This pull request is closed',
  pending: 'Merging is blocked while the host computes mergeability',
  awaitingCheck: 'Required status checks are expected but have not reported',
  failingCheck: 'Required status checks are failing',
  reviewRequired: 'At least one approving review is required',
  changesRequested: 'Changes were requested by a reviewer',
  stackNeedsRebase: 'The stack this pull request belongs to needs a rebase',
  other: 'Merging is blocked by a branch protection rule',
};

/** How often each code is the main blocker: conflicts most, the exotic ones rarely. */
const WEIGHTS: readonly (readonly [MergeabilityReasonCode, number])[] = [
  ['conflict', 35],
  ['behind', 15],
  ['failingCheck', 14],
  ['reviewRequired', 12],
  ['changesRequested', 7],
  ['draft', 6],
  ['awaitingCheck', 5],
  ['stackNeedsRebase', 3],
  ['other', 3],
];
const WEIGHT_TOTAL = WEIGHTS.reduce((sum, [, weight]) => sum + weight, 0);

function pickCode(roll: number): MergeabilityReasonCode {
  let left = roll * WEIGHT_TOTAL;
  for (const [code, weight] of WEIGHTS) {
    left -= weight;
    if (left < 0) return code;
  }
  return 'other';
}

/** The reasons the host gives for pull request `pullRequestId` being not mergeable (one or two). */
export function mergeabilityReasons(pullRequestId: string): MergeabilityReason[] {
  const random = createRandom(deriveSeed(0, `mergeability:${pullRequestId}`));
  const codes = [pickCode(random.next())];
  // A second blocker now and then (a conflict and a missing review, say).
  if (random.chance(0.25)) {
    const second = pickCode(random.next());
    if (second !== codes[0]) codes.push(second);
  }
  return codes.map((code) => ({ code, message: MESSAGES[code] }));
}
