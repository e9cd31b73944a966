import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { apiHostUrl } from './apiUrl.js';
import { Pool } from './undiciPool.js';
import type { Secret } from '../secrets/secret.js';
import { notSentWhilePaused, TrunkApiError } from './errors.js';
import type { ApiCallObserver } from './observer.js';
import { PausedPastStartBy, RequestLimiter, type ReleaseSlot } from './requestLimiter.js';
import {
  ResponseCollector,
  ResponseTooLargeError,
  type IncomingHttpHeaders,
} from './responseCollector.js';
import { parseRetryAfter } from './retryPolicy.js';
import type { Endpoint } from './schemas.js';
import { V2_ENDPOINTS } from './v2Schemas.js';

/** Epoch ms until which 429s hold requests back: every request, and each endpoint limited apart. */
export interface RequestPauses {
  readonly organization: number;
  readonly endpoints: ReadonlyMap<Endpoint, number>;
}

/** What one call is about, for error messages and logs. */
export interface CallTarget {
  readonly endpoint: Endpoint;
  /** `host/owner/name`. */
  readonly repo: string;
  readonly branch: string | undefined;
}

/**
 * What one attempt sends: API v1 calls are POSTs of a JSON body to `/v1/<path>`, API v2 reads are
 * GETs of `/v2/<path>` (query included). v2 never gets another method: the exporter only reads.
 */
export type ApiRequest =
  | { readonly api: 'v1'; readonly path: string; readonly body: string }
  | { readonly api: 'v2'; readonly path: string };

/** Why an attempt got no answer it can use; each is also its `code` in the API request counter. */
export const ATTEMPT_FAILURE_REASONS = ['timeout', 'network_error', 'response_too_large'] as const;

/** One finished exchange: a status with its body, or a transport failure. */
export type AttemptOutcome =
  | {
      readonly kind: 'response';
      readonly status: number;
      readonly headers: IncomingHttpHeaders;
      readonly requestId: string | undefined;
      readonly text: string;
    }
  | {
      readonly kind: 'failure';
      readonly reason: (typeof ATTEMPT_FAILURE_REASONS)[number];
      readonly requestId: string | undefined;
      /** e.g. `network error: UND_ERR_SOCKET other side closed`; may need scrubbing. */
      readonly detail: string;
      readonly cause: unknown;
    };

/** Everything the transport needs; the retry policy lives in the client. */
export interface TrunkTransportOptions {
  /** The API's host (and any path prefix); a trailing `/v1` is dropped (apiUrl.ts). */
  readonly apiUrl: string;
  /** Sent as `x-api-token` on v1 calls. */
  readonly token: Secret | undefined;
  /** Sent as `Authorization: Bearer` on v2 calls. */
  readonly apiKey?: Secret | undefined;
  readonly timeoutMs: number;
  readonly maxConcurrentRequests: number;
  readonly maxRequestsPerSecond: number;
  /** A 2xx body over this many bytes fails the attempt unread (`response_too_large`). */
  readonly maxResponseBytes: number;
  readonly observer: ApiCallObserver;
  readonly userAgent: string;
}

/** Error bodies are read up to this size for the excerpt; the rest is dropped with the socket. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/**
 * Endpoints whose rate Trunk limits apart from the organization's budget ("GET /v2/pull-requests…
 * (single-PR reads, history, estimate): 5 per second per key, separately"): their 429 says that
 * budget is spent, so its Retry-After holds back only their calls (a spent organization budget
 * shows in the 429s of the other endpoints, which pause everything).
 */
const ENDPOINTS_WITH_OWN_BUDGET: ReadonlySet<Endpoint> = new Set([
  V2_ENDPOINTS.listQueueEntryHistory,
]);

const UNDICI_TIMEOUT_CODES: ReadonlySet<string> = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/**
 * Sends single attempts to the API origin through one connection pool and the shared limits, and
 * reports each finished attempt to the observer.
 */
export class TrunkTransport {
  readonly #pool: Pool;
  readonly #basePath: string;
  readonly #timeoutMs: number;
  readonly #maxResponseBytes: number;
  readonly #observer: ApiCallObserver;
  readonly #limiter: RequestLimiter;
  /** Epoch ms until which a 429's Retry-After holds back an endpoint of ENDPOINTS_WITH_OWN_BUDGET. */
  readonly #endpointPauses = new Map<Endpoint, number>();
  /** The same for every request of an API version, so built once. */
  readonly #v1Headers: Record<string, string>;
  readonly #v2Headers: Record<string, string>;

  constructor(options: TrunkTransportOptions) {
    const url = new URL(apiHostUrl(options.apiUrl));
    this.#basePath = url.pathname.replace(/\/+$/, '');
    this.#timeoutMs = options.timeoutMs;
    this.#maxResponseBytes = options.maxResponseBytes;
    this.#observer = options.observer;
    const common = { accept: 'application/json', 'user-agent': options.userAgent };
    this.#v1Headers = {
      ...common,
      'content-type': 'application/json',
      ...(options.token === undefined ? {} : { 'x-api-token': options.token.reveal() }),
    };
    this.#v2Headers = {
      ...common,
      ...(options.apiKey === undefined
        ? {}
        : { authorization: `Bearer ${options.apiKey.reveal()}` }),
    };
    this.#limiter = new RequestLimiter({
      maxConcurrent: options.maxConcurrentRequests,
      maxPerSecond: options.maxRequestsPerSecond,
    });
    this.#pool = new Pool(url.origin, {
      connections: options.maxConcurrentRequests,
      connectTimeout: options.timeoutMs,
    });
  }

  /** What 429s hold back, and until when: the organization's requests and each endpoint limited apart. */
  get pauses(): RequestPauses {
    return { organization: this.#limiter.pausedUntil, endpoints: new Map(this.#endpointPauses) };
  }

  /** Holds back what `pauses` holds back (a replaced transport's); never shortens a pause. */
  carryPauses(pauses: RequestPauses): void {
    this.#limiter.pauseUntil(pauses.organization);
    for (const [endpoint, until] of pauses.endpoints) this.#holdEndpoint(endpoint, until);
  }

  /** Holds back the calls of `endpoint` until `until`; never shortens its pause. */
  #holdEndpoint(endpoint: Endpoint, until: number): void {
    this.#endpointPauses.set(endpoint, Math.max(this.#endpointPauses.get(endpoint) ?? 0, until));
  }

  /** Epoch ms until which a request of `endpoint` is held back: the organization's pause or its own. */
  pausedUntilFor(endpoint: Endpoint): number {
    return Math.max(this.#limiter.pausedUntil, this.#endpointPauses.get(endpoint) ?? 0);
  }

  /**
   * Attempt number `attempt` of a call: waits for the limiter, then sends. Resolves with whatever
   * happened on the wire; rejects only with a TrunkApiError `aborted` when `signal` fires.
   */
  async send(
    target: CallTarget,
    request: ApiRequest,
    signal: AbortSignal,
    attempt: number,
    /** Epoch ms; a 429's pause that holds this attempt past it fails it unsent (rate_limited). */
    startBy?: number,
  ): Promise<AttemptOutcome> {
    const aborted = (attempts: number, cause: unknown): TrunkApiError =>
      new TrunkApiError({
        ...target,
        reason: 'aborted',
        status: undefined,
        requestId: undefined,
        attempts,
        detail: 'aborted',
        cause,
      });
    // Before the organization's queue, so that a held-back call takes no slot while it waits.
    const ownPause = this.#endpointPauses.get(target.endpoint) ?? 0;
    if (ownPause > Date.now()) {
      if (startBy !== undefined && ownPause > startBy) {
        throw notSentWhilePaused(target, attempt - 1, ownPause, target.endpoint);
      }
      try {
        await sleep(ownPause - Date.now(), undefined, { signal });
      } catch (error) {
        throw aborted(attempt - 1, error);
      }
    }
    let release: ReleaseSlot;
    try {
      // Keyed by target (a queue with its lookups, or a quarantine list) for the last-slot rule.
      release = await this.#limiter.acquire(
        `${target.repo}\u0000${target.branch ?? ''}`,
        signal,
        startBy,
      );
    } catch (error) {
      if (error instanceof PausedPastStartBy) {
        throw notSentWhilePaused(target, attempt - 1, error.pausedUntil);
      }
      throw aborted(attempt - 1, error);
    }
    const started = performance.now();
    // A 429's Retry-After holds back every call of this transport (but for an endpoint limited
    // apart: Trunk's limit is per organization) from its headers on, not once its body is read:
    // each request sent meanwhile would be one more over the limit. Before the slot is released
    // too, so a request waiting for that very slot already sees the pause.
    const collector = new ResponseCollector(
      MAX_ERROR_BODY_BYTES,
      this.#maxResponseBytes,
      (status, headers) => {
        if (status !== 429) return;
        const retryAfterMs = parseRetryAfter(headers['retry-after'], Date.now());
        if (retryAfterMs !== undefined)
          this.#pauseAfter429(target.endpoint, Date.now() + retryAfterMs);
      },
    );
    // A listener on the caller's signal and a timer per attempt. Not AbortSignal.any() over the
    // caller's signal and a timeout signal: that builds a composite signal per attempt, tracked
    // from each source through weak references. Not AbortSignal.timeout() either: its timer cannot
    // be cleared, so every finished attempt kept a timer and two signals alive for the whole timeout.
    const onCallerAbort = (): void => {
      collector.abort(asError(signal.reason));
    };
    signal.addEventListener('abort', onCallerAbort);
    // The signal may have fired between the limiter's grant and here; a listener added now never runs.
    if (signal.aborted) onCallerAbort();
    // Started after the limiter admits the request, so queueing never eats into the timeout.
    // An object, as the timer sets it where the type checker does not look.
    const deadline = { passed: false };
    const timer = setTimeout(() => {
      deadline.passed = true;
      collector.abort(new DOMException('attempt timed out', 'TimeoutError'));
    }, this.#timeoutMs);
    let outcome: AttemptOutcome;
    // Sent unless the caller had given up before it went: then undici never writes it.
    const sent = !signal.aborted;
    try {
      const path = `${this.#basePath}/${request.api}/${request.path}`;
      const timeouts = { headersTimeout: this.#timeoutMs, bodyTimeout: this.#timeoutMs };
      this.#pool.dispatch(
        request.api === 'v1'
          ? { method: 'POST', path, headers: this.#v1Headers, body: request.body, ...timeouts }
          : { method: 'GET', path, headers: this.#v2Headers, ...timeouts },
        collector,
      );
      const { status, headers, text } = await collector.done;
      // An error status is kept without its body when the caller aborts while it is read; that
      // abort still ends the call. A 2xx that has arrived whole is complete, and is returned.
      if (status < 200 || status >= 300) signal.throwIfAborted();
      const requestId = firstHeader(headers['x-request-id']);
      outcome = { kind: 'response', status, headers, requestId, text };
    } catch (error) {
      if (signal.aborted) {
        release();
        // Trunk got it and counts it against the organization's limit: counted as sent.
        if (sent) {
          const seconds = (performance.now() - started) / 1000;
          this.#observer.requestFinished(target.endpoint, 'aborted', seconds);
        }
        throw aborted(attempt, error);
      }
      const timedOut =
        (error instanceof DOMException && error.name === 'TimeoutError') ||
        UNDICI_TIMEOUT_CODES.has(errorCode(error) ?? '');
      const tooLarge = error instanceof ResponseTooLargeError;
      outcome = {
        kind: 'failure',
        reason: tooLarge ? 'response_too_large' : timedOut ? 'timeout' : 'network_error',
        requestId: firstHeader(collector.headers?.['x-request-id']),
        detail: tooLarge
          ? `response body larger than trunk.maxResponseBytes (${this.#maxResponseBytes} bytes); not read further and not retried`
          : timedOut
            ? `timed out after ${this.#timeoutMs / 1000}s`
            : `network error: ${describeError(error)}`,
        cause: error,
      };
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onCallerAbort);
    }
    // A timeout or a network error may have held the slot for the whole timeout, and so has an
    // error status whose body was still coming at the timeout (kept, without it, as the answer):
    // the limiter keeps its target out of the last slot until it answers again.
    const held =
      deadline.passed || (outcome.kind === 'failure' && outcome.reason !== 'response_too_large');
    release(held ? 'failed' : 'answered');
    const code = outcome.kind === 'response' ? String(outcome.status) : outcome.reason;
    this.#observer.requestFinished(target.endpoint, code, (performance.now() - started) / 1000);
    return outcome;
  }

  /** Holds back what a 429 of `endpoint` speaks for (its own budget, else the organization's). */
  #pauseAfter429(endpoint: Endpoint, until: number): void {
    if (ENDPOINTS_WITH_OWN_BUDGET.has(endpoint)) this.#holdEndpoint(endpoint, until);
    else this.#limiter.pauseUntil(until);
  }

  /** Closes the pool once in-flight requests are done (abort them first for a quick exit). */
  async close(): Promise<void> {
    await this.#pool.close();
  }
}

/**
 * undici's words when an answer to a running request begins `100 Continue` (client-h1.js): its
 * only `bad response` while a request waits, so the one way to tell what happened (retries.test.ts
 * pins it against undici's upgrades).
 */
const UNDICI_UNSOLICITED_CONTINUE = 'bad response';

function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}

function firstHeader(value: string | readonly string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : value?.[0];
}

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

function describeError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = errorCode(error);
  if (code === 'UND_ERR_SOCKET' && message === UNDICI_UNSOLICITED_CONTINUE) {
    return 'answered 100 Continue, which was not asked for (no Expect header is sent), and undici dropped the connection';
  }
  return code === undefined ? message : `${code} ${message}`;
}
