import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { decodePageToken, encodePageToken } from '../../src/simulator/pageToken.js';
import { createSimulatorWorld, DEFAULT_SIMULATOR_START_TIME } from '../../src/simulator/world.js';
import type { RunningSimulator } from '../../src/simulator/server.js';
import { documentedQuarantinePage } from './documentedShapes.js';
import { API, post, startTestSimulator, WEB } from './harness.js';

type QuarantinedTestsPage = z.infer<typeof documentedQuarantinePage>;

const LIST = '/flaky-tests/list-quarantined-tests';

async function fetchPage(
  simulator: RunningSimulator,
  pageSize: number,
  pageToken?: string,
  repo: typeof WEB | typeof API = WEB,
): Promise<QuarantinedTestsPage> {
  const pageQuery =
    pageToken === undefined
      ? { page_size: pageSize }
      : { page_size: pageSize, page_token: pageToken };
  const reply = await post(simulator, LIST, { repo, org_url_slug: 'acme', page_query: pageQuery });
  expect(reply.status, reply.text).toBe(200);
  return documentedQuarantinePage.parse(reply.json);
}

/** Follows next_page_token from the first page to the last. */
async function walk(simulator: RunningSimulator, pageSize: number, between?: () => void) {
  const pages: QuarantinedTestsPage[] = [];
  let token: string | undefined;
  do {
    const page = await fetchPage(simulator, pageSize, token);
    pages.push(page);
    token = page.page.next_page_token;
    between?.();
  } while (token !== '');
  return pages;
}

describe('quarantine list paging', () => {
  it('walks every page exactly once and the union is total_rows', async () => {
    const simulator = await startTestSimulator({ seed: 21 });
    for (const pageSize of [1, 7, 50, 100]) {
      const pages = await walk(simulator, pageSize);
      const first = pages[0]?.page;
      if (first === undefined) throw new Error('no page');
      const ids = pages.flatMap((page) => page.quarantined_tests.map((test) => test.test_case_id));
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.length).toBe(first.total_rows);
      expect(pages.length).toBe(first.total_pages);
      expect(first.total_pages).toBe(Math.ceil(first.total_rows / pageSize));
      pages.forEach((page, index) => {
        expect(page.page.page_index).toBe(index);
        expect(page.page.total_rows).toBe(first.total_rows);
        expect(page.page.prev_page_token === '').toBe(index === 0);
        expect(page.quarantined_tests.length).toBe(
          index < pages.length - 1 ? pageSize : first.total_rows - pageSize * index,
        );
      });
    }
  });

  it('treats an empty and an absent page_token as the first page', async () => {
    const simulator = await startTestSimulator({ seed: 21 });
    const absent = await fetchPage(simulator, 50);
    const empty = await fetchPage(simulator, 50, '');
    expect(empty).toEqual(absent);
    expect(absent.page.page_index).toBe(0);
    expect(absent.page.total_pages).toBeGreaterThan(1);
  });

  it('fills prev and last tokens that lead to the right pages', async () => {
    const simulator = await startTestSimulator({ seed: 21 });
    const first = await fetchPage(simulator, 10);
    const last = await fetchPage(simulator, 10, first.page.last_page_token);
    expect(last.page.page_index).toBe(first.page.total_pages - 1);
    expect(last.page.next_page_token).toBe('');
    expect(last.page.last_page_token).toBe(first.page.last_page_token);
    const beforeLast = await fetchPage(simulator, 10, last.page.prev_page_token);
    expect(beforeLast.page.page_index).toBe(first.page.total_pages - 2);
    expect(beforeLast.page.next_page_token).toBe(first.page.last_page_token);
  });

  it('uses opaque tokens, never plain numbers', async () => {
    const simulator = await startTestSimulator({ seed: 21 });
    const first = await fetchPage(simulator, 10);
    const tokens = [first.page.next_page_token, first.page.last_page_token];
    for (const token of tokens) {
      expect(token).not.toBe('');
      expect(token).not.toMatch(/^\d+$/);
      expect(decodePageToken(token)).toBeDefined();
    }
  });

  it('keeps a walk on one consistent list while the list changes', async () => {
    const world = createSimulatorWorld({ seed: 4 });
    const simulator = await startTestSimulator({ world });
    let t = DEFAULT_SIMULATOR_START_TIME;
    const before = world.statistics();
    // Move the world a lot between pages: tests are added, removed and change status meanwhile.
    const pages = await walk(simulator, 5, () => {
      t += 300;
      world.advance(t);
    });
    const after = world.statistics();
    expect(after.quarantineAdded + after.quarantineRemoved).toBeGreaterThan(
      before.quarantineAdded + before.quarantineRemoved,
    );
    const first = pages[0]?.page;
    const ids = pages.flatMap((page) => page.quarantined_tests.map((test) => test.test_case_id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe(first?.total_rows);
    // A fresh walk sees the list as it is now.
    const fresh = await fetchPage(simulator, 5);
    expect(fresh.page.total_rows).not.toBe(first?.total_rows);
  });

  it('continues on the current list once the list version of a walk has expired', async () => {
    const world = createSimulatorWorld({ seed: 4 });
    const simulator = await startTestSimulator({ world });
    const first = await fetchPage(simulator, 10);
    world.advance(DEFAULT_SIMULATOR_START_TIME + 3 * 86_400);
    const second = await fetchPage(simulator, 10, first.page.next_page_token);
    const current = await fetchPage(simulator, 10);
    expect(second.page.page_index).toBe(1);
    expect(second.page.total_rows).toBe(current.page.total_rows);
    expect(second.page.total_rows).not.toBe(first.page.total_rows);
  });

  it('answers 400 for tokens it did not make', async () => {
    const simulator = await startTestSimulator({ seed: 21 });
    const forged = encodePageToken({ offset: 10, listVersion: 999_999, listKey: 'x' });
    for (const token of ['10', 'abc', 'qpt1_!!!', 'qpt1_e30', forged]) {
      const reply = await post(simulator, LIST, {
        repo: WEB,
        org_url_slug: 'acme',
        page_query: { page_size: 10, page_token: token },
      });
      expect({ token, status: reply.status }).toEqual({ token, status: 400 });
      expect(reply.text).toMatch(/page_token/);
    }
  });

  it('answers 400 for a token made for another repository', async () => {
    const simulator = await startTestSimulator({ seed: 21 });
    const fromWeb = (await fetchPage(simulator, 10, '', WEB)).page.next_page_token;
    const fromApi = (await fetchPage(simulator, 10, '', API)).page.next_page_token;
    // Use the token whose list version also exists in the other list, so only the repository
    // check can reject it.
    const webVersion = decodePageToken(fromWeb)?.listVersion ?? 0;
    const apiVersion = decodePageToken(fromApi)?.listVersion ?? 0;
    const [token, repo] = webVersion <= apiVersion ? [fromWeb, API] : [fromApi, WEB];
    const reply = await post(simulator, LIST, {
      repo,
      org_url_slug: 'acme',
      page_query: { page_size: 10, page_token: token },
    });
    expect(reply.status).toBe(400);
    expect(reply.text).toMatch(/page_token/);
  });
});
