// A v2 list walked through the client: forEachV2Page (v2Paging.ts, which walks any pages and knows
// no client), each walk it stops (its paging not to be trusted, or past its bound) counted as a
// `paging_stopped` anomaly of the list's endpoint. The error fails a read; the count says which
// list's answers did it, so every read that walks a list goes through here.
import type { TrunkClient } from './client.js';
import { V2PagingError, forEachV2Page, type V2List } from './v2Paging.js';
import type { V2Page } from './v2Schemas.js';

/** What an API v2 read needs of the TrunkClient: its GETs and the count of odd answers. */
export type V2Reader = Pick<TrunkClient, 'readV2' | 'reportAnomaly'>;

/** forEachV2Page, a walk it stops counted under the list's endpoint as `paging_stopped`. */
export async function walkV2List<T>(
  client: Pick<TrunkClient, 'reportAnomaly'>,
  ...walk: Parameters<typeof forEachV2Page<T>>
): Promise<void> {
  try {
    await forEachV2Page(...walk);
  } catch (error) {
    if (error instanceof V2PagingError) client.reportAnomaly(error.endpoint, 'paging_stopped', 1);
    throw error;
  }
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
