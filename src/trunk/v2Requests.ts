// How an API v2 read names its call: the target that its logs, errors, request queue and anomaly
// counts carry (a merge queue's repository and branch, or the whole organization), and the query of
// a list's page. Kept apart from the reads so that every read names its calls alike, whichever
// module makes it.
import type { CallTarget } from './transport.js';
import { V2_MAX_LIMIT } from './v2Schemas.js';

/** A merge queue as the poller knows it: its v2 id and the labels its calls are logged with. */
export interface V2QueueRef {
  readonly id: string;
  /** `host/owner/name`. */
  readonly repo: string;
  readonly branch: string;
}

/** The `repo` of calls about the whole organization, for logs and the request queue. */
const ORGANIZATION = '(organization)';

/** The target of a call about the whole organization: no repository, no branch. */
export function organizationTarget(endpoint: CallTarget['endpoint']): CallTarget {
  return { endpoint, repo: ORGANIZATION, branch: undefined };
}

/** The target of a call about one merge queue: its repository and branch. */
export function queueTarget(endpoint: CallTarget['endpoint'], queue: V2QueueRef): CallTarget {
  return { endpoint, repo: queue.repo, branch: queue.branch };
}

/** The query of a list's page: `filters`, the largest limit, and the cursor of the page asked. */
export function pageQuery(
  filters: Readonly<Record<string, string>>,
  cursor: string | undefined,
): string {
  const query = new URLSearchParams(filters);
  query.set('limit', String(V2_MAX_LIMIT));
  if (cursor !== undefined) query.set('cursor', cursor);
  return query.toString();
}
