import { setTimeout as sleep } from 'node:timers/promises';
import type { z } from 'zod';
import type { Secret } from '../secrets/secret.js';
import { scrubSecrets } from '../secrets/scrubSecrets.js';
import type { Logger } from '../log/logger.js';
import { AnomalyLog } from './anomalyLog.js';
import { TrunkApiError, bodyExcerpt, describeSchemaIssues, requestIdText } from './errors.js';
import type { TrunkApiErrorReason } from './errors.js';
import type { ApiAnomalyKind, ApiCallObserver } from './observer.js';
import {
  checkQuarantinedTestsPage,
  checkQueue,
  checkSubmittedPullRequest,
  type AnomalyReport,
} from './responseAnomalies.js';
import {
  RETRYABLE_STATUSES,
  backoffDelayMs,
  parseRetryAfter,
  resolveRetrySettings,
} from './retryPolicy.js';
import type { RetrySettings } from './retryPolicy.js';
import {
  ENDPOINTS,
  mergeQueueSchema,
  quarantinedTestsPageSchema,
  submittedPullRequestSchema,
} from './schemas.js';
import type {
  Endpoint,
  MergeQueue,
  QuarantinedTestsPage,
  RepoRef,
  SubmittedPullRequest,
} from './schemas.js';
import { parseJson } from './jsonText.js';
import { TrunkTransport } from './transport.js';
import type { ApiRequest, CallTarget, RequestPauses } from './transport.js';
import { parseErrorEnvelope } from './v2Errors.js';

/**
 * trunk.maxResponseBytes's default: a 10,000-PR getQueue answer is about 3.7 MB and a 100-row
 * quarantine page under 40 KB (the simulator's live shape), so 32 MiB leaves 8x room for longer
 * titles and fields Trunk adds, and parsing it stays well inside the chart's 256 MiB limit.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/** How a TrunkClient reaches the API and how hard it may push it. */
export interface TrunkClientOptions {
  /** The API's host (may have a path prefix); a trailing `/v1` or slash is tolerated. */
  apiUrl: string;
  /** The API v1 token; v1 calls fail without it. */
  token?: Secret | undefined;
  /** The API v2 key; v2 reads fail without it. */
  apiKey?: Secret | undefined;
  /** Per attempt: connect + headers + body. */
  timeoutSeconds: number;
  maxConcurrentRequests: number;
  maxRequestsPerSecond: number;
  /** Largest 2xx body read (trunk.maxResponseBytes); default DEFAULT_MAX_RESPONSE_BYTES. */
  maxResponseBytes?: number | undefined;
  observer: ApiCallObserver;
  logger: Logger;
  retry?: { maxAttempts?: number; baseDelayMs?: number; maxDelayMs?: number };
  /** For jitter; default Math.random. */
  random?: () => number;
  /** Sent as `User-Agent: trunk-exporter/<version>`. */
  version?: string;
}

/** Per-call controls. */
export interface CallOptions {
  signal?: AbortSignal;
  /** Epoch ms: no retry wait may end after it. */
  deadlineMs?: number;
  /**
   * The least wait before a retry, from the failed attempt's answer: a retry is a request under
   * the same key, so an endpoint limited per key (CallSpacing) keeps its spacing between attempts.
   */
  minRetryDelayMs?: number;
}

/** Reports the anomalies of a parsed response and returns it made harmless (responseAnomalies.ts). */
type ResponseCheck<R, T> = (value: R, report: AnomalyReport) => T;

type ErrorFactory = (
  reason: TrunkApiErrorReason,
  status: number | undefined,
  detail: string,
  cause?: unknown,
  code?: string,
) => TrunkApiError;

/**
 * Client for Trunk's merge-queue and flaky-test read API: shared concurrency and rate limits,
 * retries with backoff, schema validation, and errors that never carry the token.
 */
export class TrunkClient {
  readonly #transport: TrunkTransport;
  readonly #token: Secret | undefined;
  readonly #apiKey: Secret | undefined;
  readonly #observer: ApiCallObserver;
  readonly #logger: Logger;
  readonly #anomalyLog: AnomalyLog;
  readonly #retry: RetrySettings;
  readonly #random: () => number;
  /** Aborted by close(), so pending waits and requests end instead of holding the process. */
  readonly #closing = new AbortController();
  /**
   * The caller's signal joined with #closing, one per caller signal: a poll passes the same signal
   * to all its calls, and a cycle that queues thousands of lookups otherwise made thousands of
   * composite signals, each tracked by both sources (garbage collection was most of its CPU).
   */
  readonly #joinedSignals = new WeakMap<AbortSignal, AbortSignal>();
  /** Calls not yet settled. */
  readonly #active = new Set<Promise<unknown>>();
  #closed: Promise<void> | undefined;

  constructor(options: TrunkClientOptions) {
    if (!(options.timeoutSeconds > 0) || !Number.isFinite(options.timeoutSeconds)) {
      throw new RangeError(`timeoutSeconds must be > 0, got ${options.timeoutSeconds}`);
    }
    this.#token = options.token;
    this.#apiKey = options.apiKey;
    this.#observer = options.observer;
    this.#logger = options.logger;
    this.#anomalyLog = new AnomalyLog(options.logger);
    this.#retry = resolveRetrySettings(options.retry);
    this.#random = options.random ?? Math.random;
    this.#transport = new TrunkTransport({
      apiUrl: options.apiUrl,
      token: options.token,
      apiKey: options.apiKey,
      timeoutMs: Math.ceil(options.timeoutSeconds * 1000),
      maxConcurrentRequests: options.maxConcurrentRequests,
      maxRequestsPerSecond: options.maxRequestsPerSecond,
      maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
      observer: options.observer,
      userAgent: `trunk-exporter/${options.version ?? 'dev'}`,
    });
  }

  /** The merge queue of `targetBranch`: settings and enqueued pull requests. */
  async getQueue(
    repo: RepoRef,
    targetBranch: string,
    options: CallOptions = {},
  ): Promise<MergeQueue> {
    const target = { endpoint: ENDPOINTS.getQueue, repo: repoName(repo), branch: targetBranch };
    const body = { repo: repoBody(repo), targetBranch };
    return this.#tracked(
      this.#attempts(target, v1Request(target, body), mergeQueueSchema, checkQueue, options),
    );
  }

  /** undefined when the API answers 404 (PR left the queue or was never submitted). */
  async getSubmittedPullRequest(
    repo: RepoRef,
    targetBranch: string,
    prNumber: number,
    options: CallOptions = {},
  ): Promise<SubmittedPullRequest | undefined> {
    const target = {
      endpoint: ENDPOINTS.getSubmittedPullRequest,
      repo: repoName(repo),
      branch: targetBranch,
    };
    const body = { repo: repoBody(repo), pr: { number: prNumber }, targetBranch };
    return this.#tracked(
      this.#attempts(
        target,
        v1Request(target, body),
        submittedPullRequestSchema,
        checkSubmittedPullRequest,
        options,
        () => undefined,
      ),
    );
  }

  /** One page of the repository's quarantined tests; `pageToken` "" selects the first page. */
  async listQuarantinedTests(
    repo: RepoRef,
    orgUrlSlug: string,
    page: { pageSize: number; pageToken: string },
    options: CallOptions = {},
  ): Promise<QuarantinedTestsPage> {
    const target = {
      endpoint: ENDPOINTS.listQuarantinedTests,
      repo: repoName(repo),
      branch: undefined,
    };
    const body = {
      repo: repoBody(repo),
      org_url_slug: orgUrlSlug,
      page_query: { page_size: page.pageSize, page_token: page.pageToken },
    };
    return this.#tracked(
      this.#attempts(
        target,
        v1Request(target, body),
        quarantinedTestsPageSchema,
        checkQuarantinedTestsPage,
        options,
      ),
    );
  }

  /**
   * One API v2 read: a GET of `/v2/<path>` under the same limits, queue, retries and observer as
   * every v1 call (v2Client.ts names the reads). `check` turns the parsed answer into what is used,
   * reporting its anomalies; `onNotFound` says what a 404 means where it is an answer rather than an
   * error.
   */
  async readV2<R, T, N = never>(
    target: CallTarget,
    path: string,
    schema: z.ZodType<R>,
    check: ResponseCheck<R, T>,
    options: CallOptions = {},
    onNotFound?: () => N,
  ): Promise<T | N> {
    const request: ApiRequest = { api: 'v2', path };
    return this.#tracked(this.#attempts(target, request, schema, check, options, onNotFound));
  }

  /**
   * `count` anomalies of `kind` that a poll found in what `endpoint` answered, beyond what one
   * response shows (e.g. a PR gone from the live list and absent from the concluded ones). With
   * `about`, the target whose answers held them, they are logged as a response's are; without, the
   * caller logs its own line.
   */
  reportAnomaly(
    endpoint: Endpoint,
    kind: ApiAnomalyKind,
    count: number,
    about?: Omit<CallTarget, 'endpoint'>,
  ): void {
    this.#observer.anomaly(endpoint, kind, count);
    if (about !== undefined) this.#anomalyLog.found({ ...about, endpoint }, kind, count);
  }

  /** What 429s' Retry-After holds back, and until when. */
  get pauses(): RequestPauses {
    return this.#transport.pauses;
  }

  /** Holds back requests not yet started as `pauses` says (a replaced client's); never shortens a pause. */
  carryPauses(pauses: RequestPauses): void {
    this.#transport.carryPauses(pauses);
  }

  /**
   * For a client being replaced (a reload changed trunk.*): lets the calls in flight finish, so
   * their polls are not failed by the reload, then closes. close() still ends them at once.
   */
  async retire(): Promise<void> {
    while (this.#active.size > 0) await Promise.allSettled([...this.#active]);
    await this.close();
  }

  /** Ends pending waits and requests (they fail as `aborted`) and closes the connections; idempotent. */
  async close(): Promise<void> {
    if (this.#closed === undefined) {
      this.#closing.abort(new Error('TrunkClient closed'));
      this.#closed = this.#transport.close();
    }
    await this.#closed;
  }

  /** `call`, counted as active until it settles (see retire()). */
  #tracked<T>(call: Promise<T>): Promise<T> {
    this.#active.add(call);
    const forget = (): void => {
      this.#active.delete(call);
    };
    call.then(forget, forget);
    return call;
  }

  #joined(signal: AbortSignal): AbortSignal {
    let joined = this.#joinedSignals.get(signal);
    if (joined === undefined) {
      joined = AbortSignal.any([signal, this.#closing.signal]);
      this.#joinedSignals.set(signal, joined);
    }
    return joined;
  }

  /** Runs attempts until one succeeds, one fails for good, or the next wait would pass the deadline. */
  async #attempts<R, T, N = never>(
    target: CallTarget,
    request: ApiRequest,
    schema: z.ZodType<R>,
    check: ResponseCheck<R, T>,
    options: CallOptions,
    /** What a 404 means, for the endpoint where it is an answer rather than an error. */
    onNotFound?: () => N,
  ): Promise<T | N> {
    const signal =
      options.signal === undefined ? this.#closing.signal : this.#joined(options.signal);
    const credential = request.api === 'v1' ? this.#token : this.#apiKey;
    if (credential === undefined) {
      throw new TrunkApiError({
        ...target,
        reason: 'no_credential',
        status: undefined,
        requestId: undefined,
        attempts: 0,
        detail: `not sent: API ${request.api} needs ${request.api === 'v1' ? 'trunk.token' : 'trunk.apiKey'}, which is not set`,
      });
    }
    for (let attempt = 1; ; attempt += 1) {
      // A 429's pause that would hold this attempt past the deadline (set before it, or by another
      // call while it queues) would freeze the poll's schedule: the transport fails it unsent
      // (rate_limited), and the next poll tries once the pause is over.
      const outcome = await this.#transport.send(
        target,
        request,
        signal,
        attempt,
        options.deadlineMs,
      );
      const failed: ErrorFactory = (reason, status, detail, cause, code) =>
        new TrunkApiError({
          ...target,
          reason,
          status,
          requestId:
            outcome.requestId === undefined
              ? undefined
              : requestIdText(outcome.requestId, this.#secrets()),
          attempts: attempt,
          detail: scrubSecrets(detail, this.#secrets()),
          ...(cause === undefined ? {} : { cause }),
          ...(code === undefined ? {} : { code }),
        });

      let error: TrunkApiError;
      let retryAfterMs: number | undefined;
      if (outcome.kind === 'failure') {
        error = failed(outcome.reason, undefined, outcome.detail, outcome.cause);
        // The same oversized answer (or headers past what the client reads) would come again: the
        // next poll may find it smaller.
        if (outcome.reason === 'response_too_large' || isHeadersOverflow(outcome.cause)) {
          throw error;
        }
      } else if (outcome.status >= 200 && outcome.status < 300) {
        const encoded = this.#undecoded(outcome.headers['content-encoding']);
        return this.#parse(target, schema, check, outcome.status, outcome.text, failed, encoded);
      } else if (outcome.status === 404 && onNotFound !== undefined) {
        return onNotFound();
      } else {
        // v2 answers carry {error: {code, message}} except where an edge or the rate limiter
        // answered; the code is what to branch on and what to search Trunk's docs for.
        const envelope = request.api === 'v2' ? parseErrorEnvelope(outcome.text) : undefined;
        // A compressed page read as text is noise: its encoding is named instead of its bytes (an
        // envelope that parsed was no compressed page, whatever the header said).
        const encoded =
          envelope === undefined ? this.#undecoded(outcome.headers['content-encoding']) : '';
        const excerpt =
          encoded === '' ? bodyExcerpt(envelope?.message ?? outcome.text, this.#secrets()) : '';
        // Scrubbed and cut as the message is: the code is kept apart from it, in error.code.
        const code =
          envelope === undefined ? undefined : bodyExcerpt(envelope.code, this.#secrets());
        const detail = `HTTP ${outcome.status}${code === undefined ? '' : ` ${code}`}${this.#redirect(outcome.status, outcome.headers.location)}${encoded}${excerpt === '' ? '' : `: "${excerpt}"`}`;
        error = failed('http_status', outcome.status, detail, undefined, code);
        if (!RETRYABLE_STATUSES.has(outcome.status)) throw error;
        // A 429's Retry-After has already paused every call of the transport (see send()).
        retryAfterMs = parseRetryAfter(outcome.headers['retry-after'], Date.now());
      }

      if (attempt >= this.#retry.maxAttempts) throw error;
      const now = Date.now();
      // Retry-After is the least wait: a 0, or a date already past (a server's clock behind), would
      // otherwise retry at once after each answer, the storm that backoff prevents.
      // A pause set by another call's 429 delays this retry too, so the deadline check counts it.
      const delayMs = Math.max(
        retryAfterMs ?? 0,
        backoffDelayMs(attempt, this.#retry, this.#random),
        this.#transport.pausedUntilFor(target.endpoint) - now,
        options.minRetryDelayMs ?? 0,
      );
      const context = {
        endpoint: target.endpoint,
        repo: target.repo,
        branch: target.branch,
        reason: error.reason,
        status: error.status,
        requestId: error.requestId,
        attempt,
        delayMs,
        error: error.message,
      };
      if (options.deadlineMs !== undefined && now + delayMs > options.deadlineMs) {
        this.#logger.debug(context, 'Trunk API call not retried: the wait would pass the deadline');
        throw error;
      }
      this.#logger.debug(context, 'Trunk API call failed, retrying');
      try {
        await sleep(delayMs, undefined, { signal });
      } catch (sleepError) {
        throw failed('aborted', undefined, 'aborted while waiting to retry', sleepError);
      }
    }
  }

  #parse<R, T>(
    target: CallTarget,
    schema: z.ZodType<R>,
    check: ResponseCheck<R, T>,
    status: number,
    text: string,
    failed: ErrorFactory,
    /** What #undecoded says of the answer's Content-Encoding: '' when there is none. */
    encoded: string,
  ): T {
    let json: unknown;
    try {
      json = parseJson(text);
    } catch {
      // Not JSON.parse's message: it quotes the raw input, which the excerpt scrubs first.
      this.#observer.schemaMismatch(target.endpoint);
      // A compressed body read as text is noise: what is wrong is the encoding, so it is named.
      const excerpt = bodyExcerpt(text, this.#secrets());
      throw failed('schema_mismatch', status, `response is not JSON${encoded}: "${excerpt}"`);
    }
    const parsed = schema.safeParse(json);
    if (parsed.success) {
      return check(parsed.data, (kind, count, fields) => {
        this.#observer.anomaly(target.endpoint, kind, count);
        this.#anomalyLog.found(target, kind, count, fields);
      });
    }
    this.#observer.schemaMismatch(target.endpoint);
    const issues = describeSchemaIssues(parsed.error.issues);
    throw failed('schema_mismatch', status, `response does not match the schema: ${issues}`);
  }

  /**
   * ` (its Content-Encoding is gzip, …)` for an answer whose body is encoded, '' for one that is not:
   * none is asked for and none is decoded. A list when sent on several lines (an edge adding its
   * own) is one value, as RFC 9110 joins them.
   */
  #undecoded(sent: string | readonly string[] | undefined): string {
    const encoding = typeof sent === 'string' ? sent : sent?.join(', ');
    if (encoding === undefined || /^\s*(identity)?\s*$/i.test(encoding)) return '';
    return ` (its Content-Encoding is ${bodyExcerpt(encoding, this.#secrets())}, which the exporter does not ask for and does not decode)`;
  }

  /**
   * Where a 3xx points, scrubbed and cut as an excerpt: never followed (the credential would go
   * with it), so the line says what trunk.apiUrl should likely be instead of a bare status.
   */
  #redirect(status: number, location: string | readonly string[] | undefined): string {
    const to = typeof location === 'string' ? location : location?.[0];
    if (status < 300 || status >= 400 || to === undefined || to.trim() === '') return '';
    return ` to ${bodyExcerpt(to, this.#secrets())} (not followed: check trunk.apiUrl)`;
  }

  #secrets(): readonly string[] {
    return [this.#token, this.#apiKey].flatMap((secret) =>
      secret === undefined ? [] : [secret.reveal()],
    );
  }
}

function v1Request(target: CallTarget, body: unknown): ApiRequest {
  return { api: 'v1', path: target.endpoint, body: JSON.stringify(body) };
}

function repoBody(repo: RepoRef): RepoRef {
  // Field by field, so extra properties on the caller's object are never sent.
  return { host: repo.host, owner: repo.owner, name: repo.name };
}

function repoName(repo: RepoRef): string {
  return `${repo.host}/${repo.owner}/${repo.name}`;
}

/** An answer whose headers are larger than undici reads (`maxHeaderSize`). */
function isHeadersOverflow(cause: unknown): boolean {
  return cause instanceof Error && 'code' in cause && cause.code === 'UND_ERR_HEADERS_OVERFLOW';
}
