// Odd data in Trunk's answers, in the log: a real local server answers a page with rows the
// exporter cannot use (fixtures/v2/pull-requests-page-with-unusable-rows.json: four of them); the
// warn line names the endpoint, the queue and what was left out, once an hour per endpoint and kind.
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.js';
import { Secret } from '../../src/secrets/secret.js';
import { ANOMALY_LOG_INTERVAL_MS, AnomalyLog } from '../../src/trunk/anomalyLog.js';
import { TrunkV2Client } from '../../src/trunk/v2Client.js';
import { cleanUp, makeClient, sendJson, startApiServer } from './harness.js';

afterEach(cleanUp);

const QUEUE = { id: 'mq_7f3a', repo: 'github.com/acme/web', branch: 'main' };

/** A logger whose JSON lines the test reads. */
function capturedLogger() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString().split('\n')) {
        if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      callback();
    },
  });
  return { logger: createLogger({ level: 'info', destination, secrets: () => [] }), lines };
}

/** The logger's lines written: each passes through its scrubbing stream a turn after the last. */
async function flushed(): Promise<void> {
  for (let turn = 0; turn < 10; turn++) await new Promise((resolve) => setImmediate(resolve));
}

describe('the log of odd data in answers', () => {
  it('names the endpoint, the queue, the kind and how many, for each answer until it has logged them', async () => {
    const page: unknown = JSON.parse(
      readFileSync(
        new URL('fixtures/v2/pull-requests-page-with-unusable-rows.json', import.meta.url),
        'utf8',
      ),
    );
    const server = await startApiServer((_req, res) => {
      sendJson(res, 200, page);
    }, '');
    const { logger, lines } = capturedLogger();
    const { client } = makeClient(server.origin, {
      token: undefined,
      apiKey: new Secret('trunk_v2_anomaly-log-key'),
      logger,
    });
    const v2 = new TrunkV2Client(client);
    await v2.listQueuePullRequests(QUEUE, { states: ['pending'] });
    await v2.listQueuePullRequests(QUEUE, { states: ['pending'] });
    await flushed();

    const warned = lines.filter((line) => line.level === 40);
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({
      endpoint: 'v2/merge-queues/{id}/pull-requests',
      repo: 'github.com/acme/web',
      branch: 'main',
      kind: 'invalid_item',
      count: 4,
    });
    expect(warned[0]?.msg).toContain('left out');
  });

  it('logs an endpoint and kind again an hour later, with how many it did not log meanwhile; another kind at once', async () => {
    const { logger, lines } = capturedLogger();
    let now = 0;
    const log = new AnomalyLog(logger, () => now);
    const target = { endpoint: 'v2/tests', repo: '(organization)', branch: undefined } as const;
    log.found(target, 'invalid_item', 2);
    now = ANOMALY_LOG_INTERVAL_MS - 1;
    log.found(target, 'invalid_item', 3);
    log.found(target, 'invalid_field', 1);
    now = 2 * ANOMALY_LOG_INTERVAL_MS;
    log.found(target, 'invalid_item', 5);
    await flushed();

    expect(lines.map(({ kind, count }) => [kind, count])).toEqual([
      ['invalid_item', 2],
      ['invalid_field', 1],
      ['invalid_item', 5],
    ]);
    expect(lines[2]?.msg).toContain('with 3 more of this endpoint and kind not logged');
  });
});
