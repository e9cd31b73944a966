// Metric names are assembled from these parts, as the Prometheus Go exporters do, so every collector
// spells its namespace, subsystem and base unit the same way.

/** Prefix of every metric this exporter defines (Trunk's own endpoint uses `mq_`, so not that). */
export const NAMESPACE = 'trunk';

/** Joins namespace, subsystem, name and base unit with underscores, skipping empty parts. */
export function fqName(namespace: string, subsystem: string, name: string, unit = ''): string {
  return [namespace, subsystem, name, unit].filter((part) => part.length > 0).join('_');
}
