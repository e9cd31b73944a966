import type { Logger } from '../log/logger.js';
import type { Target } from '../snapshot/types.js';
import { TrunkApiError } from '../trunk/errors.js';
import { ENDPOINTS } from '../trunk/schemas.js';

const API_KEY_REJECTED =
  'Trunk rejected the API key: check trunk.apiKey, trunk.apiKeyFile or TRUNK_API_KEY ' +
  '(an API v2 key starts with trunk_v2_; a v1 token does not work on v2)';

/** What a v2 403 means: "the credential is valid but is not permitted the action (or carries no organization)". */
const API_KEY_NOT_PERMITTED =
  'the API key is valid but not permitted this read, or carries no organization (a key without ' +
  'permissions reads every list the exporter reads): check that trunk.apiKey, trunk.apiKeyFile or ' +
  "TRUNK_API_KEY is an organization's API key (Settings → Developer → API Keys)";

/**
 * What an operator should check after a poll failed with `error`, for the failures whose cause is
 * in their hands (token, repository, branch, organization); undefined when retrying is all there
 * is to do. Never mentions the token's value.
 */
export function whatToCheck(error: unknown, target: Target): string | undefined {
  if (!(error instanceof TrunkApiError) || error.reason !== 'http_status') return undefined;
  const v2 = error.endpoint.startsWith('v2/');
  switch (error.status) {
    case 401:
      return v2
        ? API_KEY_REJECTED
        : 'Trunk rejected the API token: check trunk.token, trunk.tokenFile or TRUNK_API_TOKEN ' +
            '(a rotated token invalidates the old one at once)';
    case 403:
      // Through v2 another organization's resource answers 404, never 403 (Trunk's definition).
      return v2
        ? `Trunk answered 403 for ${target.repo}: ${API_KEY_NOT_PERMITTED}`
        : `Trunk refused access to ${target.repo}: check that the API token belongs to the organization that owns it`;
    case 404:
      if (error.endpoint === ENDPOINTS.listQuarantinedTests) {
        return `check that ${target.repo} exists in Trunk and that trunk.orgUrlSlug names its organization`;
      }
      return `check that ${target.repo} exists in Trunk and has a merge queue for branch ${target.branch}`;
    default:
      return undefined;
  }
}

/** Whether the API refused the token itself: retrying or polling faster cannot help. */
export function isAuthenticationFailure(error: unknown): boolean {
  return error instanceof TrunkApiError && (error.status === 401 || error.status === 403);
}

/**
 * What an operator should check after a read of the organization's lists (API v2, no target)
 * failed: the API key, for a 401 or 403; undefined when retrying is all there is to do.
 */
export function whatToCheckForOrganization(error: unknown): string | undefined {
  if (!(error instanceof TrunkApiError) || error.reason !== 'http_status') return undefined;
  if (error.status === 401) return API_KEY_REJECTED;
  if (error.status === 403) {
    return "Trunk refused the read of the organization's lists: check that the API key (trunk.apiKey, trunk.apiKeyFile or TRUNK_API_KEY) belongs to the organization and may read them";
  }
  return undefined;
}

/**
 * The fields of a failure's log line: a Trunk API error's call context (its stack shows only the
 * client's own frames), any other error whole (a bug's stack is how it is found).
 */
export function failureFields(error: unknown): Record<string, unknown> {
  if (!(error instanceof TrunkApiError)) return { err: error };
  const { endpoint, status, code, requestId, reason, attempts } = error;
  return { endpoint, status, code, requestId, reason, attempts };
}

/**
 * One line for a failed read of the organization's lists: at `error` with what to check when
 * Trunk refused the key (nothing recovers until someone fixes it), at `warn` otherwise.
 */
export function logOrganizationReadFailure(logger: Logger, message: string, error: unknown): void {
  const hint = whatToCheckForOrganization(error);
  const level = isAuthenticationFailure(error) ? 'error' : 'warn';
  logger[level](
    { ...failureFields(error), ...(hint === undefined ? {} : { check: hint }) },
    `${message}${hint === undefined ? '' : `; ${hint}`}`,
  );
}
