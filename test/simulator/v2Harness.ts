// Shared set-up for the simulator's v2 tests: a real server with a v1 token and a v2 API key, and
// a GET helper that sends the key as a Bearer token and returns status, headers and body.
import { expect } from 'vitest';
import type { SimulatorFlavour } from '../../src/simulator/responses.js';
import type { RunningSimulator, SimulatorServerOptions } from '../../src/simulator/server.js';
import { startTestSimulator as startSharedTestSimulator } from '../support/simulator.js';
import { replyOf, TEST_TOKEN, type Reply } from './harness.js';

export const TEST_API_KEY = 'trunk_v2_test-key-456';

/** Starts a simulator that accepts TEST_TOKEN on v1 and TEST_API_KEY on v2; closed after the test. */
export async function startV2Simulator(
  options: { seed?: number; flavour?: SimulatorFlavour } & Partial<SimulatorServerOptions> = {},
): Promise<RunningSimulator> {
  const started = await startSharedTestSimulator({
    apiKey: TEST_API_KEY,
    ...options,
    token: TEST_TOKEN,
  });
  return started.simulator;
}

/** Sends `path` (with its query) to the simulator's host with the test key unless told otherwise. */
export async function v2Request(
  simulator: RunningSimulator,
  path: string,
  options: { key?: string | null; method?: string; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const key = options.key === undefined ? TEST_API_KEY : options.key;
  const headers: Record<string, string> = { ...options.headers };
  if (key !== null) headers.Authorization = `Bearer ${key}`;
  return replyOf(
    await fetch(`${simulator.origin}${path}`, { method: options.method ?? 'GET', headers }),
  );
}

/** A list page as the wire carries it, rows left unchecked. */
export interface Page {
  readonly data: Record<string, unknown>[];
  readonly nextCursor: string | null;
  readonly hasMore: boolean;
  readonly total?: number;
}

/** GETs `path` and expects a 200 list page. */
export async function getPage(simulator: RunningSimulator, path: string): Promise<Page> {
  const reply = await v2Request(simulator, path);
  expect(reply.status, reply.text).toBe(200);
  return reply.json as Page;
}

/** GETs `path` and expects a 200 JSON object. */
export async function getOne(
  simulator: RunningSimulator,
  path: string,
): Promise<Record<string, unknown>> {
  const reply = await v2Request(simulator, path);
  expect(reply.status, reply.text).toBe(200);
  return reply.json as Record<string, unknown>;
}

/** Every row of a list, following nextCursor; `between` runs after each page. */
export async function walk(
  simulator: RunningSimulator,
  path: string,
  between?: () => void,
): Promise<{ rows: Record<string, unknown>[]; pages: number }> {
  const rows: Record<string, unknown>[] = [];
  let pages = 0;
  let cursor: string | null = null;
  const join = path.includes('?') ? '&' : '?';
  do {
    const suffix: string = cursor === null ? '' : `${join}cursor=${encodeURIComponent(cursor)}`;
    const page = await getPage(simulator, `${path}${suffix}`);
    pages += 1;
    expect(page.hasMore).toBe(page.nextCursor !== null);
    rows.push(...page.data);
    cursor = page.nextCursor;
    between?.();
  } while (cursor !== null && pages < 10_000);
  return { rows, pages };
}

/** The error envelope of `reply`. */
export function errorOf(reply: Reply): { code: string; message: string } | undefined {
  const body = reply.json as { error?: { code: string; message: string } } | undefined;
  return body?.error;
}
