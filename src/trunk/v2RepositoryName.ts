import type { V2Repository } from './v2Schemas.js';

/** Each provider's default host: where a repository whose `host` is null lives. */
const DEFAULT_HOSTS: Readonly<Record<string, string>> = {
  github: 'github.com',
  gitlab: 'gitlab.com',
  bitbucket: 'bitbucket.org',
};

/**
 * `host/owner/name` of a v2 repository as Trunk spells it: `host`, else the provider's default host
 * (`host` is null there), else the host of `url`. Undefined when no host can be told or the path is
 * not `owner/name`.
 */
export function repositoryNameOf(repository: V2Repository): string | undefined {
  const host =
    nonEmpty(repository.host) ??
    DEFAULT_HOSTS[repository.provider ?? ''] ??
    hostOfUrl(repository.url);
  if (host === undefined || !/^[^/\s]+\/[^/\s]+$/.test(repository.path)) return undefined;
  return `${host.toLowerCase()}/${repository.path}`;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function hostOfUrl(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    return nonEmpty(new URL(url).host);
  } catch {
    return undefined;
  }
}
