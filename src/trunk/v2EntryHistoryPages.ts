// The read of pull requests' queue-entry timelines (`GET /v2/queue-entry-history`). Its pages are
// not a list's: "`limit` counts pull requests, not transitions", so one page answers for every id
// asked, and a read follows a cursor only until each id asked has its group, at most one page per
// id, never for ids not asked; a group listed on two pages is joined into one timeline. Every
// call, each page included, keeps Trunk's rate for the endpoint (CallSpacing).
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
  const asked = new Set(pullRequestIds.map((id) => id.toLowerCase()));
  const groups = new Map<string, V2EntryHistory>();
  await walkV2List(
    client,
    (cursor) => {
      if (cursor !== undefined) query.set('cursor', cursor);
      const path = `queue-entry-history?${query.toString()}`;
      return spacing.run(() =>
        client.readV2(target, path, v2EntryHistoryPageSchema, checkEntryHistoryPage, options),
      );
    },
    {
      what: `the queue-entry history of ${String(pullRequestIds.length)} pull requests`,
      endpoint,
    },
    (page) => {
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
    // Each page answers for at least one id when Trunk pages as its definition says.
    Math.max(1, asked.size),
  );
  return [...groups.values()];
}
