// The simulator's HTTP face: the three POST operations under /v1, with the live service's error
// behaviour (plain-text 400/401/404 bodies, X-Request-Id on every response), and the v2 reads of
// the same world under /v2 (v2Routes.ts) for an API key.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import type { AddressInfo } from 'node:net';
import type { z } from 'zod';
import { silentLogger, type Logger } from '../log/logger.js';
import { repoOf, type FaultPlan } from './faults.js';
import { SIMULATOR_ORG_SLUG } from './repositories.js';
import {
  describeRequestIssues,
  getQueueRequestSchema,
  getSubmittedPullRequestRequestSchema,
  listQuarantinedTestsRequestSchema,
} from './requests.js';
import { answerV2, v2EndpointOf, v2RateLimiter, type TestListPath } from './v2Routes.js';
import { createV2View } from './v2View.js';
import type { SimulatorWorld, WorldAnswer } from './world.js';

export interface AutoAdvanceOptions {
  /** Wall-clock milliseconds between advances. */
  readonly tickMs: number;
  /**
   * Simulated seconds per tick (a fast-forwarded world). When absent the world follows the wall
   * clock, so it should have been created with the current time as startTime.
   */
  readonly secondsPerTick?: number | undefined;
}

export interface SimulatorServerOptions {
  readonly world: SimulatorWorld;
  /** The only accepted `x-api-token` (v1). */
  readonly token: string;
  /**
   * The only accepted v2 API key (`Authorization: Bearer`); without one every v2 request is
   * refused with 401. Must differ from `token`: neither credential works on the other version.
   */
  readonly apiKey?: string | undefined;
  /** The organization's v2 budget, requests per second; unlimited when absent. */
  readonly v2RequestsPerSecond?: number | undefined;
  /** Which path serves v2's test list (v2Routes.ts); defaults to `both`. */
  readonly testListPath?: TestListPath | undefined;
  /**
   * Answer a refused v2 credential as Trunk's edge does (plain text, no error envelope, as
   * trunk-api-v2.md says) instead of as the published definition does; defaults to false.
   */
  readonly bareUnauthorized?: boolean | undefined;
  /** Defaults to 127.0.0.1. */
  readonly host?: string | undefined;
  /** Defaults to 0: an ephemeral port. */
  readonly port?: number | undefined;
  /** The accepted `org_url_slug`; defaults to SIMULATOR_ORG_SLUG. */
  readonly orgSlug?: string | undefined;
  /** When set, a timer moves the world forward; otherwise only the caller does. */
  readonly autoAdvance?: AutoAdvanceOptions | undefined;
  /** Every answer waits this long first, like a distant API (benchmarks); defaults to 0. */
  readonly latencyMs?: number | undefined;
  readonly logger?: Logger | undefined;
  /**
   * Scripted misbehaviour, consulted for every authenticated call (tests, `simulate --fault` and
   * the demo's incident cycle).
   */
  readonly faults?: Pick<FaultPlan, 'intercept'> | undefined;
}

export interface RunningSimulator {
  /** Base address including the version segment, e.g. `http://127.0.0.1:41234/v1`. */
  readonly baseUrl: string;
  /** The host's address without a version, e.g. `http://127.0.0.1:41234` (v2 clients add `/v2`). */
  readonly origin: string;
  readonly port: number;
  readonly world: SimulatorWorld;
  /**
   * Requests received per endpoint, whatever their method and outcome: the URL path for v1 (e.g.
   * `/v1/getQueue`), the route with placeholders for v2 (`/v2/merge-queues/{id}/pull-requests`).
   */
  requestCounts(): Record<string, number>;
  /** The same requests per method and endpoint, e.g. `GET /v2/merge-queues`. */
  requestCountsByMethod(): Record<string, number>;
  /** Resets both counts. */
  resetRequestCounts(): void;
  /** TCP connections currently open to the server (for leak checks). */
  openConnections(): Promise<number>;
  close(): Promise<void>;
}

/** Bodies above this are refused; real requests are a few hundred bytes. */
const MAX_BODY_BYTES = 64 * 1024;

type Operation = (world: SimulatorWorld, body: unknown, orgSlug: string) => WorldAnswer<unknown>;

type ValidatedBody<T> = { ok: true; value: T } | { ok: false; status: 400; message: string };

function validate<T>(schema: z.ZodType<T>, body: unknown): ValidatedBody<T> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return { ok: true, value: parsed.data };
  return {
    ok: false,
    status: 400,
    message: `invalid request body: ${describeRequestIssues(parsed.error)}`,
  };
}

const OPERATIONS: Readonly<Record<string, Operation>> = {
  '/v1/getQueue': (world, body) => {
    const request = validate(getQueueRequestSchema, body);
    if (!request.ok) return request;
    return world.getQueue(request.value.repo, request.value.targetBranch);
  },
  '/v1/getSubmittedPullRequest': (world, body) => {
    const request = validate(getSubmittedPullRequestRequestSchema, body);
    if (!request.ok) return request;
    const { repo, targetBranch, pr } = request.value;
    return world.getSubmittedPullRequest(repo, targetBranch, pr.number);
  },
  '/v1/flaky-tests/list-quarantined-tests': (world, body, orgSlug) => {
    const request = validate(listQuarantinedTestsRequestSchema, body);
    if (!request.ok) return request;
    const { repo, org_url_slug: slug, page_query: page } = request.value;
    if (slug !== orgSlug)
      return { ok: false, status: 404, message: `organization ${slug} not found` };
    return world.listQuarantinedTests(repo, page.page_size, page.page_token ?? '');
  },
};

class BodyTooLargeError extends Error {}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > MAX_BODY_BYTES) throw new BodyTooLargeError();
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function sendText(response: ServerResponse, status: number, message: string): void {
  response.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
  response.end(`${message}\n`);
}

/** Starts the simulator on host:port (default 127.0.0.1, ephemeral port) and resolves when listening. */
export async function startSimulatorServer(
  options: SimulatorServerOptions,
): Promise<RunningSimulator> {
  const { world, token } = options;
  const host = options.host ?? '127.0.0.1';
  const orgSlug = options.orgSlug ?? SIMULATOR_ORG_SLUG;
  const logger = options.logger ?? silentLogger();
  const latencyMs = options.latencyMs ?? 0;
  if (options.apiKey !== undefined && options.apiKey === token) {
    throw new Error('the simulator needs a v2 API key different from the v1 token');
  }
  const v2 = {
    view: createV2View(world),
    apiKey: options.apiKey,
    bareUnauthorized: options.bareUnauthorized ?? false,
    testListPath: options.testListPath ?? 'both',
    faults: options.faults,
    withinRateLimit: v2RateLimiter(options.v2RequestsPerSecond),
  };
  let counts: Record<string, number> = {};
  let methodCounts: Record<string, number> = {};
  let requestNumber = 0;

  const answer = async (request: IncomingMessage, response: ServerResponse): Promise<number> => {
    const url = new URL(request.url ?? '/', 'http://simulator.invalid');
    const path = url.pathname;
    const isV2 = path === '/v2' || path.startsWith('/v2/');
    const endpoint = isV2 ? v2EndpointOf(path) : path;
    counts[endpoint] = (counts[endpoint] ?? 0) + 1;
    const methodEndpoint = `${request.method ?? ''} ${endpoint}`;
    methodCounts[methodEndpoint] = (methodCounts[methodEndpoint] ?? 0) + 1;
    if (isV2) return answerV2(request, response, url, v2);
    const operation = OPERATIONS[path];
    if (operation === undefined) {
      sendText(response, 404, `no such endpoint: ${path}`);
      return 404;
    }
    if (request.method !== 'POST') {
      response.setHeader('Allow', 'POST');
      sendText(response, 405, `method ${request.method ?? ''} not allowed; use POST`);
      return 405;
    }
    const presented = request.headers['x-api-token'];
    if (presented === undefined || presented === '') {
      sendText(response, 401, 'missing x-api-token header');
      return 401;
    }
    if (presented !== token) {
      sendText(response, 401, 'invalid API token');
      return 401;
    }
    let body: unknown;
    try {
      body = JSON.parse(await readBody(request));
    } catch (error) {
      const tooLarge = error instanceof BodyTooLargeError;
      sendText(response, 400, tooLarge ? 'request body too large' : 'request body is not JSON');
      return 400;
    }
    const answerCall = () => operation(world, body, orgSlug);
    const intercepted = options.faults?.intercept({
      path,
      endpoint: path,
      repo: repoOf(body),
      request,
      body,
      response,
      answer: answerCall,
    });
    if (intercepted === true) {
      return response.statusCode;
    }
    const result = answerCall();
    if (!result.ok) {
      sendText(response, result.status, result.message);
      return result.status;
    }
    response.writeHead(200, { 'Content-Type': 'application/json' });
    response.end(JSON.stringify(result.body));
    return 200;
  };

  const server = createServer((request, response) => {
    requestNumber += 1;
    // Deterministic ids: tests can predict them and logs of two runs line up.
    const requestId = `sim-${String(requestNumber).padStart(8, '0')}`;
    response.setHeader('X-Request-Id', requestId);
    const answered =
      latencyMs > 0
        ? delay(latencyMs).then(() => answer(request, response))
        : answer(request, response);
    answered.then(
      (status) => {
        logger.debug({ requestId, method: request.method, url: request.url, status }, 'request');
      },
      (error: unknown) => {
        logger.error({ requestId, err: error }, 'simulator request failed');
        if (!response.headersSent) sendText(response, 500, 'internal simulator error');
        else response.destroy();
      },
    );
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  let timer: NodeJS.Timeout | undefined;
  const autoAdvance = options.autoAdvance;
  if (autoAdvance !== undefined) {
    const { secondsPerTick } = autoAdvance;
    // Accumulated separately: a tick shorter than a model step must still add up to steps.
    let simulatedTarget = world.now();
    timer = setInterval(() => {
      simulatedTarget += secondsPerTick ?? 0;
      world.advance(secondsPerTick === undefined ? Date.now() / 1000 : simulatedTarget);
    }, autoAdvance.tickMs);
    // The simulator must never be what keeps a process (or a test run) alive.
    timer.unref();
  }

  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    baseUrl: `http://${urlHost}:${port}/v1`,
    origin: `http://${urlHost}:${port}`,
    port,
    world,
    requestCounts: () => ({ ...counts }),
    requestCountsByMethod: () => ({ ...methodCounts }),
    resetRequestCounts: () => {
      counts = {};
      methodCounts = {};
    },
    openConnections: () =>
      new Promise<number>((resolve, reject) => {
        server.getConnections((error, count) => {
          if (error) reject(error);
          else resolve(count);
        });
      }),
    close: () =>
      new Promise<void>((resolve, reject) => {
        if (timer !== undefined) clearInterval(timer);
        server.close((error) => {
          if (error === undefined) resolve();
          else reject(error);
        });
        // Keep-alive connections (fetch keeps them) would otherwise hold close() open.
        server.closeAllConnections();
      }),
  };
}
