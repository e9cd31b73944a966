// Facts of docs/operations.md that live in the code: the exporter's endpoints (the paths the
// webhook path may not take) and the longest Retry-After pause the client honours.
import { describe, expect, it } from 'vitest';
import { RESERVED_HTTP_PATHS } from '../../src/config/schema.js';
import { MAX_RETRY_AFTER_MS } from '../../src/trunk/retryPolicy.js';
import { pageSection } from './pages.js';

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
});
