// Where in Trunk webhooks are set up, as the Helm chart's NOTES.txt says it after an install, is
// where docs/webhooks.md says it: the same menus, and one endpoint for both products (the exporter
// verifies with one signing secret).
import { describe, expect, it } from 'vitest';
import { pageSection, readPage } from './pages.js';

const NOTES = 'helm/trunk-exporter/templates/NOTES.txt';

/** The menu paths a text names, e.g. `Settings → Organization → Webhooks`, on one line each. */
function menuPaths(text: string): string[] {
  const flat = text.replace(/\s+/g, ' ');
  return [
    ...flat.matchAll(
      /[A-Z][A-Za-z]*(?: [A-Z][A-Za-z]*)*(?: → [A-Z][A-Za-z]*(?: [A-Z][A-Za-z]*)*)+/g,
    ),
  ].map((match) => match[0]);
}

describe('docs/webhooks.md and the chart NOTES.txt', () => {
  it('send the user to the same place in Trunk, for one endpoint', () => {
    const notes = readPage(NOTES);
    const setup = pageSection('docs/webhooks.md', '## In Trunk').replace(/\s+/g, ' ');
    const paths = menuPaths(notes);
    expect(paths.length).toBeGreaterThan(0);
    for (const path of paths) expect(setup, path).toContain(path);
    expect(notes.replace(/\s+/g, ' ')).toContain('one endpoint');
    expect(setup).toContain('use one endpoint for both products');
  });
});
