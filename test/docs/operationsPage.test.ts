// Facts of docs/operations.md that live in the code: the exporter's endpoints (the paths the
// webhook path may not take), the longest Retry-After pause the client honours, how many PR
// lookups a poll sends at a time (also in docs/architecture.md), with what happens at one slot,
// and the most pages an API v2 walk takes.
import { describe, expect, it } from 'vitest';
import { RESERVED_HTTP_PATHS } from '../../src/config/schema.js';
import { LOOKUPS_AT_A_TIME, lookupsAtATime } from '../../src/poller/lookupFanOut.js';
import { MAX_RETRY_AFTER_MS } from '../../src/trunk/retryPolicy.js';
import { V2_MAX_LIMIT } from '../../src/trunk/v2Schemas.js';
import { V2_MAX_PAGES, V2_MAX_TEST_LIST_PAGES } from '../../src/trunk/v2Paging.js';
import { pageSection, readPage } from './pages.js';

describe('docs/operations.md', () => {
  it("lists the exporter's own endpoints and the webhook path, which basic auth leaves open", () => {
    const section = pageSection('docs/operations.md', '## HTTP endpoints');
    const paths = [...section.matchAll(/^\| `(?:GET|POST) ([^`]+)` \|/gm)].map((m) => m[1]);
    expect(paths.filter((path) => path !== '<webhooks.path>').sort()).toEqual(
      [...RESERVED_HTTP_PATHS].sort(),
    );
    expect(paths).toContain('<webhooks.path>');
    const basicAuth = section.slice(section.indexOf('With `server.basicAuthUsers` set'));
    expect(basicAuth.replace(/\s+/g, ' ')).toMatch(
      /every path above except `POST <webhooks\.path>`/,
    );
  });

  it('states the longest Retry-After pause the client honours', () => {
    const faults = pageSection('docs/operations.md', '## Faults from the Trunk API');
    const rows = faults.split('\n').filter((line) => line.startsWith('| 429 with `Retry-After'));
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      const minutes = /at most (\d+) minutes/.exec(row)?.[1];
      expect(Number(minutes) * 60_000, row).toBe(MAX_RETRY_AFTER_MS);
    }
  });

  it.each(['docs/operations.md', 'docs/architecture.md'])(
    '%s gives the lookups a poll sends at a time as the code computes them, one slot included',
    (page) => {
      const text = readPage(page).replace(/\s+/g, ' ');
      const formula = /min\((\d+), `maxConcurrentRequests` − 1\) at a time, at least 1/.exec(text);
      expect(formula, page).not.toBeNull();
      const most = Number(formula?.[1]);
      expect(most).toBe(LOOKUPS_AT_A_TIME);
      for (let slots = 1; slots <= 10; slots++)
        expect(lookupsAtATime(slots), `${slots} slots`).toBe(
          Math.max(1, Math.min(most, slots - 1)),
        );
      // At one slot the lookups take every slot there is: the page must say so, not "never".
      expect(lookupsAtATime(1)).toBe(1);
      expect(text, page).toMatch(/`maxConcurrentRequests: 1`[^.|]*(the only one|no slot)/);
    },
  );

  it('gives the most pages an API v2 walk takes, and says a longer list fails, as the code has it', () => {
    const count = (text: string | undefined) => Number(text?.replace(/,/g, ''));
    const v2 = pageSection('docs/operations.md', '### Through API v2 (an API key)').replace(
      /\s+/g,
      ' ',
    );
    const bound = /at most ([\d,]+) pages \(([\d,]+) rows\): a longer list fails its read/.exec(v2);
    expect(bound).not.toBeNull();
    expect(count(bound?.[1])).toBe(V2_MAX_PAGES);
    expect(count(bound?.[2])).toBe(V2_MAX_PAGES * V2_MAX_LIMIT);
    const faults = pageSection('docs/operations.md', '## Faults from the Trunk API');
    const row = faults.split('\n').find((line) => line.startsWith('| API v2: a list of more than'));
    expect(row).toContain(`"more than ${String(V2_MAX_PAGES)} pages; stopped"`);
    expect(count(/more than ([\d,]+) pages \(/.exec(row ?? '')?.[1])).toBe(V2_MAX_PAGES);
    const tests =
      /test lists \(quarantined; flaky and broken\) are walked ([\d,]+) pages at most \(([\d,]+) tests\)/.exec(
        v2,
      );
    expect(count(tests?.[1])).toBe(V2_MAX_TEST_LIST_PAGES);
    expect(count(tests?.[2])).toBe(V2_MAX_TEST_LIST_PAGES * V2_MAX_LIMIT);
    expect(count(/an organization-wide test list over ([\d,]+) \(/.exec(row ?? '')?.[1])).toBe(
      V2_MAX_TEST_LIST_PAGES,
    );
  });
});
