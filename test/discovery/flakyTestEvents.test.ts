// What a flaky-test webhook sets off, through a real exporter on loopback: read through API v2, any
// such event (an investigation too) reads the organization's test list again within the trigger
// spacing, at most once per spacing however many events come, and every target it serves shows
// the new list; through API v1, an investigation walks nothing.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { select, type Sample } from '../support/exposition.js';
import { configYaml, startFrozenSimulator, startTestExporter } from '../support/exporterHarness.js';
import { pageAt, startFakeV2 } from '../support/fakeTrunkV2.js';
import { WEBHOOK_SECRET, postWebhook, signedHeaders } from '../support/webhooks.js';
import { cleanUp } from '../trunk/harness.js';

afterEach(cleanUp);

const SPACING = { coalesceMs: 50, mergeQueueMs: 200, flakyTestsMs: 1_000 };
const WEB_ID = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const API_ID = '0b7a8f1e-3c2d-4e5f-9a8b-7c6d5e4f3a2b';

function webhookBody(name: string): string {
  return readFileSync(
    join(import.meta.dirname, '..', 'trunk', 'fixtures', 'webhooks', `${name}.json`),
    'utf8',
  );
}

const quarantined = (samples: readonly Sample[], repo: string) =>
  select(samples, 'trunk_flaky_tests_quarantined', { repo })[0]?.value;

const webhooksOn = ['webhooks:', '  enabled: true', `  signingSecret: ${WEBHOOK_SECRET}`].join(
  '\n',
);

describe('flaky-test webhooks', () => {
  it('read the organization’s test list again through API v2, an investigation too, at most once per spacing', async () => {
    const tests = [...pageAt('tests-of-repositories-named-three-ways.json').data];
    const fake = await startFakeV2({
      tests,
      repositories: {
        [WEB_ID]: pageAt('repository-on-the-providers-default-host.json'),
        [API_ID]: pageAt('repository-on-a-self-hosted-gitlab.json'),
      },
    });
    const yaml = `${configYaml({
      apiUrl: fake.origin,
      token: null,
      apiKey: 'trunk_v2_webhook-refresh',
      targets: [
        '  - repo: github.com/acme/web',
        '    flakyTests: true',
        '  - repo: gitlab.acme.internal/platform/api',
        '    flakyTests: true',
      ].join('\n'),
    })}\n${webhooksOn}`;
    const exporter = await startTestExporter(yaml, 'info', undefined, SPACING);
    await exporter.waitFor(
      (samples) => quarantined(samples, 'github.com/acme/web') === 3,
      'the first read',
    );
    // Each read is of both lists; the quarantined tests' one shows on the page, so it is counted.
    const quarantinedReads = () =>
      fake
        .requestsTo(/^\/v2\/tests$/)
        .filter((request) => request.url.includes('quarantineState=quarantined'));
    const reads = () => quarantinedReads().length;
    expect(reads()).toBe(1);
    // A test of each repository leaves quarantine; only an event says so before the next interval.
    tests.splice(0, 1);
    tests.splice(2, 1);
    const url = `${exporter.exporter.url}/webhooks/trunk`;
    const investigation = webhookBody('webhook-investigation-completed');
    expect((await postWebhook(url, investigation, signedHeaders(investigation))).status).toBe(204);
    const refreshed = await exporter.waitFor(
      (samples) => quarantined(samples, 'github.com/acme/web') === 2,
      'the list read again after the event',
    );
    // Both targets the list serves show it, from one read.
    expect(quarantined(refreshed, 'gitlab.acme.internal/platform/api')).toBe(1);
    expect(reads()).toBe(2);
    // A burst of events, one every tenth of a spacing (twice the coalescing window): a read after
    // it, and at most one per spacing (test/webhooks/pollTriggers.test.ts pins the times on fake
    // timers). Each event read starts after the burst began and is received before the count, so
    // spaced reads number at most one more than the spacings between the two; counted, not timed
    // read by read, as a busy machine sends one request later after its timer than the next.
    const burstFrom = Date.now();
    const statusChanged = webhookBody('test-case-status-changed-v2');
    for (let i = 0; i < 10; i++) {
      await postWebhook(url, statusChanged, signedHeaders(statusChanged));
      await new Promise((resolve) => setTimeout(resolve, SPACING.flakyTestsMs / 10));
    }
    await exporter.waitFor(
      () => quarantinedReads().some((request) => request.receivedAt >= burstFrom),
      'a read after the burst',
    );
    // Room for reads that must not come.
    await new Promise((resolve) => setTimeout(resolve, SPACING.flakyTestsMs * 1.5));
    const spacings = Math.floor((Date.now() - burstFrom) / SPACING.flakyTestsMs);
    // Reads at every event would be ten: about four spacings pass on an idle machine.
    expect(reads() - 2).toBeLessThanOrEqual(spacings + 1);
  });

  it('walk nothing through API v1 for an investigation, and a status change walks its list', async () => {
    const { simulator } = await startFrozenSimulator();
    const yaml = `${configYaml({
      apiUrl: simulator.baseUrl,
      targets: '  - repo: github.com/acme/web\n    flakyTests: true',
    })}\n${webhooksOn}`;
    const exporter = await startTestExporter(yaml, 'info', undefined, SPACING);
    await exporter.waitUntilReady();
    const walks = () => simulator.requestCounts()['/v1/flaky-tests/list-quarantined-tests'] ?? 0;
    const before = walks();
    const url = `${exporter.exporter.url}/webhooks/trunk`;
    const investigation = webhookBody('webhook-investigation-completed');
    await postWebhook(url, investigation, signedHeaders(investigation));
    await new Promise((resolve) => setTimeout(resolve, SPACING.coalesceMs * 6));
    expect(walks()).toBe(before);
    const statusChanged = webhookBody('webhook-v1-status-changed');
    await postWebhook(url, statusChanged, signedHeaders(statusChanged));
    await exporter.waitFor(() => walks() > before, 'a walk after the status change');
  });
});
