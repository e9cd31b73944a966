import type { V2Page } from './v2Schemas.js';

/**
 * Pages a v2 walk may take: 1,000 pages of 100 rows. v2 lists say no total unless asked (which
 * costs Trunk an extra query), so the bound is a constant where v1's comes from total_rows; the
 * largest documented shape (30 PRs a queue, a few thousand quarantined tests) is far inside it.
 */
export const V2_MAX_PAGES = 1000;

/** Raised when a v2 list's paging cannot be trusted: a repeated cursor, too many pages, an empty page that says more follow. */
export class V2PagingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'V2PagingError';
  }
}

/**
 * Every row of a v2 list: pages fetched one after the other, each cursor taken only from the
 * previous answer. A cursor seen twice, an empty page that promises more, or more than `maxPages`
 * pages ends the walk with an error instead of looping.
 */
export async function walkV2Pages<T>(
  fetchPage: (cursor: string | undefined) => Promise<V2Page<T>>,
  /** What is walked, for messages: `the merge queues`, `pull requests of github.com/acme/web main`. */
  what: string,
  maxPages = V2_MAX_PAGES,
): Promise<T[]> {
  const rows: T[] = [];
  const seenCursors = new Set<string>();
  let cursor: string | undefined;
  for (let pageIndex = 0; ; pageIndex++) {
    if (pageIndex >= maxPages) {
      throw new V2PagingError(`${what}: more than ${maxPages} pages; stopped`);
    }
    const page = await fetchPage(cursor);
    for (const row of page.data) rows.push(row);
    const next = page.nextCursor ?? undefined;
    // hasMore and nextCursor say the same; a cursor without hasMore: false is followed.
    if (next === undefined || next === '' || page.hasMore === false) return rows;
    if (page.data.length === 0) {
      throw new V2PagingError(`${what}: empty page ${pageIndex + 1} with a next cursor`);
    }
    if (seenCursors.has(next)) {
      throw new V2PagingError(`${what}: a cursor repeated after ${pageIndex + 1} pages`);
    }
    seenCursors.add(next);
    cursor = next;
  }
}
