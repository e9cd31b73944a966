// Fault injection for the simulator: scripted misbehaviour per endpoint ("the next 3 calls to
// getQueue for acme/web answer 503 with an HTML page"), so tests can check from the outside how the
// exporter copes with what the live API and its edge proxies do on a bad day.
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { WorldAnswer } from './world.js';

/**
 * The endpoints faults can target: v1's as paths below the version segment, v2's as their route
 * (v2Routes.ts) without the leading slash.
 */
export const FAULT_ENDPOINTS = [
  'getQueue',
  'getSubmittedPullRequest',
  'flaky-tests/list-quarantined-tests',
  'v2/merge-queues',
  'v2/merge-queues/{id}',
  'v2/merge-queues/{id}/pull-requests',
  'v2/merge-queues/{id}/testing-results',
  'v2/tests',
  'v2/test-cases',
  'v2/test-collections',
  'v2/repositories',
  'v2/repositories/{id}',
] as const;
export type FaultEndpoint = (typeof FAULT_ENDPOINTS)[number];

/** What a faulty exchange does instead of (or to) the world's answer. */
export type Fault =
  /** An error status with a body (plain text unless told otherwise) and extra headers. */
  | {
      readonly kind: 'status';
      readonly status: number;
      readonly body?: string;
      readonly contentType?: string;
      readonly headers?: Readonly<Record<string, string>>;
    }
  /** Reads the request and never answers (the connection stays open until the client gives up). */
  | { readonly kind: 'hang' }
  /** Resets the connection (TCP RST) before any byte of the response. */
  | { readonly kind: 'reset' }
  /** Sends the headers and the first half of the real body, then closes the connection. */
  | { readonly kind: 'cut' }
  /** Sends the headers and the first half of the real body, then nothing more. */
  | { readonly kind: 'stall' }
  /** A 200 whose body is this text, verbatim (malformed JSON and the like). */
  | { readonly kind: 'raw'; readonly body: string }
  /**
   * A 200 whose JSON body `answer` builds from the request body and the world's own answer
   * (undefined when the world answered an error): wrong types, unknown enums, odd pagination.
   */
  | {
      readonly kind: 'answer';
      readonly answer: (request: unknown, real: unknown) => unknown;
    };

/** Which calls a rule applies to. */
export interface FaultMatch {
  /** Only calls for this repository (`host/owner/name`); all repositories when absent. */
  readonly repo?: string;
  /** How many matching calls the fault answers; Infinity for every one. Default 1. */
  readonly times?: number;
}

/** One call the simulator saw after authentication, and the fault it got, if any. */
export interface SeenCall {
  readonly endpoint: FaultEndpoint;
  /** `host/owner/name` the call is about, or '' when it names none. */
  readonly repo: string;
  /** Date.now() when the call was answered (or left unanswered). */
  readonly at: number;
  readonly fault: Fault['kind'] | undefined;
  /**
   * For `hang` and `stall`: Date.now() when the client gave up and its connection closed;
   * undefined while it is still open.
   */
  readonly connectionClosedAt: number | undefined;
}

/** What the server hands the fault plan for each authenticated, well-formed call. */
export interface InterceptedCall {
  /** URL path, e.g. `/v1/getQueue` or `/v2/merge-queues/mq_1x2y/pull-requests`. */
  readonly path: string;
  /** The path with ids as placeholders, e.g. `/v2/merge-queues/{id}/pull-requests`. */
  readonly endpoint: string;
  /** `host/owner/name` the call is about (v1: its body's repo; v2: its id's), or ''. */
  readonly repo: string;
  readonly request: IncomingMessage;
  /** The JSON body (v1) or the query parameters as an object (v2). */
  readonly body: unknown;
  readonly response: ServerResponse;
  /** The world's answer; computed only when a fault needs it. */
  readonly answer: () => WorldAnswer<unknown>;
}

interface Rule {
  readonly endpoint: FaultEndpoint;
  readonly fault: Fault;
  readonly repo: string | undefined;
  remaining: number;
}

/**
 * A script of faults, consulted by the simulator server for every authenticated call. Rules apply
 * in the order they were added; each answers its next `times` matching calls, then drops out.
 */
export class FaultPlan {
  readonly #rules: Rule[] = [];
  readonly #seen: SeenCall[] = [];

  /** Makes the next `times` (default 1) calls to `endpoint` (for `repo`, if given) answer `fault`. */
  inject(endpoint: FaultEndpoint, fault: Fault, match: FaultMatch = {}): this {
    const times = match.times ?? 1;
    if (!(times >= 1)) throw new RangeError(`times must be >= 1, got ${times}`);
    this.#rules.push({ endpoint, fault, repo: match.repo, remaining: times });
    return this;
  }

  /** Drops every pending fault; later calls get the world's answers. */
  clear(): void {
    this.#rules.length = 0;
  }

  /** Every call seen so far, in order. */
  calls(): readonly SeenCall[] {
    return [...this.#seen];
  }

  /**
   * Answers `call` with the first matching fault and returns true, or returns false (and answers
   * nothing) so the server sends the world's answer.
   */
  intercept(call: InterceptedCall): boolean {
    const endpoint = FAULT_ENDPOINTS.find(
      (name) => call.endpoint === (name.startsWith('v2/') ? `/${name}` : `/v1/${name}`),
    );
    if (endpoint === undefined) return false;
    const { repo } = call;
    const rule = this.#rules.find(
      (candidate) =>
        candidate.endpoint === endpoint &&
        (candidate.repo === undefined || candidate.repo === repo),
    );
    const seen: { -readonly [K in keyof SeenCall]: SeenCall[K] } = {
      endpoint,
      repo,
      at: Date.now(),
      fault: rule?.fault.kind,
      connectionClosedAt: undefined,
    };
    this.#seen.push(seen);
    if (rule === undefined) return false;
    if (rule.fault.kind === 'hang' || rule.fault.kind === 'stall') {
      // Such a connection is never reused, so its close is the client giving up on this call.
      call.request.socket.once('close', () => {
        seen.connectionClosedAt = Date.now();
      });
    }
    rule.remaining -= 1;
    if (rule.remaining <= 0) this.#rules.splice(this.#rules.indexOf(rule), 1);
    act(rule.fault, call);
    return true;
  }
}

function act(fault: Fault, call: InterceptedCall): void {
  const { response } = call;
  switch (fault.kind) {
    case 'status':
      response.writeHead(fault.status, {
        'Content-Type': fault.contentType ?? 'text/plain; charset=utf-8',
        ...fault.headers,
      });
      response.end(fault.body ?? '');
      return;
    case 'hang':
      return;
    case 'reset':
      call.request.socket.resetAndDestroy();
      return;
    case 'cut':
    case 'stall': {
      const real = call.answer();
      const text = JSON.stringify(real.ok ? real.body : { message: real.message });
      response.writeHead(200, {
        'Content-Type': 'application/json',
        'Content-Length': String(Buffer.byteLength(text)),
      });
      response.write(text.slice(0, Math.floor(text.length / 2)));
      if (fault.kind === 'cut') {
        // After the half body is on the wire, so the client sees a truncated response.
        setImmediate(() => response.destroy());
      }
      return;
    }
    case 'raw':
      response.writeHead(200, { 'Content-Type': 'application/json' });
      response.end(fault.body);
      return;
    case 'answer': {
      const real = call.answer();
      // Built before the head is written: if the script throws, the server can still send a 500.
      const body = JSON.stringify(fault.answer(call.body, real.ok ? real.body : undefined));
      response.writeHead(200, { 'Content-Type': 'application/json' });
      response.end(body);
      return;
    }
  }
}

/** The `host/owner/name` of a request body's `repo`, or '' when it has none. */
export function repoOf(body: unknown): string {
  if (typeof body !== 'object' || body === null || !('repo' in body)) return '';
  const { repo } = body;
  if (typeof repo !== 'object' || repo === null) return '';
  const { host, owner, name } = repo as Partial<Record<string, unknown>>;
  return [host, owner, name].map((part) => (typeof part === 'string' ? part : '')).join('/');
}

/** A 429 from the rate limiter; `retryAfter` is the header's value (seconds or an HTTP-date). */
export function tooManyRequests(retryAfter?: string): Fault {
  return {
    kind: 'status',
    status: 429,
    body: 'Too Many Requests',
    headers: retryAfter === undefined ? {} : { 'Retry-After': retryAfter },
  };
}

/** A 5xx as an edge proxy sends it: an HTML page, or a one-line plain-text body. */
export function edgeError(status: 500 | 502 | 503 | 504, form: 'html' | 'text'): Fault {
  const reason = `${status} ${STATUS_CODES[status] ?? 'Error'}`;
  if (form === 'text') return { kind: 'status', status, body: `${reason}: upstream unavailable\n` };
  return {
    kind: 'status',
    status,
    contentType: 'text/html; charset=utf-8',
    body: `<html><head><title>${reason}</title></head><body><center><h1>${reason}</h1></center><hr><center>edge</center></body></html>`,
  };
}
