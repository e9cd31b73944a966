// The repositories discovery selects from the organization's list of queues. A repository may have
// thousands of queues (one per target branch); each branch is kept once, in the order listed.
import { describe, expect, it } from 'vitest';
import { discoveredRepositories } from '../../src/discovery/discoveredTargets.js';

const EVERYTHING = { repos: ['*'], branches: ['*'], flakyTests: false };

describe('discoveredRepositories', () => {
  it('keeps each branch of a repository once, in the order listed, over 100,000 queues', () => {
    // 100,000 queues of github.com/acme/web, each branch listed twice (a list paged while it moved).
    const queues = Array.from({ length: 100_000 }, (_, index) => ({
      repo: 'github.com/acme/web',
      branch: `release/${String(index % 50_000)}`,
    }));
    const [web, ...others] = discoveredRepositories(queues, [], EVERYTHING);
    expect(others).toEqual([]);
    expect(web?.branches).toHaveLength(50_000);
    expect(web?.branches.slice(0, 2)).toEqual(['release/0', 'release/1']);
    expect(web?.branches.at(-1)).toBe('release/49999');
  });
});
