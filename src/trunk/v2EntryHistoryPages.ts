// The read of pull requests' queue-entry timelines (`GET /v2/queue-entry-history`). Its pages are
// not a list's: "`limit` counts pull requests, not transitions", so one page answers for every id
// asked, and a read follows a cursor only until each id asked has its group, at most one page of
// groups per id, never for ids not asked (empty pages between them are followed as every walk
// follows them); a group listed on two pages is joined into one timeline. Every call, each page
// included, and every retry of one keeps Trunk's rate for the endpoint (CallSpacing).
import type { CallSpacing } from './callSpacing.js';
import type { CallOptions } from './client.js';
import {
  V2_ENTRY_HISTORY_MAX_IDS,
  checkEntryHistoryPage,
  inTimelineOrder,
  v2EntryHistoryPageSchema,
  type V2EntryHistory,
} from './v2EntryHistorySchemas.js';
import { walkV2List, type V2Reader } from './v2ListWalk.js';
import { V2PagingError, V2_MAX_EMPTY_PAGES_IN_A_ROW, type V2List } from './v2Paging.js';
import { organizationTarget } from './v2Requests.js';
import { V2_ENDPOINTS } from './v2Schemas.js';

/**
 * The queue-entry timelines of up to 50 pull requests of any queue of the organization, one group
 * per pull request asked that Trunk knows, each call started through `spacing`.
 */
export async function listQueueEntryHistory(
  client: V2Reader,
  spacing: CallSpacing,
  pullRequestIds: readonly string[],
  options: CallOptions,
): Promise<V2EntryHistory[]> {
  if (pullRequestIds.length > V2_ENTRY_HISTORY_MAX_IDS) {
    throw new RangeError(
      `at most ${String(V2_ENTRY_HISTORY_MAX_IDS)} pull request ids per queue-entry history read, not ${String(pullRequestIds.length)}`,
    );
  }
  const endpoint = V2_ENDPOINTS.listQueueEntryHistory;
  const target = organizationTarget(endpoint);
  // One page answers for every id asked.
  const query = new URLSearchParams({
    pullRequestIds: pullRequestIds.join(','),
    limit: String(V2_ENTRY_HISTORY_MAX_IDS),
  });
  // A retry is spaced as the calls are: it is a request under the same key.
  const spaced: CallOptions = { ...options, minRetryDelayMs: spacing.spacingMs };
  const asked = new Set(pullRequestIds.map((id) => id.toLowerCase()));
  const groups = new Map<string, V2EntryHistory>();
  const list: V2List = {
    what: `the queue-entry history of ${String(pullRequestIds.length)} pull requests`,
    endpoint,
  };
  // Each page of groups answers for at least one id when Trunk pages as its definition says; a
  // page without one (a filtered list's empty page with a cursor) is followed as in every walk.
  let pagesOfGroups = 0;
  await walkV2List(
    client,
    (cursor) => {
      if (cursor !== undefined) {
        if (pagesOfGroups >= asked.size) {
          throw new V2PagingError(
            list,
            `more than ${String(asked.size)} pages of groups for ${String(asked.size)} pull requests; stopped`,
          );
        }
        query.set('cursor', cursor);
      }
      const path = `queue-entry-history?${query.toString()}`;
      return spacing.run(() =>
        client.readV2(target, path, v2EntryHistoryPageSchema, checkEntryHistoryPage, spaced),
      );
    },
    list,
    (page) => {
      if (page.length > 0) pagesOfGroups += 1;
      for (const group of page) {
        if (!asked.has(group.pullRequestId)) continue;
        const kept = groups.get(group.pullRequestId);
        groups.set(
          group.pullRequestId,
          kept === undefined
            ? group
            : {
                ...kept,
                transitions: inTimelineOrder([...kept.transitions, ...group.transitions]),
              },
        );
      }
      return groups.size === asked.size ? 'enough' : undefined;
    },
    asked.size + V2_MAX_EMPTY_PAGES_IN_A_ROW,
  );
  return [...groups.values()];
}
