// The user documentation: the README and the pages under docs/, read as the tests that check them
// against the code need them.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The repository's root directory. */
export const ROOT = join(import.meta.dirname, '..', '..');

/** A page's text, by its path from the repository root (`README.md`, `docs/metrics.md`). */
export function readPage(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

/** The paths of the README, CONTRIBUTING.md and every page under docs/. */
export function pagePaths(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', 'CONTRIBUTING.md', ...docs];
}

/** The text of a page between its heading `heading` (a whole line) and the next heading of that level or above. */
export function pageSection(path: string, heading: string): string {
  const text = readPage(path);
  const start = text.split('\n').indexOf(heading);
  if (start === -1) throw new Error(`${path}: no heading "${heading}"`);
  const level = /^#+/.exec(heading)?.[0].length ?? 1;
  const lines = text.split('\n').slice(start + 1);
  let inFence = false;
  const end = lines.findIndex((line) => {
    if (line.startsWith('```')) inFence = !inFence;
    const match = /^(#+) /.exec(line);
    return !inFence && match !== null && (match[1]?.length ?? 0) <= level;
  });
  return lines.slice(0, end === -1 ? undefined : end).join('\n');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a page's headings, outside code blocks. */
export function anchorsOf(path: string): Set<string> {
  const anchors = new Set<string>();
  let inFence = false;
  for (const line of readPage(path).split('\n')) {
    if (line.startsWith('```')) inFence = !inFence;
    const heading = /^#{1,6} (.+)$/.exec(line)?.[1];
    if (!inFence && heading !== undefined) anchors.add(anchorOf(heading));
  }
  return anchors;
}
