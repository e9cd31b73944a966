// Globs as docs/configuration.md words them: `*` is any run of characters (none too), every other
// character stands for itself; a whole name must match. Cases written by hand.
import { describe, expect, it } from 'vitest';
import { globListMatcher, globMatches } from '../../src/config/glob.js';

describe('globMatches', () => {
  it.each([
    ['*', '', true],
    ['*', 'github.com/acme/web', true],
    ['github.com/acme/*', 'github.com/acme/web', true],
    ['github.com/acme/*', 'github.com/acme/', true],
    ['github.com/acme/*', 'github.com/acme', false],
    ['github.com/*/web', 'github.com/acme/web', true],
    ['github.com/*/web', 'github.com/acme/api', false],
    ['release/*', 'release/2026-11\nx', true],
    ['a*a', 'a', false],
    ['a*a', 'aa', true],
    ['a*b*c', 'abc', true],
    ['a*b*c', 'acb', false],
    ['*ab*ab*', 'abab', true],
    ['*ab*ab*', 'aba', false],
    ['*ab*b', 'abb', true],
    ['*ab*b', 'ab', false],
    ['a*b*b', 'ab', false],
    ['a**b', 'ab', true],
    ['main', 'main', true],
    ['main', 'Main', false],
    ['main', 'mains', false],
    ['*a*a*a*b', 'a'.repeat(5_000), false],
    ['*a*a*a*b', `${'a'.repeat(5_000)}b`, true],
  ])('%j against %j is %s', (glob, text, expected) => {
    expect(globMatches(glob, text)).toBe(expected);
  });
});

describe('globListMatcher', () => {
  it('matches a text that any glob matches, names and globs with * alike, under the key given', () => {
    const matches = globListMatcher(['github.com/acme/web', 'gitlab.com/*/api'], (text) =>
      text.toLowerCase(),
    );
    expect(
      ['github.com/Acme/Web', 'gitlab.com/Platform/API', 'github.com/acme/api'].map(matches),
    ).toEqual([true, true, false]);
  });
});
