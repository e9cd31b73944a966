import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_WEBHOOK_PATH } from '../../src/config/schema.js';
import {
  createDemoWorld,
  demoConfig,
  demoWebhookSecret,
  sendDemoWebhooks,
  startDemo,
} from '../../src/demo/demo.js';
import { startExporter, type RunningExporter } from '../../src/exporter.js';
import { silentLogger } from '../../src/log/logger.js';
import { SIMULATOR_DEMO_API_KEY, SIMULATOR_DEMO_TOKEN } from '../../src/simulator/repositories.js';
import { parseExposition, sum, type Sample } from '../support/exposition.js';
import { startTestSimulator } from '../support/simulator.js';
import { promtoolCheckMetrics } from '../support/promtool.js';
import { findSystemBinary } from '../support/systemBinary.js';

let demo: RunningExporter | undefined;
afterEach(async () => {
  await demo?.stop();
  demo = undefined;
});

const promtool = findSystemBinary('promtool', 'prometheus');

describe('demo', () => {
  it.skipIf(promtool === undefined)(
    'serves a full page (process metrics included) that promtool check metrics accepts without a word',
    async () => {
      demo = await startDemo({
        logger: silentLogger(),
        version: '0.0.0-test',
        port: 0,
        address: '127.0.0.1',
      });
      // Found by discovery (no target listed): the four merge queues, and the quarantine lists of
      // the four repositories with tests (one of them, on a self-hosted GitLab, without a merge
      // queue). Ready says each was polled once, not that each poll succeeded: wait for all eight.
      const deadline = Date.now() + 20_000;
      let page = '';
      let samples: Sample[] = [];
      while (
        (await fetch(`${demo.url}/readyz`)).status !== 200 ||
        sum(samples, 'trunk_exporter_target_up') !== 8
      ) {
        if (Date.now() > deadline) {
          throw new Error(
            `demo not ready with 8 targets up: ${String(sum(samples, 'trunk_exporter_target_up'))}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
        page = await (await fetch(`${demo.url}/metrics`)).text();
        samples = parseExposition(page);
      }
      expect(sum(samples, 'trunk_exporter_target_up')).toBe(8);
      expect(sum(samples, 'trunk_exporter_discovered_targets')).toBe(8);
      expect(page).toContain(
        'trunk_flaky_tests_quarantined{repo="gitlab.acme.dev/acme/storefront"}',
      );
      expect(await (await fetch(`${demo.url}/`)).text()).toContain('(discovered)');
      expect(page).toContain('process_cpu_seconds_total');
      expect(page).toContain('trunk_flaky_tests_quarantined_by_codeowner{');
      expect(await promtoolCheckMetrics(promtool ?? 'promtool', page)).toEqual({
        code: 0,
        output: '',
      });
    },
  );

  it('receives webhooks: an unsigned request is refused, and exits are counted by source', async () => {
    demo = await startDemo({
      logger: silentLogger(),
      version: '0.0.0-test',
      port: 0,
      address: '127.0.0.1',
    });
    const unsigned = await fetch(`${demo.url}${DEFAULT_WEBHOOK_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(unsigned.status).toBe(401);
    const deadline = Date.now() + 20_000;
    let page = '';
    while (!page.includes('trunk_merge_queue_pull_request_exits_by_source_total{')) {
      if (Date.now() > deadline) throw new Error('no exits_by_source series: webhooks off?');
      await new Promise((resolve) => setTimeout(resolve, 100));
      page = await (await fetch(`${demo.url}/metrics`)).text();
    }
  });
});

describe("the demo's webhooks, time compressed", () => {
  it('moves the webhook counters and shows the last event on the landing page', async () => {
    // The world starts now and the test moves it 15 simulated minutes on, so a minute of events
    // takes a moment; a world started in the past would send events from before the exporter
    // started, which count only as received.
    const origin = Math.floor(Date.now() / 1000);
    const { world, incidents } = createDemoWorld(1, origin);
    const { simulator } = await startTestSimulator({
      world,
      token: SIMULATOR_DEMO_TOKEN,
      apiKey: SIMULATOR_DEMO_API_KEY,
      faults: incidents,
    });
    const secret = demoWebhookSecret();
    const running = await startExporter(
      demoConfig(simulator.baseUrl, { port: 0, address: '127.0.0.1' }, secret),
      { logger: silentLogger(), version: '0.0.0-test' },
    );
    const webhooks = sendDemoWebhooks(world, running.url, secret, silentLogger());
    demo = {
      ...running,
      stop: async () => {
        await webhooks.stop();
        await running.stop();
      },
    };
    const metrics = async () =>
      parseExposition(await (await fetch(`${running.url}/metrics`)).text());
    const waitFor = async (what: string, done: () => Promise<boolean>) => {
      const deadline = Date.now() + 20_000;
      while (!(await done())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    // Ledgers first: events before a queue's first poll only reach the webhook counters.
    await waitFor('a first poll of every target', async () =>
      Promise.resolve(running.store.allPolledOnce()),
    );
    const accepted = (samples: Sample[]) =>
      sum(samples, 'trunk_exporter_webhook_requests_total', { result: 'accepted' });
    const before = accepted(await metrics());
    world.advance(origin + 5 * 60);
    await waitFor(
      'webhooks of five simulated minutes',
      async () => accepted(await metrics()) > before,
    );
    const afterFive = accepted(await metrics());
    world.advance(origin + 15 * 60);
    await waitFor(
      'webhooks of ten more minutes',
      async () => accepted(await metrics()) > afterFive,
    );

    const samples = await metrics();
    expect(
      sum(samples, 'trunk_exporter_webhook_requests_total', { result: 'invalid_signature' }),
    ).toBe(0);
    expect(sum(samples, 'trunk_merge_queue_webhook_events_total')).toBeGreaterThan(0);
    await waitFor(
      'an exit counted from its event',
      async () =>
        sum(await metrics(), 'trunk_merge_queue_pull_request_exits_by_source_total', {
          source: 'event',
        }) > 0,
    );
    const landing = await (await fetch(`${running.url}/`)).text();
    expect(landing).toMatch(/last event <code>(pull_request|v2\.test_case|test_case)\./);
  });
});
