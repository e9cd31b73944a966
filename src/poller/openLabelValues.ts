// Pull request states and priority names are label values Trunk may add to: a state it adds, a
// priority its users name. Each is exported as it comes, but one poll keeps at most
// MAX_OPEN_LABEL_VALUES beyond the documented ones; the rest count as `other`, so an answer of
// thousands of distinct values cannot make thousands of series.
import {
  KNOWN_PULL_REQUEST_STATES,
  UNKNOWN_PRIORITY,
  UNKNOWN_STATE,
  type PullRequestSnapshot,
} from '../snapshot/types.js';

/** Values beyond the documented ones one poll keeps, per label. */
export const MAX_OPEN_LABEL_VALUES = 20;

/** The label value of the states or priority names past MAX_OPEN_LABEL_VALUES. */
export const OTHER_LABEL_VALUE = 'other';

const DOCUMENTED_PRIORITIES = ['urgent', 'high', 'medium', 'low'] as const;

/** The pull requests with the states and priority names past the bound counted as `other`. */
export function withOpenLabelsCapped(prs: readonly PullRequestSnapshot[]): PullRequestSnapshot[] {
  const state = capper([...KNOWN_PULL_REQUEST_STATES, UNKNOWN_STATE]);
  const priority = capper([...DOCUMENTED_PRIORITIES, UNKNOWN_PRIORITY]);
  return prs.map((pr) => {
    const cappedState = state(pr.state);
    const cappedPriority = priority(pr.priorityName);
    return cappedState === pr.state && cappedPriority === pr.priorityName
      ? pr
      : { ...pr, state: cappedState, priorityName: cappedPriority };
  });
}

/** Keeps the documented values and the first MAX_OPEN_LABEL_VALUES others, in the order met. */
function capper(documented: readonly string[]): (value: string) => string {
  const known = new Set(documented);
  const others = new Set<string>();
  return (value) => {
    if (known.has(value) || others.has(value)) return value;
    if (others.size >= MAX_OPEN_LABEL_VALUES) return OTHER_LABEL_VALUE;
    others.add(value);
    return value;
  };
}
