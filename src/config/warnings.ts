// What a valid configuration asks for that works but should change: each is one `warn` line at
// start and on every reload, and a `warning:` line of --check-config.
import {
  apiHostUrl,
  isTrunksOwnApi,
  TRUNK_REQUESTS_PER_SECOND_PER_ORGANIZATION,
  versionSegmentOf,
} from '../trunk/apiUrl.js';
import {
  API_KEY_ENVIRONMENT_VARIABLE,
  apiKeyWarning,
  TOKEN_ENVIRONMENT_VARIABLE,
  type TrunkCredentials,
} from './credentials.js';
import { isRecord } from './fileValue.js';
import { API_KEY_PREFIX } from '../secrets/secret.js';
import { targetApis } from './targetApis.js';
import type { ConfigFile } from './schema.js';

/**
 * Settings that only API v1's merge-queue polls read: with an API key every merge queue is read
 * through API v2 (targetApis.ts), whose pull-request list carries each PR's state and
 * readiness, so there is no per-PR lookup for them to shape.
 */
export const V1_ONLY_SETTINGS = [
  ['polling', 'pullRequestDetails'],
  ['polling', 'pullRequestRecheckSeconds'],
] as const;

/** Where a setting is in the file, for a warning: ` (line N)`, or nothing when unknown. */
export type LineOfSetting = (path: readonly PropertyKey[]) => string;

/** The warnings of a configuration that loaded: `value` is the file as written, `config` parsed. */
export function configWarnings(
  value: unknown,
  config: ConfigFile,
  credentials: TrunkCredentials,
  lineOf: LineOfSetting,
): string[] {
  const warnings: string[] = [];
  const urlWarning = apiUrlWarning(config.trunk.apiUrl);
  if (urlWarning !== undefined) warnings.push(urlWarning);
  const keyWarning = apiKeyWarning(credentials.apiKey);
  if (keyWarning !== undefined) warnings.push(keyWarning);
  const tokenWarning = tokenLooksLikeApiKeyWarning(value, credentials, lineOf);
  if (tokenWarning !== undefined) warnings.push(tokenWarning);
  const set = {
    apiKey: credentials.apiKey !== undefined,
    token: credentials.token !== undefined,
    orgUrlSlug: config.trunk.orgUrlSlug !== undefined,
  };
  if (targetApis(set, { kind: 'merge_queue' }).queue === 'v2') {
    for (const path of V1_ONLY_SETTINGS.filter((setting) => isSet(value, setting))) {
      warnings.push(
        `${path.join('.')} does nothing with an API key and applies to API v1 only (a token without a key): with a key, merge queues are read through API v2, which lists each PR with its state and readiness and looks none up; remove it${lineOf(path)}`,
      );
    }
  }
  if (credentials.apiKey === undefined && isRecord(value) && isRecord(value.reads)) {
    for (const key of Object.keys(value.reads)) {
      const path = ['reads', key];
      warnings.push(
        `reads.${key} does nothing without an API key: the optional reads are API v2's (trunk.apiKey), and a token alone reads through API v1; remove it${lineOf(path)}`,
      );
    }
  }
  // The setting shapes API v1's walk of a quarantine list: the configured lists' API says whether
  // there is one.
  const detailsPath = ['polling', 'flakyTestDetails'] as const;
  if (targetApis(set, { kind: 'flaky_tests' }).quarantine === 'v2' && isSet(value, detailsPath)) {
    warnings.push(
      `polling.flakyTestDetails does nothing with an API key alone and applies to API v1 only (a token with trunk.orgUrlSlug): through API v2 the organization's quarantined tests are one walk shared by every repository, which gives the per-owner and age counts at no extra call; remove it${lineOf(detailsPath)}`,
    );
  }
  if (config.trunk.maxConcurrentRequests === 1) {
    const path = ['trunk', 'maxConcurrentRequests'];
    warnings.push(
      `trunk.maxConcurrentRequests: 1 leaves no request slot free: a poll's PR lookups (API v1), or a target whose requests go unanswered, take the only one, and every other target waits for them (up to trunk.timeoutSeconds a request); 2 or more keeps one for the others${lineOf(path)}`,
    );
  }
  const rateWarning = organizationRateWarning(config, lineOf);
  if (rateWarning !== undefined) warnings.push(rateWarning);
  return warnings;
}

/**
 * `trunk.maxRequestsPerSecond` that lets this deployment (each shard at that rate) pass Trunk's
 * limit per organization: the requests past it get 429 and every read of every target waits.
 */
function organizationRateWarning(config: ConfigFile, lineOf: LineOfSetting): string | undefined {
  const { maxRequestsPerSecond, apiUrl } = config.trunk;
  const shards = config.sharding.totalShards;
  const limit = TRUNK_REQUESTS_PER_SECOND_PER_ORGANIZATION;
  if (maxRequestsPerSecond * shards <= limit || !isTrunksOwnApi(apiUrl)) return undefined;
  const path = ['trunk', 'maxRequestsPerSecond'];
  const trunks = `Trunk serves ${String(limit)} requests a second per organization, shared by all its keys and tokens, and answers 429 past it, holding back every read`;
  return shards === 1
    ? `trunk.maxRequestsPerSecond: ${String(maxRequestsPerSecond)} is above Trunk's limit: ${trunks}; ${String(limit)} or less${lineOf(path)}`
    : `trunk.maxRequestsPerSecond: ${String(maxRequestsPerSecond)} on each of sharding.totalShards ${String(shards)} shards comes to ${String(maxRequestsPerSecond * shards)} a second, above Trunk's limit: ${trunks}; ${String(Math.floor(limit / shards))} or less a shard${lineOf(path)}`;
}

/**
 * A v1 token that starts as Trunk's API v2 keys do: a key pasted where the token goes (or into
 * TRUNK_API_TOKEN), which API v1 answers 401. Names where it was set, by the order the token is read
 * in (the setting, its file, the environment variable), never the value.
 */
function tokenLooksLikeApiKeyWarning(
  value: unknown,
  credentials: TrunkCredentials,
  lineOf: LineOfSetting,
): string | undefined {
  if (credentials.token?.reveal().startsWith(API_KEY_PREFIX) !== true) return undefined;
  const advice = `the Trunk API token starts with ${API_KEY_PREFIX}, as Trunk's API v2 keys do, and API v1 refuses a key: a key belongs in trunk.apiKey, trunk.apiKeyFile or ${API_KEY_ENVIRONMENT_VARIABLE}; using it as the token anyway`;
  for (const key of ['token', 'tokenFile']) {
    const path = ['trunk', key];
    if (isSet(value, path)) return `trunk.${key}: ${advice}${lineOf(path)}`;
  }
  return `${TOKEN_ENVIRONMENT_VARIABLE}: ${advice}`;
}

/** Whether the file itself sets the key at `path` (a default does not count). */
function isSet(value: unknown, path: readonly string[]): boolean {
  let node: unknown = value;
  for (const key of path) {
    if (!isRecord(node) || !(key in node)) return false;
    node = node[key];
  }
  return true;
}

/** The warning for a `trunk.apiUrl` that ends in a version segment, which the client appends itself. */
function apiUrlWarning(apiUrl: string): string | undefined {
  const segment = versionSegmentOf(apiUrl);
  if (segment === undefined) return undefined;
  const using = `the exporter appends /v1 and /v2 itself; using ${apiHostUrl(apiUrl)}`;
  return segment === 'v1'
    ? `trunk.apiUrl ends in /v1, which is deprecated: it is the host now and ${using}`
    : `trunk.apiUrl ends in /${segment}: it is the host, and ${using}`;
}
