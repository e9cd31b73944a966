import { describe, expect, it } from 'vitest';
import { repositoryNameOf } from '../../src/trunk/v2RepositoryName.js';

describe('repositoryNameOf', () => {
  it('takes the provider’s default host for a null host, whatever the url says', () => {
    expect(repositoryNameOf({ provider: 'github', path: 'acme/web' })).toBe('github.com/acme/web');
    expect(repositoryNameOf({ provider: 'gitlab', path: 'acme/web' })).toBe('gitlab.com/acme/web');
    expect(repositoryNameOf({ provider: 'bitbucket', path: 'acme/web' })).toBe(
      'bitbucket.org/acme/web',
    );
  });

  it('takes a set host, else the host of the url, and keeps the path as Trunk spells it', () => {
    expect(
      repositoryNameOf({
        provider: 'gitlab',
        host: 'GitLab.Acme.Internal',
        path: 'Platform/API',
      }),
    ).toBe('gitlab.acme.internal/Platform/API');
    expect(
      repositoryNameOf({
        provider: 'unknown',
        path: 'tools/lint',
        url: 'https://git.example.org/tools/lint',
      }),
    ).toBe('git.example.org/tools/lint');
  });

  it('names nothing without a host or with a path that is not owner/name', () => {
    expect(repositoryNameOf({ provider: 'unknown', path: 'tools/lint' })).toBeUndefined();
    expect(repositoryNameOf({ provider: 'gitlab', path: 'group/subgroup/name' })).toBeUndefined();
    expect(repositoryNameOf({ provider: 'github', host: '', path: '' })).toBeUndefined();
  });

  it('names nothing with a host that is no host name, or an owner or name past 200 characters', () => {
    // `host` is a host name ("github.com", "gitlab.acme.internal:8443"): one with a path or a space
    // would make a name of four segments, or none at all.
    expect(
      repositoryNameOf({ provider: 'github', host: 'github.com/acme', path: 'web/x' }),
    ).toBeUndefined();
    expect(
      repositoryNameOf({ provider: 'github', host: 'git hub.com', path: 'acme/web' }),
    ).toBeUndefined();
    expect(
      repositoryNameOf({ provider: 'github', host: 'h'.repeat(100_000), path: 'acme/web' }),
    ).toBeUndefined();
    expect(
      repositoryNameOf({ provider: 'github', path: `acme/${'w'.repeat(201)}` }),
    ).toBeUndefined();
    expect(
      repositoryNameOf({ provider: 'gitlab', host: 'gitlab.acme.internal:8443', path: 'a/b' }),
    ).toBe('gitlab.acme.internal:8443/a/b');
  });
});
