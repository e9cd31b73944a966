// The webhook series follow webhooks.enabled, as a family only one API can feed is absent where the
// other is in use: with webhooks off there is no endpoint, so the endpoint's counters are absent
// rather than zeros that cannot move; turned on (at start or by a reload) every result and anomaly
// kind is present at 0, a target's event counters appear with its first event, and turned off again
// all of them leave the page.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WEBHOOK_ANOMALY_KINDS } from '../../src/trunk/webhookFields.js';
import { WEBHOOK_ONLY_FAMILIES } from '../../src/metrics/families.js';
import { EXITS_BY_SOURCE } from '../../src/metrics/queueFlowMetrics.js';
import { WEBHOOK_RESULTS } from '../../src/webhooks/observer.js';
import {
  configYaml,
  startFrozenSimulator,
  startTestExporter,
  type ExporterUnderTest,
} from '../support/exporterHarness.js';
import { WEBHOOK_SECRET, postWebhook, signedHeaders } from '../support/webhooks.js';

/** The webhook series on the exporter's page, as `name{label}` keys with their values. */
async function webhookSeries(test: ExporterUnderTest): Promise<Map<string, number>> {
  const series = new Map<string, number>();
  for (const sample of await test.samples()) {
    if (WEBHOOK_ONLY_FAMILIES.includes(sample.name))
      series.set(`${sample.name}{${Object.values(sample.labels).join(',')}}`, sample.value);
    else if (sample.name === 'trunk_exporter_webhook_requests_total')
      series.set(`${sample.name}{${sample.labels.result}}`, sample.value);
    else if (sample.name === 'trunk_exporter_webhook_unrecognized_events_total')
      series.set(`${sample.name}{${sample.labels.type}}`, sample.value);
    else if (
      sample.name === 'trunk_exporter_api_anomalies_total' &&
      sample.labels.endpoint === 'webhook'
    )
      series.set(`${sample.name}{webhook,${sample.labels.kind}}`, sample.value);
  }
  return series;
}

/** Every result and anomaly kind at 0: a fresh endpoint's series. */
const AT_ZERO = new Map([
  ...WEBHOOK_RESULTS.map(
    (result) => [`trunk_exporter_webhook_requests_total{${result}}`, 0] as const,
  ),
  ...WEBHOOK_ANOMALY_KINDS.map(
    (kind) => [`trunk_exporter_api_anomalies_total{webhook,${kind}}`, 0] as const,
  ),
]);

describe("the webhook endpoint's series", () => {
  it('are absent with webhooks off, at 0 once a reload turns them on, and gone when it turns them off', async () => {
    const { simulator } = await startFrozenSimulator();
    const file = join(await mkdtemp(join(tmpdir(), 'trunk-exporter-webhook-series-')), 'c.yaml');
    const yaml = (webhooks: string) =>
      `${configYaml({ apiUrl: simulator.baseUrl, targets: '  - repo: github.com/acme/web\n    branches: [main]' })}\n${webhooks}`;
    const on = yaml(`webhooks:\n  enabled: true\n  signingSecret: ${WEBHOOK_SECRET}`);
    await writeFile(file, yaml(''));
    const test = await startTestExporter(yaml(''), 'info', file);
    expect(await webhookSeries(test)).toEqual(new Map());

    await writeFile(file, on);
    expect((await test.exporter.reload('SIGHUP')).applied).toBe(true);
    // Once its queue is polled, its exits by source too: its ledger keeps them, webhooks on or off.
    await test.waitFor(
      (samples) => samples.some(({ name }) => name === EXITS_BY_SOURCE),
      'exits by source once the queue is polled',
    );
    const bySourceAtZero = ['event', 'poll'].map(
      (source) => [`${EXITS_BY_SOURCE}{github.com/acme/web,main,${source}}`, 0] as const,
    );
    expect(await webhookSeries(test)).toEqual(new Map([...AT_ZERO, ...bySourceAtZero]));
    const unknownType = JSON.stringify({ type: 'some.new_event' });
    const url = `${test.exporter.url}/webhooks/trunk`;
    expect((await postWebhook(url, unknownType, signedHeaders(unknownType))).status).toBe(204);
    const queued = JSON.stringify({
      type: 'pull_request.queued',
      pr_number: 42,
      repository: { host: 'github.com', owner: 'acme', name: 'web' },
      target_branch: 'main',
      timestamp: new Date().toISOString(),
    });
    expect((await postWebhook(url, queued, signedHeaders(queued))).status).toBe(204);
    await test.waitFor(
      (samples) => samples.some(({ name }) => name === 'trunk_merge_queue_webhook_events_total'),
      'the event counted',
    );
    const afterEvent = await webhookSeries(test);
    expect(afterEvent).toEqual(
      new Map([
        ...AT_ZERO,
        ...bySourceAtZero,
        ['trunk_exporter_webhook_requests_total{accepted}', 1],
        ['trunk_exporter_webhook_requests_total{unrecognized}', 1],
        ['trunk_exporter_webhook_unrecognized_events_total{some.new_event}', 1],
        ['trunk_merge_queue_webhook_events_total{github.com/acme/web,main,pull_request.queued}', 1],
      ]),
    );

    await writeFile(file, yaml(''));
    expect((await test.exporter.reload('SIGHUP')).applied).toBe(true);
    expect(await webhookSeries(test)).toEqual(new Map());
  });

  it('are at 0 from the first scrape when webhooks are on at start', async () => {
    const { simulator } = await startFrozenSimulator();
    const test = await startTestExporter(
      `${configYaml({ apiUrl: simulator.baseUrl, targets: '  - repo: github.com/acme/web\n    branches: [main]' })}\nwebhooks:\n  enabled: true\n  signingSecret: ${WEBHOOK_SECRET}`,
    );
    expect(await webhookSeries(test)).toEqual(AT_ZERO);
  });
});
