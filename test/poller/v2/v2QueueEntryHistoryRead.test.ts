// The log lines of the queue-entry history read: an API error there is told by its call context
// (docs/operations.md, Logs: "a failure of the API carries its endpoint, status and request id
// instead of a stack trace, which only an unexpected error keeps"), as a failed poll's is.
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import {
  historyReadFailed,
  historySetAside,
} from '../../../src/poller/v2/v2QueueEntryHistoryRead.js';
import { Secret } from '../../../src/secrets/secret.js';
import { TrunkV2Client } from '../../../src/trunk/v2Client.js';
import { cleanUp, makeClient, rejectionOf, sendText, startApiServer } from '../../trunk/harness.js';

afterEach(cleanUp);

const PULL_REQUEST_ID = '0b6f3c1e-7d42-4a51-9f0e-2c8d5b7a1e93';

/** A logger whose lines the test reads, and the error of a history read answered `status`. */
async function failedRead(status: number, maxResponseBytes?: number) {
  const server = await startApiServer((_req, res) => {
    sendText(res, status, 'x'.repeat(200), { 'x-request-id': 'req-5e1d0' });
  }, '');
  const { client } = makeClient(server.origin, {
    token: undefined,
    apiKey: new Secret('trunk_v2_history-log-key'),
    retry: { maxAttempts: 1 },
    ...(maxResponseBytes === undefined ? {} : { maxResponseBytes }),
  });
  const error = await rejectionOf(
    new TrunkV2Client(client).listQueueEntryHistory([PULL_REQUEST_ID], {}),
  );
  let lines = '';
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines += chunk.toString();
      callback();
    },
  });
  const logger = createLogger({ level: 'info', destination, secrets: () => [] });
  return { error: error as Error, logger, line: () => JSON.parse(lines.trim()) as object };
}

describe('queue-entry history read log lines', () => {
  it("tell a failed read by the API error's call context, without its stack", async () => {
    const { error, logger, line } = await failedRead(400);
    historyReadFailed(logger)(error);
    expect(line()).toMatchObject({
      endpoint: 'v2/queue-entry-history',
      status: 400,
      requestId: 'req-5e1d0',
      reason: 'http_status',
      attempts: 1,
    });
    expect(line()).not.toHaveProperty('err');
  });

  it('tell a pull request set aside the same way, with its id', async () => {
    const { error, logger, line } = await failedRead(200, 100);
    historySetAside(logger)(PULL_REQUEST_ID, error);
    expect(line()).toMatchObject({
      endpoint: 'v2/queue-entry-history',
      reason: 'response_too_large',
      pullRequestId: PULL_REQUEST_ID,
    });
    expect(line()).not.toHaveProperty('err');
  });
});
