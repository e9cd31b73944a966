// Cursor paging of the v2 lists: limits, totals, cursors tied to endpoint and filters, and walks
// that stay whole while the world moves between pages.
import { describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/server.js';
import { errorOf, getPage, startV2Simulator, v2Request, walk } from './v2Harness.js';

const TESTS = '/v2/tests?quarantineState=quarantined';

async function firstQueueId(simulator: RunningSimulator): Promise<string> {
  return String((await getPage(simulator, '/v2/merge-queues')).data[0]?.id);
}

describe('v2 paging', () => {
  it('walks every row once for any limit, and the total counts them', async () => {
    const simulator = await startV2Simulator({ seed: 12 });
    const { total } = await getPage(simulator, `${TESTS}&includeTotal=true&limit=1`);
    expect(total).toBeGreaterThan(100);
    for (const limit of [1, 7, 25, 100]) {
      if (limit === 1 && total !== undefined && total > 400) continue;
      const { rows, pages } = await walk(simulator, `${TESTS}&limit=${limit}`);
      expect(rows.length).toBe(total);
      expect(new Set(rows.map((row) => row.id)).size).toBe(total);
      expect(pages).toBe(Math.ceil((total ?? 0) / limit));
    }
    const first = await getPage(simulator, TESTS);
    expect(first.data.length).toBe(25);
    expect(first.total).toBeUndefined();
  });

  it('refuses limits outside 1-100 and includeTotal other than true or false', async () => {
    const simulator = await startV2Simulator();
    for (const query of ['limit=0', 'limit=101', 'limit=ten', 'limit=2.5', 'includeTotal=yes']) {
      const reply = await v2Request(simulator, `/v2/merge-queues?${query}`);
      expect(reply.status, query).toBe(400);
      expect(errorOf(reply)?.code).toBe('VALIDATION_FAILED');
      expect(errorOf(reply)?.message).toContain(query.split('=')[0]);
    }
    const unknown = await v2Request(simulator, '/v2/tests?quarantined=true');
    expect(errorOf(unknown)?.message).toContain('unknown query parameter quarantined');
  });

  it('refuses a made-up cursor, and one made for another endpoint or other filters', async () => {
    const simulator = await startV2Simulator();
    const id = await firstQueueId(simulator);
    const pulls = `/v2/merge-queues/${id}/pull-requests`;
    const page = await getPage(simulator, `${pulls}?limit=1`);
    const cursor = encodeURIComponent(String(page.nextCursor));
    expect((await v2Request(simulator, `${pulls}?limit=5&cursor=${cursor}`)).status).toBe(200);
    for (const path of [
      `${pulls}?cursor=12`,
      `${pulls}?cursor=v2c_bm9wZQ`,
      `${pulls}?state=testing&cursor=${cursor}`,
      `${TESTS}&cursor=${cursor}`,
    ]) {
      const reply = await v2Request(simulator, path);
      expect(reply.status, path).toBe(400);
      expect(errorOf(reply)?.code).toBe('INVALID_CURSOR');
    }
  });

  it('never skips nor repeats a row that stayed while the world moves between pages', async () => {
    const simulator = await startV2Simulator({ seed: 13 });
    const { world } = simulator;
    const before = new Set((await walk(simulator, `${TESTS}&limit=100`)).rows.map((row) => row.id));
    // An hour per page: tests are added, released and change status meanwhile.
    const { rows } = await walk(simulator, `${TESTS}&limit=10`, () => {
      world.advance(world.now() + 3600);
    });
    const after = new Set((await walk(simulator, `${TESTS}&limit=100`)).rows.map((row) => row.id));
    const seen = rows.map((row) => String(row.id));
    expect(new Set(seen).size).toBe(seen.length);
    const stayed = [...before].filter((id) => after.has(id));
    expect(seen).toEqual(expect.arrayContaining(stayed));
    expect(stayed.length).toBeLessThan(before.size);
    expect(stayed.length).toBeLessThan(after.size);
  });
});
