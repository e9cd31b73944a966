// The names suggested for a repository Trunk does not know: a typo's nearest, another host's
// spelling of the same owner/name, none for a name far from all.
import { describe, expect, it } from 'vitest';
import { nearestNames } from '../../../src/poller/v2/nearestNames.js';

const KNOWN = ['github.com/acme/web', 'github.com/acme/api', 'gitlab.acme.internal/platform/api'];

describe('nearestNames', () => {
  it('suggests the names a few edits away, nearest first, the host and letter case aside', () => {
    // acme/wbe is acme/web with two letters swapped: two edits of eight characters.
    expect(nearestNames('github.com/acme/wbe', KNOWN)).toEqual(['github.com/acme/web']);
    // Another spelling of the host: the same owner/name, no edit at all.
    expect(nearestNames('www.github.com/Acme/Web', KNOWN)).toEqual(['github.com/acme/web']);
    // acme/aei is one edit from acme/api (e for p), two from acme/web (a for w, i for b): both,
    // the nearer first.
    expect(nearestNames('github.com/acme/aei', KNOWN)).toEqual([
      'github.com/acme/api',
      'github.com/acme/web',
    ]);
  });

  it('suggests nothing far from every name, nor the name itself', () => {
    expect(nearestNames('github.com/acme/mobile', KNOWN)).toEqual([]);
    expect(nearestNames('github.com/ACME/web', ['github.com/acme/web'])).toEqual([]);
  });
});
