// OpenMetrics types the merge-queue state as a StateSet and the two info families as Info, which a
// real Prometheus must accept: it scrapes the production page (it asks for OpenMetrics first),
// stores the samples under their usual names and reports the types in its metadata.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startPrometheus } from '../support/prometheus.js';
import { createTestHttpApp } from '../support/httpApp.js';
import { findSystemBinary } from '../support/systemBinary.js';
import { loadScenario, replayScenario } from './scenario.js';

const prometheus = findSystemBinary('prometheus', 'prometheus');

interface TargetMetadata {
  readonly metric: string;
  readonly type: string;
}

describe('OpenMetrics stateset and info types', () => {
  it.skipIf(prometheus === undefined)(
    'a real Prometheus scrapes them in OpenMetrics and keeps every sample',
    async () => {
      const { store } = replayScenario(loadScenario('normal-queue'));
      const { app } = createTestHttpApp({ store });
      const accepted: string[] = [];
      const server = createServer((request, response) => {
        if (request.url === '/metrics') accepted.push(request.headers.accept ?? '');
        app(request, response);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      const running = await startPrometheus({
        binary: prometheus ?? 'prometheus',
        scrapeTarget: `127.0.0.1:${port}`,
        intervalSeconds: 0.2,
      });
      try {
        const deadline = Date.now() + 20_000;
        let metadata: TargetMetadata[] = [];
        while (!metadata.some(({ metric }) => metric.startsWith('trunk_merge_queue'))) {
          if (Date.now() > deadline) throw new Error(`no metadata scraped\n${running.log()}`);
          await new Promise((resolve) => setTimeout(resolve, 200));
          metadata = (await running.api(
            '/api/v1/targets/metadata?match_target=' + encodeURIComponent('{job="trunk-exporter"}'),
          )) as TargetMetadata[];
        }
        expect(accepted[0]).toMatch(/^application\/openmetrics-text/);
        const typeOf = (metric: string): string | undefined =>
          metadata.find((entry) => entry.metric === metric)?.type;
        expect(typeOf('trunk_merge_queue_state')).toBe('stateset');
        expect(typeOf('trunk_merge_queue')).toBe('info');
        expect(typeOf('trunk_exporter_build')).toBe('info');
        expect(typeOf('trunk_merge_queue_concurrency')).toBe('gauge');

        expect((await running.query('up{job="trunk-exporter"}'))[0]?.value[1]).toBe('1');
        const states = await running.query('trunk_merge_queue_state');
        expect(states.map(({ metric }) => metric.state).sort()).toEqual([
          'draining',
          'paused',
          'running',
          'switching_modes',
        ]);
        const info = await running.query('trunk_merge_queue_info');
        expect(info.map(({ metric }) => metric.mode)).toEqual(['parallel']);
        const build = await running.query('trunk_exporter_build_info');
        expect(build.map(({ metric }) => metric.version)).toEqual(['9.9.9-test']);
      } finally {
        await running.stop();
        await new Promise((resolve) => server.close(resolve));
      }
    },
  );
});
