import { SeenIds } from './seenIds.js';
import type { V2Endpoint, V2Page } from './v2Schemas.js';

/**
 * Pages a v2 walk may take: 1,000 pages of 100 rows. v2 lists say no total unless asked (which
 * costs Trunk an extra query), so the bound is a constant where v1's comes from total_rows; the
 * largest documented shape (30 PRs a queue, a few thousand quarantined tests) is far inside it.
 */
export const V2_MAX_PAGES = 1000;

/**
 * Pages of an organization-wide test list at most (500,000 tests): the lists grow with the
 * organization, and a walk keeps only its tallies and the ids it met (SeenIds, 8 bytes a slot),
 * never its rows. An organization of a thousand queues may well list more than V2_MAX_PAGES pages
 * of quarantined tests.
 */
export const V2_MAX_TEST_LIST_PAGES = 5000;

/** Pages of a queue's live entries at most (5,000 entries): the list is read on every poll. */
export const V2_MAX_LIVE_ENTRY_PAGES = 50;

/**
 * Pages of a queue's list over a window at most (concluded entries, testing results: 10,000 rows),
 * each walk keeping its rows until it ends: a window that long is weeks of a busy queue.
 */
export const V2_MAX_WINDOW_PAGES = 100;

/**
 * Empty pages in a row a walk follows: a filtered list may answer a page with no row that still
 * has a cursor (the rows it scanned matched nothing); a run longer than this is a broken cursor.
 */
export const V2_MAX_EMPTY_PAGES_IN_A_ROW = 20;

/**
 * The longest cursor a walk follows, in characters. Trunk's are short opaque tokens, and a cursor
 * is sent back in the URL, which few servers take past 8 KiB.
 */
export const V2_MAX_CURSOR_LENGTH = 8192;

/** A v2 list as its walk names it: in messages, and in the count of walks that stopped. */
export interface V2List {
  /** What is walked: `the merge queues`, `the pull requests of github.com/acme/web main`. */
  readonly what: string;
  /** Its endpoint, as `trunk_exporter_api_anomalies_total{endpoint}` and API errors name it. */
  readonly endpoint: V2Endpoint;
  /** Why its bound of pages is what it is, when a setting makes it: said when a walk passes it. */
  readonly bound?: string;
}

/**
 * Raised when a v2 list's paging cannot be trusted or followed: a repeated cursor, too many pages,
 * too many empty pages in a row, `hasMore` without a cursor, a cursor over V2_MAX_CURSOR_LENGTH.
 * Its message names the list and its endpoint, never a cursor (upstream data, of any length).
 */
export class V2PagingError extends Error {
  readonly endpoint: V2Endpoint;

  constructor(list: V2List, detail: string) {
    super(`${list.what} (GET /${list.endpoint}): ${detail}`);
    this.name = 'V2PagingError';
    this.endpoint = list.endpoint;
  }
}

/**
 * Each page's rows of a v2 list, given to `take` as they come, so that a walk of an organization's
 * tests never holds them all: pages fetched one after the other, each cursor taken only from the
 * previous answer; an empty page with a cursor is followed; `take` answering `'enough'` ends the
 * walk there. A cursor seen twice, more than V2_MAX_EMPTY_PAGES_IN_A_ROW empty pages in a row, more
 * than `maxPages` pages, a cursor longer than V2_MAX_CURSOR_LENGTH, or a page saying there is
 * more without a cursor ends the walk with an error instead of looping or counting short.
 */
export async function forEachV2Page<T>(
  fetchPage: (cursor: string | undefined) => Promise<V2Page<T>>,
  list: V2List,
  take: (rows: readonly T[]) => 'enough' | undefined,
  maxPages = V2_MAX_PAGES,
): Promise<void> {
  // Hashes of the cursors met, to tell a cycle: as strings, a walk of thousands of pages of the
  // longest cursors would hold every one of them until its last page.
  const seenCursors = new SeenIds();
  let cursor: string | undefined;
  let emptyInARow = 0;
  for (let pageIndex = 0; ; pageIndex++) {
    if (pageIndex >= maxPages) {
      const why = list.bound === undefined ? '' : `: ${list.bound}`;
      throw new V2PagingError(list, `more than ${String(maxPages)} pages; stopped${why}`);
    }
    const page = await fetchPage(cursor);
    if (take(page.data) === 'enough') return;
    const next = page.nextCursor ?? undefined;
    // nextCursor is "null on the last page" and hasMore "true when another page is available": a
    // page that says more without a cursor cannot be followed, and its walk would count short; a
    // cursor is followed even beside hasMore: false (the next page says whether there is more).
    if (next === undefined || next === '') {
      if (page.hasMore !== true) return;
      throw new V2PagingError(
        list,
        `page ${String(pageIndex + 1)} says hasMore but gives no nextCursor; stopped`,
      );
    }
    if (next.length > V2_MAX_CURSOR_LENGTH) {
      throw new V2PagingError(
        list,
        `page ${String(pageIndex + 1)} gives a nextCursor of ${String(next.length)} characters, longer than ${String(V2_MAX_CURSOR_LENGTH)}; stopped`,
      );
    }
    emptyInARow = page.data.length === 0 ? emptyInARow + 1 : 0;
    if (emptyInARow > V2_MAX_EMPTY_PAGES_IN_A_ROW) {
      throw new V2PagingError(
        list,
        `${String(emptyInARow)} empty pages in a row, each with a next cursor; stopped`,
      );
    }
    if (!seenCursors.firstTime(next)) {
      throw new V2PagingError(list, `a cursor repeated after ${String(pageIndex + 1)} pages`);
    }
    cursor = next;
  }
}
