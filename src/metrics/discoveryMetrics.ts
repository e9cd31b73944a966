import { Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import type { DiscoveryObserver } from '../discovery/observer.js';
import type { PollKind } from '../snapshot/types.js';
import { NAMESPACE, fqName } from './naming.js';

const SUBSYSTEM = 'exporter';

const DISCOVERED_TARGETS = fqName(NAMESPACE, SUBSYSTEM, 'discovered_targets');
const LAST_SUCCESS = fqName(NAMESPACE, SUBSYSTEM, 'discovery_last_success_timestamp', 'seconds');

const POLL_KINDS: readonly PollKind[] = ['merge_queue', 'flaky_tests'];

/** Registers the discovery gauges and returns what feeds them. */
export function registerDiscoveryMetrics(registry: Registry): DiscoveryObserver {
  const discovered = new Gauge({
    name: DISCOVERED_TARGETS,
    help:
      'Targets this instance polls because discovery found them (API v2: the list of merge ' +
      "queues, and the repositories the organization's quarantined, flaky or broken tests name), " +
      'not because the configuration lists them, by kind. 0 with discovery off.',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const lastSuccess = new Gauge({
    name: LAST_SUCCESS,
    help: "Unix time of discovery's last read in which every list it reads succeeded: the organization's merge queues (GET /v2/merge-queues) and, with discovery.flakyTests, its quarantined tests and its flaky and broken tests (GET /v2/tests); 0 until one succeeds. Discovery is API v2 only.",
    registers: [registry],
  });
  for (const kind of POLL_KINDS) discovered.set({ kind }, 0);
  return {
    discoveredTargets(counts) {
      for (const kind of POLL_KINDS) discovered.set({ kind }, counts[kind]);
    },
    discoverySucceeded(at) {
      lastSuccess.set(at);
    },
  };
}
