import type { V2Repository } from './v2Schemas.js';

/** Each provider's default host: where a repository whose `host` is null lives. */
const DEFAULT_HOSTS: Readonly<Record<string, string>> = {
  github: 'github.com',
  gitlab: 'gitlab.com',
  bitbucket: 'bitbucket.org',
};

/** A host name, with a port perhaps (`git.acme.internal:8443`), as DNS allows its length. */
const HOST = /^[A-Za-z0-9.-]{1,253}(:[0-9]{1,5})?$/;

/** `owner/name`, as long as a label value may be (MAX_LABEL_TEXT_LENGTH). */
const PATH = /^[^/\s]{1,200}\/[^/\s]{1,200}$/;

/**
 * `host/owner/name` of a v2 repository as Trunk spells it: `host`, else the provider's default host
 * (`host` is null there), else the host of `url`. Undefined when no host can be told, the host is
 * no host name (`github.com/acme` would make four segments of the name), or the path is not
 * `owner/name` of at most 200 characters each.
 */
export function repositoryNameOf(repository: V2Repository): string | undefined {
  const host =
    nonEmpty(repository.host) ??
    DEFAULT_HOSTS[repository.provider ?? ''] ??
    hostOfUrl(repository.url);
  if (host === undefined || !HOST.test(host) || !PATH.test(repository.path)) return undefined;
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
