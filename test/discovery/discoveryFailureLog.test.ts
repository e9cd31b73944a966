// A failed read of the organization's list of merge queues with discovery on, through a real
// exporter and a fake organization on loopback: one log line per failed read, at `error` with what
// to check when Trunk refuses the key (docs/operations.md, "Logging"), at `warn` otherwise, and
// without a stack trace for an API error.
import { afterEach, describe, expect, it } from 'vitest';
import { configYaml, startTestExporter } from '../support/exporterHarness.js';
import { pageAt, startFakeV2 } from '../support/fakeTrunkV2.js';
import type { V2MergeQueue } from '../../src/trunk/v2Schemas.js';
import { cleanUp, sendJson, startApiServer } from '../trunk/harness.js';

afterEach(cleanUp);

/** Discovery on and read often, with its queue list due at every read. */
function discoveryYaml(apiUrl: string): string {
  return configYaml({
    apiUrl,
    token: null,
    apiKey: 'trunk_v2_Dl7xQ2fa9KzR',
    targets: '  []',
    polling: '  mergeQueueIntervalSeconds: 0.1\n  flakyTestsIntervalSeconds: 600',
    timeoutSeconds: 1,
  }).replace(
    'targets:\n',
    'discovery:\n  enabled: true\n  intervalSeconds: 0.1\n  flakyTests: false\ntargets:\n',
  );
}

interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly check?: string;
  readonly err?: unknown;
  readonly status?: number;
  readonly reason?: string;
}

/** The log lines that report a failed read of the queue list (or discovery failing on it). */
function failureLines(logs: string): LogLine[] {
  return (
    logs
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as LogLine)
      // A read the test's stop aborts (while it waits to retry a 500) is not one of the failures.
      .filter(({ reason }) => reason !== 'aborted')
      .filter(({ msg }) =>
        /merge queues could not be read|keeping the last list of merge queues/.test(msg),
      )
  );
}

/** Runs discovery against a queue list answering `status` until it has been asked three times. */
async function failingDiscovery(status: number): Promise<{ lines: LogLine[]; reads: number }> {
  const fake = await startFakeV2({ queues: pageAt('merge-queues-of-an-organization.json') });
  fake.fail(/^\/v2\/merge-queues$/, status);
  const exporter = await startTestExporter(discoveryYaml(fake.origin));
  const deadline = Date.now() + 10_000;
  while (fake.requestsTo(/^\/v2\/merge-queues$/).length < 3) {
    if (Date.now() > deadline) throw new Error('the list of queues was not asked for three times');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await exporter.stop();
  return {
    lines: failureLines(exporter.logs()),
    reads: fake.requestsTo(/^\/v2\/merge-queues$/).length,
  };
}

describe("a failed read of the organization's merge queues with discovery on", () => {
  it.each([401, 403])(
    'logs HTTP %i once per read, at error, with what to check and no stack',
    async (status) => {
      const { lines, reads } = await failingDiscovery(status);
      expect(lines.length).toBeGreaterThanOrEqual(1);
      // One line per failed read, not one from the read and another from discovery.
      expect(lines.length).toBeLessThanOrEqual(reads);
      for (const line of lines) {
        expect(line).toMatchObject({ level: 50, status });
        expect(line.msg).not.toContain('discovery failed');
        expect(line.err).toBeUndefined();
        // operations.md: a 401/403 says what to check (trunk.apiKey, trunk.apiKeyFile or TRUNK_API_KEY).
        expect(line.check).toContain('trunk.apiKey, trunk.apiKeyFile or TRUNK_API_KEY');
        expect(line.msg).toContain(`; ${line.check ?? ''}`);
      }
      if (status === 401) {
        expect(lines[0]?.check).toBe(
          'Trunk rejected the API key: check trunk.apiKey, trunk.apiKeyFile or TRUNK_API_KEY ' +
            '(an API v2 key starts with trunk_v2_; a v1 token does not work on v2)',
        );
      }
    },
  );

  it('logs any other failure once per read, at warn, without a hint or a stack', async () => {
    const { lines, reads } = await failingDiscovery(500);
    expect(lines.length).toBeGreaterThanOrEqual(1);
    expect(lines.length).toBeLessThanOrEqual(reads);
    for (const line of lines) {
      expect(line).toMatchObject({ level: 40, status: 500 });
      expect(line.check).toBeUndefined();
      expect(line.err).toBeUndefined();
    }
  });
});

describe("an endless list of the organization's merge queues with discovery on", () => {
  it('is read to the pages discovery.maxTargets can keep, then fails with a warn line naming the bound, counted as paging_stopped', async () => {
    // Each page 100 queues of their own branches and a new cursor, for ever.
    const [queue] = pageAt('merge-queues-of-an-organization.json').data as V2MergeQueue[];
    if (queue === undefined) throw new Error('the fixture lists no queue');
    const server = await startApiServer((req, res) => {
      const page = server.requests.length;
      const data = Array.from({ length: 100 }, (_, row) => ({
        ...queue,
        id: `mq_${String(page)}_${String(row)}`,
        targetBranch: `release/${String(page)}.${String(row)}`,
      }));
      if (req.url?.startsWith('/v2/merge-queues?') === true)
        sendJson(res, 200, { data, nextCursor: `p${String(page)}`, hasMore: true });
      else sendJson(res, 404, { error: { code: 'NOT_FOUND' } });
    }, '');
    // One read (the next is 600 s away), with discovery.maxTargets of 30,000.
    const yaml = configYaml({
      apiUrl: server.origin,
      token: null,
      apiKey: 'trunk_v2_Dl7xQ2fa9KzR',
      targets: '  []',
    }).replace(
      'targets:\n',
      'discovery:\n  enabled: true\n  intervalSeconds: 600\n  flakyTests: false\n' +
        '  maxTargets: 30000\ntargets:\n',
    );
    const exporter = await startTestExporter(yaml);
    const samples = await exporter.waitFor(
      (current) =>
        current.some(
          (sample) =>
            sample.name === 'trunk_exporter_api_anomalies_total' &&
            sample.labels.endpoint === 'v2/merge-queues' &&
            sample.labels.kind === 'paging_stopped' &&
            sample.value === 1,
        ),
      'the walk of the queue list stopped',
    );
    expect(samples.some((s) => s.name === 'trunk_exporter_discovered_targets' && s.value > 0)).toBe(
      false,
    );
    // docs/configuration.md: 30,000 queues at 100 a page, and a tenth more: 300 + 30.
    expect(server.requests).toHaveLength(330);
    const lines = failureLines(exporter.logs());
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40 });
    expect(lines[0]?.msg).toContain(
      'the list of merge queues (GET /v2/merge-queues): more than 330 pages; stopped: with ' +
        'discovery on the list is read to 33000 queues at most: discovery.maxTargets (30000)',
    );
  });
});
