// Shared set-up for the simulator tests: a real server on an ephemeral loopback port, and a small
// POST helper that returns status, headers and the parsed (or raw) body.
import type { SimulatorFlavour } from '../../src/simulator/responses.js';
import type { RunningSimulator, SimulatorServerOptions } from '../../src/simulator/server.js';
import { startTestSimulator as startSharedTestSimulator } from '../support/simulator.js';

export const TEST_TOKEN = 'test-token-123';

export const WEB = { host: 'github.com', owner: 'acme', name: 'web' } as const;
export const API = { host: 'github.com', owner: 'acme', name: 'api' } as const;

/** Starts a simulator for one test; it is closed after the test. */
export async function startTestSimulator(
  options: { seed?: number; flavour?: SimulatorFlavour } & Partial<SimulatorServerOptions> = {},
): Promise<RunningSimulator> {
  return (await startSharedTestSimulator({ ...options, token: TEST_TOKEN })).simulator;
}

export interface Reply {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  readonly json: unknown;
}

/** POSTs `body` (serialized unless already a string) with the test token unless told otherwise. */
export async function post(
  simulator: RunningSimulator,
  path: string,
  body: unknown,
  options: { token?: string | null; method?: string } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  const token = options.token === undefined ? TEST_TOKEN : options.token;
  if (token !== null) headers['x-api-token'] = token;
  const method = options.method ?? 'POST';
  const response = await fetch(`${simulator.baseUrl}${path}`, {
    method,
    headers,
    ...(method === 'GET' ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  return replyOf(response);
}

/** Status, headers and body of `response`, the body parsed as JSON when it is JSON. */
export async function replyOf(response: Response): Promise<Reply> {
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}
