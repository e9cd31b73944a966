// What docs/performance.md says of the scrape path is what the server does: `/metrics` is a route
// of the Express app (server/app.ts), so the page must not say scrapes bypass Express. And how
// often the exporter's own metrics are rendered, as docs/architecture.md and docs/benchmarks.md
// say it, is what the page cache (metrics/metricsPage.ts) does.
import { describe, expect, it } from 'vitest';
import {
  EXPORTER_PART_RENDERS_PER_SECOND,
  LIVE_PART_MAX_AGE_MS,
} from '../../src/metrics/livePart.js';
import { SnapshotStore } from '../../src/snapshot/store.js';
import { createTestHttpApp } from '../support/httpApp.js';
import { pageSection, readPage } from './pages.js';

/** The paths of the routes an Express application holds, in order. */
function expressRoutes(app: unknown): string[] {
  const router = (app as { router?: { stack?: { route?: { path?: unknown } }[] } }).router;
  if (router?.stack === undefined) throw new Error('the HTTP app is not an Express application');
  return router.stack.flatMap((layer) =>
    typeof layer.route?.path === 'string' ? [layer.route.path] : [],
  );
}

describe('docs/performance.md on the scrape path', () => {
  const prose = pageSection('docs/performance.md', '## What keeps it fast and small').replace(
    /\s+/g,
    ' ',
  );

  it('calls /metrics an Express route, as the app has it, and claims no bypass', () => {
    const { app } = createTestHttpApp({ store: new SnapshotStore(600) });
    expect(expressRoutes(app)).toContain('/metrics');
    expect(prose).toContain('`/metrics` is an Express route');
    expect(prose).not.toMatch(/bypass(es)? Express|without Express|plain `node:http` listener/i);
  });
});

describe("the exporter's own metrics on the scrape path", () => {
  it.each(['docs/architecture.md', 'docs/benchmarks.md'])(
    '%s gives how often they are rendered as the page cache has it',
    (page) => {
      const text = readPage(page).replace(/\s+/g, ' ');
      const rate = `rendered on every scrape, up to ${String(EXPORTER_PART_RENDERS_PER_SECOND)} times a second`;
      expect(text.includes(rate), `${page} says "${rate}"`).toBe(true);
      expect(LIVE_PART_MAX_AGE_MS).toBe(1000);
      const processMetrics =
        /process and Node\.js metrics[^.]*(at most once a second|up to a second)/;
      expect(processMetrics.test(text), `${page} says how old the process metrics may be`).toBe(
        true,
      );
      const stale = /own metrics re-rendered at most once a second/.exec(text)?.[0];
      expect(stale, page).toBeUndefined();
    },
  );
});
