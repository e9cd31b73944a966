import { Registry, collectDefaultMetrics } from 'prom-client';

export interface RegistryOptions {
  /** Process and Node.js runtime metrics; off in tests whose golden pages must be deterministic. */
  readonly defaultMetrics?: boolean;
}

/**
 * prom-client's default metrics include three gauges named `_total`, which `promtool check metrics`
 * rejects ("non-counter metrics should not have _total suffix"). The same counts are exported by
 * type as `nodejs_active_handles`, `nodejs_active_requests` and `nodejs_active_resources`.
 */
const MISNAMED_DEFAULT_METRICS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/** Creates the exporter's registry: the one place a Registry is constructed (never the global one). */
export function createRegistry(options: RegistryOptions = {}): Registry {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) {
    collectDefaultMetrics({ register: registry });
    for (const name of MISNAMED_DEFAULT_METRICS) registry.removeSingleMetric(name);
  }
  return registry;
}
