// Which API reads each part of a target: the rules between the credentials, in one place. The poll
// jobs choose each target's source by them, the API budget counts by them, and --check-config's
// warnings and the docs tests ask them too.
import type { PollKind } from '../snapshot/types.js';
import type { ExporterConfig } from './types.js';

export type ApiVersion = 'v1' | 'v2';

/** Which credentials are set, as far as choosing an API goes. */
export interface CredentialsSet {
  /** An API v2 key. */
  readonly apiKey: boolean;
  /** An API v1 token. */
  readonly token: boolean;
  /** `trunk.orgUrlSlug`, which API v1's quarantine lists need. */
  readonly orgUrlSlug: boolean;
}

/** The API a merge queue is read through. */
export interface QueueApis {
  readonly kind: 'merge_queue';
  readonly queue: ApiVersion;
}

/** The APIs the two parts of a flaky-tests target are read through. */
export interface FlakyTestsApis {
  readonly kind: 'flaky_tests';
  readonly quarantine: ApiVersion;
  /** The flaky and broken tests: only API v2 lists them, so none without a key. */
  readonly unhealthy: 'v2' | undefined;
}

/** The API each part of a target is read through. */
export type TargetApis = QueueApis | FlakyTestsApis;

interface TargetOf<K extends PollKind> {
  readonly kind: K;
  /** Found by discovery rather than configured. */
  readonly discovered?: boolean;
}

/**
 * With an API key every merge queue is read through API v2, and so is every quarantine list
 * unless a v1 token and its orgUrlSlug are set too, which keep v1 the source of the configured
 * lists (a `discovered` one is read through v2 all the same); the flaky and broken tests of every
 * flaky-tests target come from API v2 whenever there is a key. Without a key, API v1 reads all.
 */
export function targetApis(credentials: CredentialsSet, target: TargetOf<'merge_queue'>): QueueApis;
export function targetApis(
  credentials: CredentialsSet,
  target: TargetOf<'flaky_tests'>,
): FlakyTestsApis;
export function targetApis(credentials: CredentialsSet, target: TargetOf<PollKind>): TargetApis;
export function targetApis(credentials: CredentialsSet, target: TargetOf<PollKind>): TargetApis {
  const { apiKey } = credentials;
  if (target.kind === 'merge_queue') return { kind: 'merge_queue', queue: apiKey ? 'v2' : 'v1' };
  const keptOnV1 = credentials.token && credentials.orgUrlSlug && target.discovered !== true;
  return {
    kind: 'flaky_tests',
    quarantine: apiKey && !keptOnV1 ? 'v2' : 'v1',
    unhealthy: apiKey ? 'v2' : undefined,
  };
}

/** The credentials `config` sets. */
export function credentialsOf(config: ExporterConfig): CredentialsSet {
  return {
    apiKey: config.trunk.apiKey !== undefined,
    token: config.trunk.token !== undefined,
    orgUrlSlug: config.trunk.orgUrlSlug !== undefined,
  };
}
