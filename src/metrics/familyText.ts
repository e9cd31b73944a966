// Exposition text of the engine's families, in Prometheus text format 0.0.4 or OpenMetrics 1.0.0,
// straight from the definitions' samples (no intermediate objects per sample: a page of 1,000
// queues is most of a million lines).
import { cumulativeBuckets, exemplarAt, type Exemplar } from '../snapshot/histogram.js';
import type { ExpositionFormat } from './exposition.js';
import {
  escapeHelp,
  escapeLabelValue,
  formatBound,
  formatNumber,
  formatOpenMetricsFloat,
} from './exposition.js';
import type { FamilyDefinition, FamilyType, Sample } from './family.js';

/** One family ready to render in one format: its header and how its sample lines begin. */
export interface FamilyText {
  /** The `# HELP` and `# TYPE` lines. */
  readonly header: string;
  /** The family's sample lines for `samples`, each ending in a newline; '' for none. */
  readonly render: (samples: Iterable<Sample>) => string;
}

/** Suffixes OpenMetrics puts on samples but not on the family name. */
const OPENMETRICS_SAMPLE_SUFFIX: Partial<Record<FamilyType, string>> = {
  counter: '_total',
  info: '_info',
};

/** What the Prometheus text format, which has neither, calls a stateset and an info. */
function prometheusType(type: FamilyType): string {
  return type === 'stateset' || type === 'info' ? 'gauge' : type;
}

/** Prepares `definition` with `help` for rendering in `format`. */
export function familyText(
  definition: FamilyDefinition,
  help: string,
  format: ExpositionFormat,
): FamilyText {
  const openMetrics = format === 'openmetrics';
  const suffix = openMetrics ? OPENMETRICS_SAMPLE_SUFFIX[definition.type] : undefined;
  const familyName =
    suffix !== undefined && definition.name.endsWith(suffix)
      ? definition.name.slice(0, -suffix.length)
      : definition.name;
  const type = openMetrics ? definition.type : prometheusType(definition.type);
  const header = `# HELP ${familyName} ${escapeHelp(help, openMetrics)}\n# TYPE ${familyName} ${type}\n`;
  const { name, labelNames } = definition;
  const labelOpenings = labelNames.map((label, index) => `${index === 0 ? '' : ','}${label}="`);

  /** `{a="x",b="y"` without the closing brace; '' without labels. */
  const openLabels = (values: readonly string[]): string => {
    let text = '';
    for (let index = 0; index < labelOpenings.length; index++) {
      text += `${labelOpenings[index] ?? ''}${escapeLabelValue(values[index] ?? '')}"`;
    }
    return text === '' ? '' : `{${text}`;
  };

  const render = (samples: Iterable<Sample>): string => {
    let text = '';
    for (const sample of samples) {
      const labels = openLabels(sample.labels);
      const closed = labels === '' ? '' : `${labels}}`;
      if (!('histogram' in sample)) {
        text += `${name}${closed} ${formatNumber(sample.value)}\n`;
        continue;
      }
      // `le` goes last, inside the same braces as the other labels.
      const bucketOpen = labels === '' ? `${name}_bucket{` : `${name}_bucket${labels},`;
      const { exemplarsSince } = sample;
      for (const [slot, bucket] of cumulativeBuckets(sample.histogram).entries()) {
        const le = escapeLabelValue(formatBound(bucket.le, openMetrics));
        // The Prometheus text format has no exemplars.
        const exemplar = openMetrics ? exemplarAt(sample.histogram, slot) : undefined;
        const written =
          exemplar !== undefined &&
          (exemplarsSince === undefined || exemplar.timestampSeconds >= exemplarsSince);
        const suffix = written ? exemplarText(exemplar) : '';
        text += `${bucketOpen}le="${le}"} ${formatNumber(bucket.count)}${suffix}\n`;
      }
      text += `${name}_sum${closed} ${formatNumber(sample.histogram.sum)}\n`;
      text += `${name}_count${closed} ${formatNumber(sample.histogram.count)}\n`;
    }
    return text;
  };
  return { header, render };
}

/** An exemplar as OpenMetrics writes it after a bucket's value (` # {pr="123"} 754.0 1732790000.000`). */
function exemplarText({ pullRequest, value, timestampSeconds }: Exemplar): string {
  const timestamp = Number.isFinite(timestampSeconds) ? ` ${timestampSeconds.toFixed(3)}` : '';
  return ` # {pr="${String(pullRequest)}"} ${formatOpenMetricsFloat(value)}${timestamp}`;
}
