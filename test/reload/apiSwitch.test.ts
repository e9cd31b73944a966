// A reload that removes the API key moves a queue from API v2 to API v1, and one that adds it back
// returns it to v2: a real exporter polls one origin serving a fake Trunk v1 queue and a fake v2
// organization, both moved by hand. docs/configuration.md, `reads.queueEntryHistory`: "turned off
// by a reload, the failures the histories had counted stay in
// `trunk_merge_queue_pull_requests_failed_total`, a counter that must not go down". API v1 reads no
// queue-entry history either: a switch to it turns those reads off as well.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { record, recordTesting } from '../support/entryHistoryExporter.js';
import { select, type Sample } from '../support/exposition.js';
import { configYaml, startTestExporter } from '../support/exporterHarness.js';
import { afterPolls, fakeQueue, now, queueItem, submitted } from '../support/fakeTrunkV1Queue.js';
import { pageAt, startFakeV2 } from '../support/fakeTrunkV2.js';
import { WEB_QUEUE, entryRow, moveEntry } from '../support/queueEntryRows.js';
import { WEB_MAIN } from '../support/webQueueSamples.js';
import { cleanUp, startApiServer } from '../trunk/harness.js';

afterEach(cleanUp);

/** One origin for both APIs: `/v1/…` goes to the v1 fake, the rest to the v2 fake. */
function bothApis(v1Origin: string, v2Origin: string) {
  return startApiServer(async (req, res, _index, recorded) => {
    const origin = recorded.url.startsWith('/v1/') ? v1Origin : v2Origin;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string' && !['host', 'connection', 'content-length'].includes(name)) {
        headers[name] = value;
      }
    }
    const answer = await fetch(`${origin}${recorded.url}`, {
      method: recorded.method,
      headers,
      ...(recorded.method === 'GET' ? {} : { body: recorded.body }),
    });
    res.writeHead(answer.status, {
      'content-type': answer.headers.get('content-type') ?? 'application/json',
    });
    res.end(await answer.text());
  }, '');
}

const failedByReason = (samples: readonly Sample[]): Record<string, number> =>
  Object.fromEntries(
    select(samples, 'trunk_merge_queue_pull_requests_failed_total', WEB_MAIN).map(
      (sample): [string, number] => [sample.labels.reason ?? '', sample.value],
    ),
  );

describe('a reload that switches a queue between API v2 and API v1', () => {
  it('keeps the failures the queue-entry histories counted, through v1 and back', async () => {
    const testingSince = now() - 600;
    const v1 = await fakeQueue();
    v1.world.items = [queueItem(1, 'testing', testingSince), queueItem(2, 'testing', testingSince)];
    const pr1 = entryRow(1, 'testing', testingSince);
    const pr2 = entryRow(2, 'testing', testingSince);
    const v2 = await startFakeV2({
      queues: pageAt('merge-queues-of-an-organization.json'),
      entries: { [WEB_QUEUE]: [pr1, pr2] },
    });
    recordTesting(v2, 1, testingSince);
    recordTesting(v2, 2, testingSince);
    const api = await bothApis(v1.server.origin, v2.origin);
    const file = join(await mkdtemp(join(tmpdir(), 'trunk-exporter-api-switch-')), 'config.yaml');
    const yaml = (withKey: boolean) =>
      configYaml({
        apiUrl: api.origin,
        ...(withKey ? { apiKey: 'trunk_v2_api-switch-key' } : {}),
        targets: '  - repo: github.com/acme/web\n    branches: [main]',
        polling: '  mergeQueueIntervalSeconds: 0.3\n  flakyTestsIntervalSeconds: 600',
      });
    const reload = async (withKey: boolean) => {
      await writeFile(file, yaml(withKey));
      expect((await exporter.exporter.reload('SIGHUP')).applied).toBe(true);
    };
    await writeFile(file, yaml(true));
    const exporter = await startTestExporter(yaml(true), 'info', file);
    await exporter.waitUntilReady();
    const v2Polls = () => v2.requestsTo(/\/pull-requests$/).length;
    /** PR `number` fails on a timeout, as both APIs tell it from now on. */
    const fail = (row: typeof pr1) => {
      const at = now();
      moveEntry(row, 'failed', at);
      record(v2, row.number, 'failed', at, 'TEST_RUN_TIMEOUT');
      v1.world.lookups.set(row.number, submitted(row.number, 'failed', at));
      v1.world.items = v1.world.items.filter((item) => item.prNumber !== row.number);
    };
    await afterPolls(v2Polls, 2);

    // #1 fails; its history names the reason.
    fail(pr1);
    await exporter.waitFor(
      (samples) => failedByReason(samples).TEST_RUN_TIMEOUT === 1,
      'the first failure by reason',
    );
    // The key is removed: API v1 polls the queue and reads no history.
    await reload(false);
    await afterPolls(v1.polls, 3);
    expect(failedByReason(await exporter.samples())).toEqual({ TEST_RUN_TIMEOUT: 1 });
    // The key is back; #2 fails on a timeout too.
    await reload(true);
    await afterPolls(v2Polls, 3);
    fail(pr2);
    await afterPolls(v2Polls, 8);

    const samples = await exporter.samples();
    expect(failedByReason(samples)).toEqual({ TEST_RUN_TIMEOUT: 2 });
    expect(
      select(samples, 'trunk_merge_queue_pull_requests_exited_total', {
        ...WEB_MAIN,
        outcome: 'failed',
      })[0]?.value,
    ).toBe(2);
  });
});
