// Pages rendered the one way production renders them: through a MetricsPage, gzip included.
import { gunzipSync } from 'node:zlib';
import type { Registry } from 'prom-client';
import type { ExpositionFormat } from '../../src/metrics/exposition.js';
import { MetricsPage } from '../../src/metrics/metricsPage.js';
import type { MetricsPageResponse } from '../../src/metrics/metricsPage.js';
import { createRegistry, registerExporterMetrics } from '../../src/metrics/index.js';
import { SnapshotFamilies } from '../../src/metrics/snapshotFamilies.js';
import { SnapshotStore } from '../../src/snapshot/store.js';

/** A response's body as text, gunzipped when it was sent gzipped. */
export function responseText(response: MetricsPageResponse): string {
  const bytes = Buffer.concat(response.chunks);
  const text = (response.contentEncoding === 'gzip' ? gunzipSync(bytes) : bytes).toString('utf8');
  return text;
}

/** The page in `format`, as a scrape gets it; `gzip` asks for (and gunzips) the gzip encoding. */
export async function renderPage(
  page: MetricsPage,
  format: ExpositionFormat = 'prometheus',
  { gzip = false }: { gzip?: boolean } = {},
): Promise<string> {
  return responseText(await page.render(format, { acceptGzip: gzip }));
}

/** The exporter's page of `store` (merge queues polled every 30 s), without process metrics. */
export function storePage(store: SnapshotStore): MetricsPage {
  const registry = createRegistry({ defaultMetrics: false });
  const { snapshotMetrics } = registerExporterMetrics({
    registry,
    store,
    version: 'test',
    mergeQueueIntervalSeconds: 30,
    flakyTestsIntervalSeconds: 300,
    topCodeowners: 20,
  });
  return new MetricsPage({ registry, store, snapshotMetrics });
}

/** A page of `registry` alone: no target, no snapshot family. */
export function registryPage(registry: Registry): MetricsPage {
  return new MetricsPage({
    registry,
    store: new SnapshotStore(600),
    snapshotMetrics: new SnapshotFamilies({
      settings: {
        mergeQueueIntervalSeconds: 30,
        flakyTestsIntervalSeconds: 300,
        topCodeowners: 5,
        version: 'test',
      },
      selection: {},
      definitions: [],
    }),
  });
}

/** `registry`'s page in `format`, rendered afresh. */
export function renderRegistry(
  registry: Registry,
  format: ExpositionFormat = 'prometheus',
): Promise<string> {
  return renderPage(registryPage(registry), format);
}
