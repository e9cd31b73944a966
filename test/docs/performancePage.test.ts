// What docs/performance.md says of the scrape path is what the server does: `/metrics` is a route
// of the Express app (server/app.ts), so the page must not say scrapes bypass Express.
import { describe, expect, it } from 'vitest';
import { SnapshotStore } from '../../src/snapshot/store.js';
import { createTestHttpApp } from '../support/httpApp.js';
import { pageSection } from './pages.js';

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
