import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { V2_MAX_CURSOR_LENGTH, forEachV2Page } from '../../src/trunk/v2Paging.js';

setFlagsFromString('--expose-gc');
/** A full collection, so that the heap in use is what is still held. */
const gc = runInNewContext('gc') as () => void;

const PAGES = 5000;

describe('forEachV2Page', () => {
  it('holds a few bytes per cursor met, not the cursor: 5,000 pages of the longest cursors keep under 8 MB', async () => {
    // A hostile list: each page a new cursor of the most characters a walk follows, one of them
    // outside Latin-1 (two bytes a character). Kept as strings to tell a cycle, they came to 80 MB
    // by the last page of an organization's test list, and two such walks run side by side.
    let baseline = 0;
    let held = 0;
    const cursorOf = (page: number): string =>
      `${String(page)}\u0394`.padEnd(V2_MAX_CURSOR_LENGTH, 'z');
    const fetchPage = (cursor: string | undefined) => {
      const page = cursor === undefined ? 0 : Number.parseInt(cursor, 10) + 1;
      if (page === 1) {
        gc();
        baseline = process.memoryUsage().heapUsed;
      }
      if (page === PAGES - 1) {
        gc();
        held = process.memoryUsage().heapUsed - baseline;
      }
      const last = page === PAGES - 1;
      return Promise.resolve({
        data: [page],
        nextCursor: last ? null : cursorOf(page),
        hasMore: !last,
      });
    };
    let rows = 0;
    await forEachV2Page(
      fetchPage,
      { what: 'the hostile list', endpoint: 'v2/tests' },
      (page) => {
        rows += page.length;
        return undefined;
      },
      PAGES,
    );
    expect(rows).toBe(PAGES);
    expect(baseline).toBeGreaterThan(0);
    expect(held).toBeLessThan(8 * 1024 * 1024);
  });
});
