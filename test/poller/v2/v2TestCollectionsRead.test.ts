// `GET /v2/test-collections` is read as one page at the largest limit (`limit=100`, "newest
// first"); an answer longer than the limit it was asked for is none the definition allows, and
// must not grow the families past the newest 100.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import {
  SharedTestCollections,
  readTestCollections,
} from '../../../src/poller/v2/v2TestCollectionsRead.js';
import { Secret } from '../../../src/secrets/secret.js';
import { TrunkV2Client } from '../../../src/trunk/v2Client.js';
import { cleanUp, makeClient, sendJson, sendText, startApiServer } from '../../trunk/harness.js';

afterEach(cleanUp);

const FIXTURES = join(import.meta.dirname, '..', '..', 'trunk', 'fixtures', 'v2');

/** A logger whose lines the test reads. */
function capturedLogger() {
  let lines = '';
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines += chunk.toString();
      callback();
    },
  });
  return {
    logger: createLogger({ level: 'info', destination, secrets: () => [] }),
    lines: () => lines,
  };
}

/** readTestCollections through the real client, of a server answering each request with `answer`. */
async function readFrom(answer: (cursor: string | null) => unknown) {
  const server = await startApiServer((req, res) => {
    sendJson(res, 200, answer(new URL(req.url ?? '/', 'http://fake').searchParams.get('cursor')));
  }, '');
  const { client } = makeClient(server.origin, {
    token: undefined,
    apiKey: new Secret('trunk_v2_collections-key'),
  });
  const { logger, lines } = capturedLogger();
  const read = await readTestCollections(
    new TrunkV2Client(client),
    { now: () => 1_800_000_000, logger },
    {},
  );
  // The log lines are written after the read returns.
  await new Promise((resolve) => setImmediate(resolve));
  return { read, lines: lines(), requests: server.requests };
}

describe('readTestCollections', () => {
  it('reads the newest 100 of a page that lists more than the limit, and says the rest are left out', async () => {
    // 150 collections in one page answered to `limit=100`, newest first, through the real client.
    const data = Array.from({ length: 150 }, (_, index) => ({
      id: `c0ffee00-0000-4000-8000-${String(index).padStart(12, '0')}`,
      name: `Suite ${String(index)}`,
      description: null,
      testCaseCount: index,
      quarantineEnabled: false,
      autoQuarantineEnabled: false,
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
    }));
    const { read, lines } = await readFrom(() => ({ data, nextCursor: null, hasMore: false }));
    expect(read.collections).toHaveLength(100);
    expect(read.collections.at(-1)).toEqual({
      name: 'Suite 99',
      testCases: 99,
      quarantineEnabled: false,
    });
    expect(lines).toContain('more than 100 test collections');
  });

  it('follows an empty first page with a cursor to the collections behind it, and says none are left out', async () => {
    // "Opaque cursor for the next page, or null on the last page": the first page has no row and a
    // cursor, the second the organization's two collections and none after them.
    const fixture = join(FIXTURES, 'test-collections-behind-an-empty-page.json');
    const pages = JSON.parse(readFileSync(fixture, 'utf8')) as unknown[];
    const { read, lines, requests } = await readFrom((cursor) => pages[cursor === null ? 0 : 1]);
    expect(read.collections).toEqual([
      { name: 'Backend integration tests', testCases: 1284, quarantineEnabled: true },
      { name: 'Frontend unit tests', testCases: 0, quarantineEnabled: false },
    ]);
    expect(requests.map((request) => request.url)).toEqual([
      '/v2/test-collections?limit=100',
      '/v2/test-collections?limit=100&cursor=AQEKY29sbGVjdGlvbnM',
    ]);
    expect(lines).not.toContain('test collections');
  });

  it('reads on past a page shorter than the limit that has a cursor, to the last page', async () => {
    // Asked `limit=100`, Trunk answers five collections two a page, newest first, each page but the
    // last with a cursor ("Opaque cursor for the next page, or null on the last page").
    const pages = JSON.parse(
      readFileSync(join(FIXTURES, 'test-collections-in-pages-of-two.json'), 'utf8'),
    ) as unknown[];
    const byCursor = [null, 'AQEKcGFnZTI', 'AQEKcGFnZTM'];
    const { read, lines, requests } = await readFrom((cursor) => pages[byCursor.indexOf(cursor)]);
    expect(read.collections).toEqual([
      { name: 'Backend integration tests', testCases: 1284, quarantineEnabled: true },
      { name: 'Frontend unit tests', testCases: 310, quarantineEnabled: false },
      { name: 'Mobile UI tests', testCases: 42, quarantineEnabled: true },
      { name: 'Payments contract tests', testCases: 17, quarantineEnabled: false },
      { name: 'Legacy smoke tests', testCases: 0, quarantineEnabled: false },
    ]);
    expect(requests).toHaveLength(3);
    expect(lines).not.toContain('test collections');
  });

  it('names a collection whose name is empty `unknown`: an empty label value is, to Prometheus, no label', async () => {
    // `TestCollection.name` is a string with no minLength in Trunk's definition.
    const page = JSON.parse(
      readFileSync(join(FIXTURES, 'test-collections-one-with-an-empty-name.json'), 'utf8'),
    ) as unknown;
    const { read } = await readFrom(() => page);
    expect(read.collections).toEqual([
      { name: 'unknown', testCases: 12, quarantineEnabled: true },
      { name: 'Backend integration tests', testCases: 1284, quarantineEnabled: false },
    ]);
  });
});

describe('SharedTestCollections', () => {
  it("logs a failed read with the API error's call context, not its stack", async () => {
    // docs/operations.md, Logs: "a failure of the API carries its endpoint, status and request id
    // instead of a stack trace, which only an unexpected error keeps".
    const server = await startApiServer((_req, res) => {
      sendText(res, 400, 'bad request', { 'x-request-id': 'req-7f3a9' });
    }, '');
    const { client } = makeClient(server.origin, {
      token: undefined,
      apiKey: new Secret('trunk_v2_collections-key'),
    });
    const { logger, lines } = capturedLogger();
    const shared = new SharedTestCollections(
      new TrunkV2Client(client),
      { maxAgeSeconds: 300, staleAfterSeconds: 600 },
      logger,
      () => 1_800_000_000,
    );

    await expect(shared.get({})).rejects.toMatchObject({ status: 400 });

    const line = JSON.parse(lines().trim()) as Record<string, unknown>;
    expect(line).toMatchObject({
      endpoint: 'v2/test-collections',
      status: 400,
      requestId: 'req-7f3a9',
      reason: 'http_status',
      attempts: 1,
    });
    expect(line.msg).toContain("the organization's test collections could not be read");
    expect(lines()).not.toContain('"stack"');
  });
});
