// The live part of the page (the prom-client registry) is rendered here in both text formats, from
// the registry's JSON, rather than by prom-client's own `metrics()`: switching a shared registry with `setContentType()` per request is racy, and
// prom-client 15 renames counters in place when it renders OpenMetrics (drops `_total`), which
// breaks every later Prometheus-format scrape. The engine's families are rendered by familyText.ts
// with the same escaping.

export type ExpositionFormat = 'prometheus' | 'openmetrics';

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
export const OPENMETRICS_CONTENT_TYPE =
  'application/openmetrics-text; version=1.0.0; charset=utf-8';

const OPENMETRICS_MEDIA_TYPE = 'application/openmetrics-text';
/** OpenMetrics versions a client may ask for that our 1.0.0 output satisfies. */
const OPENMETRICS_VERSIONS = new Set([undefined, '1.0.0', '0.0.1']);

/** What prom-client's `getMetricsAsJSON()` gives at run time (its typings call `type` an enum). */
export interface MetricFamily {
  readonly name: string;
  readonly help: string;
  readonly type: string;
  readonly values: readonly PromClientValue[];
}

/** A prom-client value as getMetricsAsJSON() gives it; a family's series is a `Sample`. */
interface PromClientValue {
  readonly value: number;
  readonly labels: Readonly<Record<string, string | number | undefined>>;
  /** Set for histogram and summary parts (`_bucket`, `_sum`, `_count`). */
  readonly metricName?: string | undefined;
}

interface MediaRange {
  readonly type: string;
  readonly version: string | undefined;
  readonly q: number;
}

/**
 * Picks OpenMetrics when the client prefers it (Prometheus lists it first, with the highest
 * q-value), the Prometheus text format otherwise, including for a missing or unparsable header.
 */
export function negotiateExpositionFormat(acceptHeader: string | undefined): ExpositionFormat {
  if (acceptHeader === undefined) return 'prometheus';
  const ranges = parseAccept(acceptHeader)
    .filter((range) => range.q > 0)
    // Array.prototype.sort is stable: equal q-values keep the client's order.
    .sort((a, b) => b.q - a.q);
  for (const range of ranges) {
    if (range.type === OPENMETRICS_MEDIA_TYPE && OPENMETRICS_VERSIONS.has(range.version)) {
      return 'openmetrics';
    }
    if (range.type === 'text/plain' || range.type === 'text/*' || range.type === '*/*') {
      return 'prometheus';
    }
  }
  return 'prometheus';
}

/** The Content-Type header of a format. */
export function contentTypeOf(format: ExpositionFormat): string {
  return format === 'openmetrics' ? OPENMETRICS_CONTENT_TYPE : PROMETHEUS_CONTENT_TYPE;
}

/**
 * Renders families as one part of a page, in Prometheus text format 0.0.4 or OpenMetrics 1.0.0.
 * Families without samples are left out, as client_golang does. Only the part that ends the page
 * carries OpenMetrics' `# EOF`, so parts rendered separately can be sent one after the other.
 */
export function renderFamilies(
  families: readonly MetricFamily[],
  format: ExpositionFormat,
  { endOfPage }: { endOfPage: boolean },
): string {
  let text = '';
  for (const family of families) {
    if (family.values.length === 0) continue;
    text += renderFamilyHeader(family, format) + renderFamilySamples(family, format);
  }
  if (endOfPage && format === 'openmetrics') text += '# EOF\n';
  return text;
}

/** prom-client's JSON of metrics as families. */
export function toFamilies(
  metrics: readonly {
    name: string;
    help: string;
    type: unknown;
    values: readonly PromClientValue[];
  }[],
): MetricFamily[] {
  return metrics.map((metric) => ({
    name: metric.name,
    help: metric.help,
    type: String(metric.type),
    values: metric.values,
  }));
}

function parseAccept(header: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const part of header.split(',')) {
    const [mediaType = '', ...parameters] = part.split(';').map((piece) => piece.trim());
    if (mediaType === '') continue;
    let q = 1;
    let version: string | undefined;
    for (const parameter of parameters) {
      const separator = parameter.indexOf('=');
      if (separator < 0) continue;
      const key = parameter.slice(0, separator).trim().toLowerCase();
      const value = parameter
        .slice(separator + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1');
      if (key === 'q') {
        const parsed = Number(value);
        q = value !== '' && Number.isFinite(parsed) ? parsed : 0;
      } else if (key === 'version') {
        version = value;
      }
    }
    ranges.push({ type: mediaType.toLowerCase(), version, q });
  }
  return ranges;
}

/**
 * A family's `# HELP` and `# TYPE` lines. In OpenMetrics 1.0.0 a counter family is named without
 * `_total` (its samples keep it).
 */
export function renderFamilyHeader(family: MetricFamily, format: ExpositionFormat): string {
  const openMetrics = format === 'openmetrics';
  const name = familyNameOf(family, openMetrics);
  const type = openMetrics ? openMetricsType(family.type) : prometheusType(family.type);
  return `# HELP ${name} ${escapeHelp(family.help, openMetrics)}\n# TYPE ${name} ${type}\n`;
}

/** A family's sample lines, each ending in a newline; '' when it has none. */
export function renderFamilySamples(family: MetricFamily, format: ExpositionFormat): string {
  const openMetrics = format === 'openmetrics';
  const familyName = familyNameOf(family, openMetrics);
  const isOpenMetricsCounter = openMetrics && family.type === 'counter';
  let text = '';
  for (const sample of family.values) {
    const name = isOpenMetricsCounter ? `${familyName}_total` : (sample.metricName ?? familyName);
    text += `${name}${formatLabels(sample.labels, openMetrics)} ${formatNumber(sample.value)}\n`;
  }
  return text;
}

function familyNameOf(family: MetricFamily, openMetrics: boolean): string {
  return openMetrics && family.type === 'counter'
    ? family.name.replace(/_total$/, '')
    : family.name;
}

function prometheusType(type: string): string {
  return ['counter', 'gauge', 'histogram', 'summary'].includes(type) ? type : 'untyped';
}

function openMetricsType(type: string): string {
  return ['counter', 'gauge', 'histogram', 'summary'].includes(type) ? type : 'unknown';
}

/**
 * `le` and `quantile` go last, where readers (and client_golang) put them. Built as one string,
 * without intermediate arrays: every sample of a render goes through here.
 */
function formatLabels(
  labels: Readonly<Record<string, string | number | undefined>>,
  openMetrics: boolean,
): string {
  let pairs = '';
  let trailing = '';
  for (const name of Object.keys(labels)) {
    const value = labels[name];
    if (value === undefined) continue;
    if (name === 'le' || name === 'quantile') {
      trailing += `,${name}="${escapeLabelValue(formatBound(value, openMetrics))}"`;
    } else {
      pairs += `,${name}="${escapeLabelValue(String(value))}"`;
    }
  }
  const all = pairs + trailing;
  return all === '' ? '' : `{${all.slice(1)}}`;
}

/** OpenMetrics wants canonical floats for `le`/`quantile` (`1.0`, not `1`) so series match. */
export function formatBound(value: string | number, openMetrics: boolean): string {
  if (typeof value === 'string') return value;
  return openMetrics ? formatOpenMetricsFloat(value) : formatNumber(value);
}

/** A float as OpenMetrics and client_golang write one: `1.0` rather than `1`, which reads as an integer. */
export function formatOpenMetricsFloat(value: number): string {
  const text = formatNumber(value);
  return Number.isFinite(value) && !/[.e]/.test(text) ? `${text}.0` : text;
}

/** Sample values as both parsers read them: `NaN`, `+Inf`, `-Inf`, else JavaScript's shortest form. */
export function formatNumber(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}

/** HELP escapes backslash and newline; OpenMetrics also escapes the double quote. */
export function escapeHelp(help: string, openMetrics: boolean): string {
  const escaped = help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
  return openMetrics ? escaped.replace(/"/g, '\\"') : escaped;
}

/** Characters a label value must escape; most values have none and are returned as they are. */
const LABEL_VALUE_SPECIALS = /[\\"\n]/;

export function escapeLabelValue(value: string): string {
  if (!LABEL_VALUE_SPECIALS.test(value)) return value;
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
