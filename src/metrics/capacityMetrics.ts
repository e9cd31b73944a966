import { Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import type { ApiBudget } from '../budget/apiBudget.js';
import type { Sharding } from '../sharding/shardAssignment.js';
import { NAMESPACE, fqName } from './naming.js';

const SUBSYSTEM = 'exporter';

const API_BUDGET = fqName(NAMESPACE, SUBSYSTEM, 'api_budget_requests_per_second');
const SHARD_ORDINAL = fqName(NAMESPACE, SUBSYSTEM, 'shard_ordinal');
const TOTAL_SHARDS = fqName(NAMESPACE, SUBSYSTEM, 'total_shards');

interface CapacityMetricsOptions {
  readonly registry: Registry;
  /** Read on every scrape, so a recomputed budget (reload, discovery) is shown at once. */
  readonly apiBudget: () => ApiBudget;
  readonly sharding: () => Sharding;
}

/** Registers the gauges of this instance's share of the API (its budget) and of the targets (its shard). */
export function registerCapacityMetrics(options: CapacityMetricsOptions): void {
  const { registry, apiBudget, sharding } = options;

  new Gauge({
    name: API_BUDGET,
    help:
      'Requests per second this instance is expected to make to the Trunk API, by endpoint, ' +
      'estimated from its targets, configured and discovered, and the organization-wide reads ' +
      'every shard makes in full; webhook-triggered polls are not in it (docs/operations.md, ' +
      '"Polling and API cost"); compare their sum with trunk.maxRequestsPerSecond.',
    labelNames: ['endpoint'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [endpoint, rate] of Object.entries(apiBudget().byEndpoint)) {
        this.set({ endpoint }, rate);
      }
    },
  });

  new Gauge({
    name: SHARD_ORDINAL,
    help: 'Which shard this instance is (0-based); it polls the targets that hash to it.',
    registers: [registry],
    collect() {
      this.set(sharding().shard);
    },
  });

  new Gauge({
    name: TOTAL_SHARDS,
    help: 'How many shards the targets are divided among (1: unsharded).',
    registers: [registry],
    collect() {
      this.set(sharding().totalShards);
    },
  });
}
