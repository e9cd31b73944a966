import type { z } from 'zod';
import { scrubSecrets } from '../secrets/scrubSecrets.js';
import type { Endpoint } from './schemas.js';

/**
 * Why a Trunk API call failed; `http_status`, `timeout` and `network_error` may have been retried.
 * `rate_limited`: not sent at all, because a Retry-After pause outlasts the caller's deadline.
 * `response_too_large`: a 2xx body over trunk.maxResponseBytes, never retried (it would be again).
 * `no_credential`: not sent, because the API version it needs has no credential configured.
 */
export type TrunkApiErrorReason =
  | 'http_status'
  | 'timeout'
  | 'network_error'
  | 'response_too_large'
  | 'schema_mismatch'
  | 'aborted'
  | 'rate_limited'
  | 'no_credential';

/** Everything a TrunkApiError carries; `detail` must already be free of secrets. */
export type TrunkApiErrorDetails = Omit<TrunkApiError, keyof Error | 'code'> & {
  /** What went wrong, e.g. `HTTP 503: "no healthy upstream"`. */
  readonly detail: string;
  readonly cause?: unknown;
  readonly code?: string;
};

/** A failed Trunk API call, with the context an operator needs to find it in Trunk's logs. */
export class TrunkApiError extends Error {
  static {
    // On the prototype rather than as a field: V8 formats `stack` inside super(), before fields exist.
    TrunkApiError.prototype.name = 'TrunkApiError';
  }

  readonly endpoint: Endpoint;
  /** `host/owner/name`. */
  readonly repo: string;
  readonly branch: string | undefined;
  readonly reason: TrunkApiErrorReason;
  readonly status: number | undefined;
  readonly requestId: string | undefined;
  readonly attempts: number;
  /** API v2's `error.code` (`MERGE_QUEUE_NOT_FOUND`…), when the answer had the envelope. */
  readonly code: string | undefined;

  constructor(details: TrunkApiErrorDetails) {
    super(
      formatMessage(details),
      details.cause === undefined ? undefined : { cause: details.cause },
    );
    this.endpoint = details.endpoint;
    this.repo = details.repo;
    this.branch = details.branch;
    this.reason = details.reason;
    this.status = details.status;
    this.requestId = details.requestId;
    this.attempts = details.attempts;
    this.code = details.code;
  }
}

/**
 * The call was not sent: a 429's Retry-After holds every request (or every request of `endpoint`,
 * one Trunk limits apart) until `pausedUntil`, past the caller's deadline. Waiting would freeze
 * the poll's schedule; its next poll tries again.
 */
export function notSentWhilePaused(
  target: Pick<TrunkApiErrorDetails, 'endpoint' | 'repo' | 'branch'>,
  attempts: number,
  pausedUntil: number,
  endpoint?: Endpoint,
): TrunkApiError {
  const held = endpoint === undefined ? 'every request' : `every request of ${endpoint}`;
  return new TrunkApiError({
    endpoint: target.endpoint,
    repo: target.repo,
    branch: target.branch,
    reason: 'rate_limited',
    status: undefined,
    requestId: undefined,
    attempts,
    detail: `not sent: Trunk's Retry-After holds ${held} until ${new Date(pausedUntil).toISOString()}`,
  });
}

function formatMessage(details: TrunkApiErrorDetails): string {
  const target =
    details.branch === undefined ? details.repo : `${details.repo} branch ${details.branch}`;
  const context = [
    details.requestId === undefined ? undefined : `request id ${details.requestId}`,
    `${details.attempts} attempt${details.attempts === 1 ? '' : 's'}`,
  ].filter((part) => part !== undefined);
  return `Trunk API ${details.endpoint} for ${target} failed: ${details.detail} (${context.join(', ')})`;
}

/** Longest body excerpt put in an error message or log line. */
export const MAX_EXCERPT_CHARS = 200;

/**
 * A one-line, at most 200-character excerpt of an error body (plain text from Trunk, HTML from an
 * edge proxy), with every secret removed before cutting so that no prefix of a token survives.
 */
export function bodyExcerpt(text: string, secrets: readonly string[]): string {
  let readable = text;
  if (/^\s*</.test(readable)) {
    // Edge error pages: the title and headings carry the meaning, the markup does not.
    readable = readable
      .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, ' ')
      .replace(/<[^>]*>/g, ' ')
      .replace(/&nbsp;/g, ' ')
      .replace(/&amp;/g, '&')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>');
  }
  // Scrubbed after the markup is gone (the marker looks like a tag) and before any cut.
  return oneLineExcerpt(scrubSecrets(readable, secrets), secrets, MAX_EXCERPT_CHARS);
}

/** `text` made one line, scrubbed of every secret, and cut to `maxChars` characters. */
function oneLineExcerpt(text: string, secrets: readonly string[], maxChars: number): string {
  // Control characters as well as line breaks: an excerpt must not forge log lines.
  // eslint-disable-next-line no-control-regex
  const oneLine = scrubSecrets(text.replace(/[\s\u0000-\u001f\u007f]+/g, ' ').trim(), secrets);
  if (oneLine.length <= maxChars) return oneLine;
  return `${oneLine.slice(0, maxChars - 1)}…`;
}

/** Longest request id put in an error message (the landing page shows one of up to 128). */
export const MAX_REQUEST_ID_CHARS = 128;

/**
 * The `x-request-id` an answer gave, as an error names it: the server sets it, so it is scrubbed of
 * every secret (an edge may echo the request into it), made one line and cut to
 * MAX_REQUEST_ID_CHARS, as a body excerpt is.
 */
export function requestIdText(requestId: string, secrets: readonly string[]): string {
  return oneLineExcerpt(requestId, secrets, MAX_REQUEST_ID_CHARS);
}

/** How many zod issues a schema-mismatch message lists before `and N more`. */
const MAX_LISTED_ISSUES = 3;

/** `enqueuedPullRequests[2].prNumber: expected number, received string; …` for the first issues. */
export function describeSchemaIssues(issues: readonly z.core.$ZodIssue[]): string {
  const listed = issues.slice(0, MAX_LISTED_ISSUES).map((issue) => {
    const message = issue.message.replace(/^Invalid input: /, '');
    return `${formatIssuePath(issue.path)}: ${message}`;
  });
  const more = issues.length - listed.length;
  return more > 0 ? `${listed.join('; ')}; and ${more} more` : listed.join('; ');
}

function formatIssuePath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  let formatted = '';
  for (const segment of path) {
    if (typeof segment === 'number') formatted += `[${segment}]`;
    else {
      const key = String(segment);
      formatted += formatted === '' ? key : `.${key}`;
    }
  }
  return formatted;
}
