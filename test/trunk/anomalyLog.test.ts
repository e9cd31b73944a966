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
import { entryRow, moveEntry } from '../support/queueEntryRows.js';
import { START, watchedQueue } from '../support/v2QueuePolls.js';
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

  it('names the queue of a pull request that left its live entries for a state the exporter does not know, as for odd rows', async () => {
    // #1 testing, then `parked` (a state Trunk adds): the live read, which asks for the five live
    // states, no longer lists it, and no read of concluded entries does (it never concluded).
    const pr1 = entryRow(1, 'testing', START - 300);
    const { logger, lines } = capturedLogger();
    const { clock, poll } = await watchedQueue([pr1], { logger });
    await poll();
    moveEntry(pr1, 'parked', clock.now - 5);
    // Asked about on three polls, then kept as absent: one anomaly.
    for (let index = 0; index < 5; index++) await poll();
    await flushed();

    const unknownState = lines.filter(
      (line) => line.level === 40 && line.kind === 'unknown_entry_state',
    );
    expect(unknownState).toHaveLength(1);
    expect(unknownState[0]).toMatchObject({
      endpoint: 'v2/merge-queues/{id}/pull-requests',
      repo: 'github.com/acme/web',
      branch: 'main',
      count: 1,
    });
  });

  it('names each queue setting of another type than its definition gives, through API v1 and v2', async () => {
    // The fixtures of tolerantResponses.test.ts and exporter.v2Answers.test.ts: ten fields each,
    // counted as invalid_field and read as absent.
    const fixture = (path: string): unknown =>
      JSON.parse(readFileSync(new URL(`fixtures/${path}`, import.meta.url), 'utf8'));
    const server = await startApiServer((req, res) => {
      if (req.url === '/v1/getQueue') {
        sendJson(res, 200, fixture('polling/queue-settings-of-the-wrong-type.json'));
      } else sendJson(res, 200, fixture('v2/merge-queues-with-settings-of-the-wrong-type.json'));
    }, '');
    const { logger, lines } = capturedLogger();
    const { client } = makeClient(server.origin, {
      apiKey: new Secret('trunk_v2_anomaly-log-key'),
      logger,
    });
    await client.getQueue({ host: 'github.com', owner: 'acme', name: 'web' }, 'main');
    await new TrunkV2Client(client).listMergeQueues();
    await flushed();

    const named = (endpoint: string) => {
      const line = lines.find((found) => found.endpoint === endpoint);
      return {
        count: line?.count,
        fields: [...((line?.fields as string[] | undefined) ?? [])].sort(),
      };
    };
    expect(named('getQueue')).toEqual({
      count: 10,
      fields: [
        'batchingMinSize',
        'canOptimisticallyMerge',
        'commandsEnabled',
        'concurrency',
        'createPrsForTestingBranches',
        'mode',
        'optimizationMode',
        'pendingFailureDepth',
        'requiredStatuses',
        'testingTimeoutMinutes',
      ],
    });
    expect(named('v2/merge-queues')).toEqual({
      count: 10,
      fields: [
        'xK9mP2nQ.config.allowBatching',
        'xK9mP2nQ.config.areCommentsEnabled',
        'xK9mP2nQ.config.batchingMinSize',
        'xK9mP2nQ.config.bisectionConcurrency',
        'xK9mP2nQ.config.canOptimisticallyMerge',
        'xK9mP2nQ.config.concurrency',
        'xK9mP2nQ.config.optimizationMode',
        'xK9mP2nQ.config.requiredStatuses',
        'xK9mP2nQ.config.testingTimeoutMinutes',
        'xK9mP2nQ.mode',
      ],
    });
    expect(lines.find((line) => line.endpoint === 'getQueue')?.msg).toContain(
      '10 × invalid_field (a field that cannot be used as it is; read as absent, or cut to 200 characters), at concurrency, ',
    );
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

  it('names at most ten fields in a line, and how many more there are', async () => {
    // A page of 100 queues may have ten settings each read as absent: a thousand names.
    const { logger, lines } = capturedLogger();
    const log = new AnomalyLog(logger, () => 0);
    const target = {
      endpoint: 'v2/merge-queues',
      repo: '(organization)',
      branch: undefined,
    } as const;
    const fields = Array.from(
      { length: 25 },
      (_, index) => `queue${String(index)}.config.concurrency`,
    );
    log.found(target, 'invalid_field', 25, fields);
    await flushed();

    expect(lines[0]?.fields).toEqual(fields.slice(0, 10));
    expect(lines[0]?.msg).toContain('queue9.config.concurrency and 15 more;');
  });
});
