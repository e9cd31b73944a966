// 200 answers whose bodies an upstream got wrong or made hostile: each fails as one schema mismatch
// that says what is wrong, or is read as JSON.parse reads it; none is retried and none crashes.
import { afterEach, describe, expect, it } from 'vitest';
import { queueResponse } from './fixtures.js';
import { REPO, cleanUp, makeClient, rejectionOf, startApiServer } from './harness.js';

afterEach(cleanUp);

const DEPTH = 100_000;
const queue = JSON.stringify(queueResponse());
/** The queue answer with `field` put first, its value given as JSON text. */
const withField = (field: string, json: string): string => `{"${field}":${json},${queue.slice(1)}`;

describe('a 200 whose body cannot be the answer', () => {
  it.each([
    [
      'an HTML login page',
      '<html><title>Sign in</title><p>Sign in to continue</p></html>',
      'response is not JSON: "Sign in Sign in to continue"',
    ],
    ['null', 'null', 'response does not match the schema: (root): expected object, received null'],
    [
      'an array',
      '[]',
      'response does not match the schema: (root): expected object, received array',
    ],
    [
      'a number',
      '42',
      'response does not match the schema: (root): expected object, received number',
    ],
    [
      'JSON with trailing garbage',
      `${queue} <!-- edge -->`,
      'response is not JSON: "{"state":"running",',
    ],
    [
      'arrays nested 100,000 deep',
      `${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`,
      '(root): expected object, received array',
    ],
  ])('%s: one schema mismatch naming what is wrong, not retried', async (_name, body, message) => {
    const server = await startApiServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
    const { client, observer } = makeClient(server.apiUrl);

    const error = await rejectionOf(client.getQueue(REPO, 'main'));

    expect(error).toMatchObject({ reason: 'schema_mismatch', status: 200, attempts: 1 });
    expect((error as Error).message).toContain(message);
    expect(observer.codes()).toEqual(['200']);
    expect(observer.mismatches).toEqual(['getQueue']);
  });
});

describe('a 200 that is odd but still the answer', () => {
  it.each([
    [
      'an unknown field nested 100,000 deep',
      withField('edge', `${'{"a":'.repeat(DEPTH)}1${'}'.repeat(DEPTH)}`),
    ],
    [
      '100,000 unknown keys',
      `{${Array.from({ length: DEPTH }, (_, key) => `"k${String(key)}":${String(key)}`).join(',')},${queue.slice(1)}`,
    ],
    ['a byte order mark', `\uFEFF${queue}`],
  ])('%s: read as the queue it holds', async (_name, body) => {
    const server = await startApiServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
    const { client, observer } = makeClient(server.apiUrl);

    const answer = await client.getQueue(REPO, 'main');

    expect(answer.state).toBe('running');
    expect(answer.enqueuedPullRequests.map((pr) => pr.prNumber)).toEqual([11, 12, 13]);
    expect(observer.mismatches).toEqual([]);
  });

  it('a key given twice: the last one, as JSON.parse reads it (RFC 8259 leaves it open)', async () => {
    const server = await startApiServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(withField('state', '"paused"'));
    });
    const { client } = makeClient(server.apiUrl);

    expect((await client.getQueue(REPO, 'main')).state).toBe('running');
  });
});
