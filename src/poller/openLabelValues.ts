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
import { OTHER_LABEL } from '../snapshot/topLabelTypes.js';
import { PRIORITY_NAMES } from '../trunk/v2Vocabulary.js';

/** Values beyond the documented ones one poll keeps, per label. */
export const MAX_OPEN_LABEL_VALUES = 20;

/** The pull requests with the states and priority names past the bound counted as `other`. */
export function withOpenLabelsCapped(prs: readonly PullRequestSnapshot[]): PullRequestSnapshot[] {
  const state = capper([...KNOWN_PULL_REQUEST_STATES, UNKNOWN_STATE]);
  const priority = capper([...PRIORITY_NAMES.values(), UNKNOWN_PRIORITY]);
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
    if (others.size >= MAX_OPEN_LABEL_VALUES) return OTHER_LABEL;
    others.add(value);
    return value;
  };
}
