import type { Registry } from 'prom-client';
import { renderFamilies, toFamilies } from './exposition.js';
import type { ExpositionFormat } from './exposition.js';
import type { RenderErrors } from './renderErrors.js';

/** prom-client's process and Node.js metrics, whose collection reads /proc and event-loop histograms. */
export function isProcessMetric(name: string): boolean {
  return name.startsWith('process_') || name.startsWith('nodejs_');
}

/**
 * The metrics of the prom-client registry whose names `selects` (what the exporter observes
 * itself), read through its public API. Metric by metric rather than getMetricsAsJSON(), whose one
 * Promise.all fails the whole page when one collect() throws: a failing metric is left out and
 * counted, as a failing family is. The part that ends the page carries OpenMetrics' `# EOF`.
 * `complete` is false when a metric was left out.
 */
export async function renderLivePart(
  registry: Registry,
  format: ExpositionFormat,
  renderErrors: RenderErrors | undefined,
  { selects, endOfPage }: { selects: (name: string) => boolean; endOfPage: boolean },
): Promise<{ readonly text: string; readonly complete: boolean }> {
  const metrics = registry.getMetricsAsArray().flatMap(({ name }) => {
    const metric = registry.getSingleMetric(name);
    return metric === undefined || !selects(name) ? [] : [{ name, metric }];
  });
  let complete = true;
  const collect = async ({ name, metric }: (typeof metrics)[number]) => {
    try {
      return [await metric.get()];
    } catch (error) {
      complete = false;
      renderErrors?.record(name, error);
      return [];
    }
  };
  // The render-error counter is read last, so the page counts its own failures.
  const collected = await Promise.all(
    metrics.map((entry) =>
      entry.name === renderErrors?.name ? Promise.resolve([]) : collect(entry),
    ),
  );
  const countedAt = metrics.findIndex(({ name }) => name === renderErrors?.name);
  const counted = metrics[countedAt];
  if (counted !== undefined) collected[countedAt] = await collect(counted);
  const text = renderFamilies(toFamilies(collected.flat()), format, { endOfPage });
  return { text, complete };
}
