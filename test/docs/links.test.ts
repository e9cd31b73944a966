// The README and the docs pages as a newcomer walks them: the README is short, starts with the
// two commands, links every page under docs/, and every relative link of every page reaches a
// file, and a heading of it when the link names one. The comments of the files a user reads
// (config.example.yaml, the chart, the rule files, the compose example, the Dockerfile) point to
// pages the same way, `docs/deployment.md#sharding`, and each such pointer resolves.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchorsOf, pagePaths, readPage, ROOT } from './pages.js';

/** The YAML files and the Dockerfile, whose comments point to the docs, from the repository root. */
function commentedFiles(): string[] {
  const below = (directory: string): string[] =>
    readdirSync(join(ROOT, directory), { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory()
        ? below(join(directory, entry.name))
        : /\.ya?ml$/.test(entry.name)
          ? [join(directory, entry.name)]
          : [],
    );
  return [
    'config.example.yaml',
    ...below('helm'),
    ...below('prometheus'),
    ...below('examples'),
    'Dockerfile',
  ];
}

/** The comment text of a file: what follows `#` at the start of a line or after a space. */
function comments(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8')
    .split('\n')
    .flatMap((line) => {
      const at = line.search(/(^|\s)#/);
      return at === -1 ? [] : [line.slice(at).replace(/^\s*#/, '')];
    })
    .join('\n');
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

  it('point from YAML and Dockerfile comments to pages as path#anchor, each reaching its file and heading', () => {
    const problems: string[] = [];
    const files = commentedFiles();
    expect(files).toContain('helm/trunk-exporter/values.yaml');
    for (const file of files) {
      const text = comments(file);
      // A section named in words (README "Sharding", docs/benchmarks.md, Memory) breaks silently
      // when the section moves or is renamed.
      for (const named of text.matchAll(/(README|\.md),? "[^"]+"|\.md, [A-Z][^)\n]*\)/g))
        problems.push(`${file}: ${named[0]}: write it as a path#anchor`);
      for (const [reference, page = '', anchor] of text.matchAll(
        /\b((?:README|CONTRIBUTING)\.md|docs\/[\w-]+\.md)(?:#([\w-]+))?/g,
      )) {
        if (!existsSync(join(ROOT, page))) problems.push(`${file}: ${reference}: no such page`);
        else if (anchor !== undefined && !anchorsOf(page).has(anchor))
          problems.push(`${file}: ${reference}: no such heading`);
      }
    }
    expect(problems).toEqual([]);
  });
});
