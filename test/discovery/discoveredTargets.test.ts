// The repositories discovery selects from the organization's list of queues. A repository may have
// thousands of queues (one per target branch); each branch is kept once, in the order listed.
import { describe, expect, it } from 'vitest';
import { discoveredRepositories } from '../../src/discovery/discoveredTargets.js';

const EVERYTHING = { repos: ['*'], branches: ['*'], flakyTests: false, maxTargets: 100_000 };

describe('discoveredRepositories', () => {
  it('keeps each branch of a repository once, in the order listed, over 100,000 queues', () => {
    // 100,000 queues of github.com/acme/web, each branch listed twice (a list paged while it moved).
    const queues = Array.from({ length: 100_000 }, (_, index) => ({
      repo: 'github.com/acme/web',
      branch: `release/${String(index % 50_000)}`,
    }));
    const [web, ...others] = discoveredRepositories(queues, [], EVERYTHING).repositories;
    expect(others).toEqual([]);
    expect(web?.branches).toHaveLength(50_000);
    expect(web?.branches.slice(0, 2)).toEqual(['release/0', 'release/1']);
    expect(web?.branches.at(-1)).toBe('release/49999');
  });

  it('reads a list of 5,000 repository names once, not once per queue', () => {
    // An explicit list of repositories: each of the 5,000 queues was compared with every name, and
    // 10,000 names over 11,000 queues held the one thread about 20 s at each discovery.
    const names = Array.from(
      { length: 5000 },
      (_, index) => `github.com/acme/repo-${String(index)}`,
    );
    let reads = 0;
    const repos = new Proxy(names, {
      get(target, property, receiver) {
        if (typeof property === 'string' && /^[0-9]+$/.test(property)) reads += 1;
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
    const queues = names.map((repo) => ({ repo: repo.toUpperCase(), branch: 'main' }));
    const settings = { ...EVERYTHING, repos };

    const { repositories } = discoveredRepositories(queues, [], settings);

    expect(repositories).toHaveLength(5000);
    expect(reads).toBeLessThanOrEqual(2 * names.length);
  });

  it('matches a branch holding a line break with `*` (U+2028, which git allows; a newline too)', () => {
    const queues = [
      { repo: 'github.com/acme/web', branch: 'rel\u2028ease' },
      { repo: 'github.com/acme/web', branch: 'hot\nfix' },
    ];
    const settings = { ...EVERYTHING, branches: ['*', 'hot*'] };
    const [web] = discoveredRepositories(queues, [], settings).repositories;
    expect(web?.branches).toEqual(['rel\u2028ease', 'hot\nfix']);
  });

  it('matches a glob of many stars against a long branch at once (as a regular expression it backtracked for minutes)', () => {
    // Branch names come from Trunk's list, so anyone who can open a merge queue on a branch names one.
    const queues = [
      { repo: 'github.com/acme/web', branch: 'a'.repeat(200) },
      { repo: 'github.com/acme/web', branch: `${'a'.repeat(200)}b` },
      { repo: 'github.com/ACME/web', branch: 'main' },
    ];
    const settings = {
      ...EVERYTHING,
      repos: ['GITHUB.COM/acme/**********'],
      branches: [`${'*a'.repeat(30)}*b`, 'ma************n', '************Q'],
    };
    const [web] = discoveredRepositories(queues, [], settings).repositories;
    expect(web?.branches).toEqual([`${'a'.repeat(200)}b`, 'main']);
  });

  it('keeps maxTargets targets, the first by repository and branch whatever the list order, and says how many it left out', () => {
    // Three repositories: acme/api with two queues, acme/web with two, acme/docs with tests only;
    // each repository's quarantine list is a target too: 2 + 1 + 2 + 1 + 1 = 7 targets.
    const queues = [
      { repo: 'github.com/acme/web', branch: 'main' },
      { repo: 'github.com/acme/api', branch: 'release' },
      { repo: 'github.com/acme/web', branch: 'develop' },
      { repo: 'github.com/acme/api', branch: 'main' },
    ];
    const settings = { ...EVERYTHING, flakyTests: true, maxTargets: 4 };
    const found = discoveredRepositories(queues, ['github.com/acme/docs'], settings);
    const reversed = discoveredRepositories(
      [...queues].reverse(),
      ['github.com/acme/docs'],
      settings,
    );
    // acme/api: main, release and its list (3); acme/docs: its list (1); acme/web left out.
    const named = (result: typeof found) =>
      result.repositories.map(({ name, branches }) => [name, branches]);
    expect(named(found)).toEqual([
      ['github.com/acme/api', ['main', 'release']],
      ['github.com/acme/docs', []],
    ]);
    expect(named(reversed)).toEqual(named(found));
    expect(found.leftOut).toBe(3);
  });
});
