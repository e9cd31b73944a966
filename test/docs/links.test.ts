// The README and the docs pages as a newcomer walks them: the README is short, starts with the
// two commands, links every page under docs/, and every relative link of every page reaches a
// file, and a heading of it when the link names one.
import { existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pagePaths, readPage, ROOT } from './pages.js';

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a page's headings, outside code blocks. */
function anchorsOf(path: string): Set<string> {
  const anchors = new Set<string>();
  let inFence = false;
  for (const line of readPage(path).split('\n')) {
    if (line.startsWith('```')) inFence = !inFence;
    const heading = /^#{1,6} (.+)$/.exec(line)?.[1];
    if (!inFence && heading !== undefined) anchors.add(anchorOf(heading));
  }
  return anchors;
}

/** The relative links of a page: `[text](target)`, outside code blocks. */
function linksOf(path: string): string[] {
  const text = readPage(path).replace(/```[\s\S]*?```/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1] ?? '')
    .filter((target) => !/^[a-z]+:/.test(target));
}

describe('the README and docs/', () => {
  it('keep the README at most 300 lines, with the two commands on its first screen', () => {
    const lines = readPage('README.md').split('\n');
    expect(lines.length).toBeLessThanOrEqual(300);
    const firstScreen = lines.slice(0, 40).join('\n');
    expect(firstScreen).toContain('npm ci && npm run demo');
    expect(firstScreen).toContain('npm ci && npm test');
  });

  it('link every page under docs/ from the README', () => {
    const linked = new Set(linksOf('README.md').map((target) => target.split('#')[0]));
    for (const page of pagePaths().filter((path) => path.startsWith('docs/')))
      expect(linked, page).toContain(page);
  });

  it('have only relative links that reach a file, and a heading of it when they name one', () => {
    for (const page of pagePaths()) {
      for (const link of linksOf(page)) {
        const [file = '', anchor] = link.split('#');
        const target = file === '' ? page : relative(ROOT, join(ROOT, dirname(page), file));
        expect(existsSync(join(ROOT, target)), `${page}: ${link}`).toBe(true);
        if (anchor !== undefined && target.endsWith('.md'))
          expect(anchorsOf(target), `${page}: ${link}`).toContain(anchor);
      }
    }
  });
});
