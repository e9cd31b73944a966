// A v2 list walked through the client: forEachV2Page (v2Paging.ts, which walks any pages and knows
// no client), each walk it stops (its paging not to be trusted, or past its bound) and each walk
// Trunk stops by refusing a cursor (`400 INVALID_CURSOR`) counted as a `paging_stopped` anomaly of
// the list's endpoint. The error fails a read; the count says which list's answers did it, so every
// read that walks a list goes through here.
import type { TrunkClient } from './client.js';
import { TrunkApiError } from './errors.js';
import { V2PagingError, forEachV2Page, type V2List } from './v2Paging.js';
import type { V2Page } from './v2Schemas.js';

/** What an API v2 read needs of the TrunkClient: its GETs and the count of odd answers. */
export type V2Reader = Pick<TrunkClient, 'readV2' | 'reportAnomaly'>;

/**
 * forEachV2Page, a walk it stops counted under the list's endpoint as `paging_stopped`, and so is a
 * page after the first answered `400 INVALID_CURSOR` ("a bad cursor", trunk-api-v2.md).
 */
export async function walkV2List<T>(
  client: Pick<TrunkClient, 'reportAnomaly'>,
  ...walk: Parameters<typeof forEachV2Page<T>>
): Promise<void> {
  const [fetchPage, list, take, maxPages] = walk;
  let pages = 0;
  const fetchCountedPage = async (cursor: string | undefined): Promise<V2Page<T>> => {
    pages += 1;
    try {
      return await fetchPage(cursor);
    } catch (error) {
      if (cursor === undefined || !refusesCursor(error)) throw error;
      // The walk fails rather than start again from the first page: `take` has tallied the pages
      // before this one (a second walk would count them twice), and a failed read costs one read
      // per interval and hides only its own families; the next read walks from the first page.
      // Not a V2PagingError: a read over a window asks for that window again, not giving it up.
      client.reportAnomaly(list.endpoint, 'paging_stopped', 1);
      throw cursorRefused(error, list, pages);
    }
  };
  try {
    await forEachV2Page(fetchCountedPage, list, take, maxPages);
  } catch (error) {
    if (error instanceof V2PagingError) client.reportAnomaly(error.endpoint, 'paging_stopped', 1);
    throw error;
  }
}

/** Whether `error` is Trunk refusing a cursor: an expired one, or one of other filters. */
function refusesCursor(error: unknown): error is TrunkApiError {
  return error instanceof TrunkApiError && error.status === 400 && error.code === 'INVALID_CURSOR';
}

/**
 * `refused`, its message naming the list, its endpoint and the page whose cursor Trunk refused;
 * Trunk's own message is left to `cause`, as it may quote the cursor.
 */
function cursorRefused(refused: TrunkApiError, list: V2List, page: number): TrunkApiError {
  return new TrunkApiError({
    endpoint: refused.endpoint,
    repo: refused.repo,
    branch: refused.branch,
    reason: refused.reason,
    status: refused.status,
    requestId: refused.requestId,
    attempts: refused.attempts,
    code: 'INVALID_CURSOR',
    detail: `${list.what} (GET /${list.endpoint}): Trunk refused the cursor of page ${String(page)} (HTTP 400 INVALID_CURSOR); stopped`,
    cause: refused,
  });
}

/** Every row of a v2 list, as walkV2List walks it. */
export async function allV2ListRows<T>(
  client: Pick<TrunkClient, 'reportAnomaly'>,
  fetchPage: (cursor: string | undefined) => Promise<V2Page<T>>,
  list: V2List,
  maxPages?: number,
): Promise<T[]> {
  const rows: T[] = [];
  const take = (page: readonly T[]): undefined => {
    for (const row of page) rows.push(row);
    return undefined;
  };
  await walkV2List(client, fetchPage, list, take, maxPages);
  return rows;
}
