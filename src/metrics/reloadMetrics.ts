import { Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import type { ReloadObserver } from '../reload/observer.js';
import { NAMESPACE, fqName } from './naming.js';

const SUBSYSTEM = 'exporter';

const LAST_RELOAD_SUCCESSFUL = fqName(NAMESPACE, SUBSYSTEM, 'config_last_reload_successful');
const LAST_RELOAD_SUCCESS_TIMESTAMP = fqName(
  NAMESPACE,
  SUBSYSTEM,
  'config_last_reload_success_timestamp',
  'seconds',
);

/** Registers the configuration reload gauges, as Prometheus names its own. */
export function registerReloadMetrics(registry: Registry): ReloadObserver {
  const successful = new Gauge({
    name: LAST_RELOAD_SUCCESSFUL,
    help: 'Whether the last configuration reload attempt succeeded (1) or was rejected (0); 1 after start-up.',
    registers: [registry],
  });
  const successTimestamp = new Gauge({
    name: LAST_RELOAD_SUCCESS_TIMESTAMP,
    help: 'Unix time of the last successful configuration load, start-up included.',
    registers: [registry],
  });
  return {
    reloadSucceeded(atSeconds) {
      successful.set(1);
      successTimestamp.set(atSeconds);
    },
    reloadFailed() {
      successful.set(0);
    },
  };
}
