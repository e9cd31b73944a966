// Errors of the v2 API as trunk-api-v2.md describes them: a JSON envelope `{error:{code,message}}`
// for the API's own answers, no envelope for the rate limiter's 429 and, in the live flavour, for
// the credential check's 401.
import type { ServerResponse } from 'node:http';

/** The error codes the simulator answers with (a subset of the documented ones). */
export type V2ErrorCode =
  | 'AUTHENTICATION_REQUIRED'
  | 'INVALID_TOKEN'
  | 'INSUFFICIENT_PERMISSIONS'
  | 'VALIDATION_FAILED'
  | 'NOT_FOUND'
  | 'INVALID_CURSOR'
  | 'MERGE_QUEUE_NOT_FOUND'
  | 'PR_NOT_FOUND'
  | 'REPOSITORY_NOT_FOUND'
  | 'PROVIDER_URL_NOT_FOUND'
  | 'VERIFICATION_RUN_NOT_FOUND';

/** An answer of the v2 view: a body, or an error with its status and envelope code. */
export type V2Answer<T> = { readonly ok: true; readonly body: T } | V2Error;

/** An error answer; the credential and permission checks send theirs before the view is asked. */
export interface V2Error {
  readonly ok: false;
  readonly status: 400 | 401 | 403 | 404;
  readonly code: V2ErrorCode;
  readonly message: string;
}

export const validationFailed = (message: string) =>
  ({ ok: false, status: 400, code: 'VALIDATION_FAILED', message }) as const;

export const invalidCursor = (message: string) =>
  ({ ok: false, status: 400, code: 'INVALID_CURSOR', message }) as const;

export const notFound = (code: V2ErrorCode, message: string) =>
  ({ ok: false, status: 404, code, message }) as const;

/** Sends `answer`'s error as the documented envelope. */
export function sendV2Error(response: ServerResponse, answer: V2Error): void {
  response.writeHead(answer.status, { 'Content-Type': 'application/json' });
  response.end(JSON.stringify({ error: { code: answer.code, message: answer.message } }));
}

/** A 401 as the live edge sends it: a bare status line and no envelope. */
export function sendBareUnauthorized(response: ServerResponse): void {
  response.writeHead(401, { 'Content-Type': 'text/plain; charset=utf-8' });
  response.end('Unauthorized\n');
}

/** A 429 from the rate limiter: no body, no Retry-After (trunk-api-v2.md "Errors"). */
export function sendRateLimited(response: ServerResponse): void {
  response.writeHead(429, { 'Content-Length': '0' });
  response.end();
}
