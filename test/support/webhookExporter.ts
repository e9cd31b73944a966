// A real exporter with webhooks on, polling a frozen simulator, for tests that send it webhooks
// over loopback and read its answers and counters from outside.
import { parseExposition } from './exposition.js';
import {
  configYaml,
  startFrozenSimulator,
  startTestExporter,
  type ExporterUnderTest,
} from './exporterHarness.js';
import { WEBHOOK_SECRET, postWebhook, signedHeaders } from './webhooks.js';

export const WEB = 'github.com/acme/web';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts it with acme/web main (merge queue and flaky tests) as its target, a tolerance of 60 s,
 * and `webhooks` as further lines of the `webhooks:` section; resolves once it is ready.
 */
export async function startWebhookExporter(
  options: {
    server?: string;
    auth?: Record<string, string>;
    webhooks?: string;
    /** `webhooks.toleranceSeconds`; 60 unless told. */
    toleranceSeconds?: number;
  } = {},
) {
  const { simulator } = await startFrozenSimulator();
  const yaml = [
    configYaml({
      apiUrl: simulator.baseUrl,
      targets: `  - repo: ${WEB}\n    branches: [main]\n    flakyTests: true`,
      ...(options.server === undefined ? {} : { server: options.server }),
    }),
    'webhooks:',
    '  enabled: true',
    `  signingSecret: ${WEBHOOK_SECRET}`,
    `  toleranceSeconds: ${String(options.toleranceSeconds ?? 60)}`,
    ...(options.webhooks === undefined ? [] : [options.webhooks]),
  ].join('\n');
  const test = await startTestExporter(yaml);
  const deadline = performance.now() + 20_000;
  while (
    (await fetch(`${test.exporter.url}/readyz`, { headers: options.auth ?? {} })).status !== 200
  ) {
    if (performance.now() > deadline) throw new Error('exporter never became ready');
    await sleep(50);
  }
  simulator.resetRequestCounts();
  const url = `${test.exporter.url}/webhooks/trunk`;
  const post = (body: string, headers: Record<string, string> = signedHeaders(body)) =>
    postWebhook(url, body, headers);
  return { simulator, test, url, post };
}

/** trunk_exporter_webhook_requests_total by result. */
export async function webhookResults(
  test: ExporterUnderTest,
  auth: Record<string, string> = {},
): Promise<Record<string, number>> {
  const samples = parseExposition(await test.scrape('/metrics', auth)).filter(
    (sample) => sample.name === 'trunk_exporter_webhook_requests_total',
  );
  return Object.fromEntries(
    samples.map((sample) => [sample.labels.result ?? '', sample.value] as const),
  );
}
