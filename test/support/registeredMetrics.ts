// The prom-client metrics an exporter registers (createExporterMetrics, as startExporter does), for
// tests that hold docs and dashboards to them.
import { LiveConfig } from '../../src/config/liveConfig.js';
import { silentLogger } from '../../src/log/logger.js';
import { createExporterMetrics } from '../../src/metrics/exporterMetricSet.js';
import { createRegistry } from '../../src/metrics/index.js';
import { Secret } from '../../src/secrets/secret.js';
import { SnapshotStore } from '../../src/snapshot/store.js';
import { exporterConfig } from './exporterConfig.js';

/** Each registered metric's name and label names, in registration order. */
export function registeredMetrics(): { name: string; labelNames: readonly string[] }[] {
  const registry = createRegistry({ defaultMetrics: false });
  const config = exporterConfig('http://127.0.0.1:1', []);
  // Over TLS, so that the metrics of a TLS listener alone are registered too.
  const tls = { certFile: 'tls.crt', keyFile: 'tls.key', cert: '', key: new Secret('') };
  createExporterMetrics(registry, {
    store: new SnapshotStore(600),
    version: 'test',
    config: new LiveConfig({ ...config, server: { ...config.server, tls } }),
    logger: silentLogger(),
  });
  return registry.getMetricsAsArray().map((metric) => ({
    name: metric.name,
    labelNames: (metric as { labelNames?: readonly string[] }).labelNames ?? [],
  }));
}
