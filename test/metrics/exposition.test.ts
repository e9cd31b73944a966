import { Counter, Gauge, Histogram, Summary } from 'prom-client';
import type { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  OPENMETRICS_CONTENT_TYPE,
  PROMETHEUS_CONTENT_TYPE,
  negotiateExpositionFormat,
  renderFamilySamples,
} from '../../src/metrics/exposition.js';
import type { MetricFamily } from '../../src/metrics/exposition.js';
import type { FamilyDefinition } from '../../src/metrics/family.js';
import { familyText } from '../../src/metrics/familyText.js';
import { createRegistry } from '../../src/metrics/registry.js';
import {
  cumulativeBuckets,
  emptyHistogram,
  observe,
  type HistogramCounts,
} from '../../src/snapshot/histogram.js';
import { registryPage, renderRegistry } from './page.js';

/** What Prometheus 2.x sends by default (scrape_protocols unset). */
const PROMETHEUS_2_ACCEPT =
  'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';
/** What Prometheus 3.x sends by default. */
const PROMETHEUS_3_ACCEPT =
  'application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,application/openmetrics-text;version=0.0.1;escaping=allow-utf-8;q=0.4,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1';

function emptyRegistry(): Registry {
  return createRegistry({ defaultMetrics: false });
}

describe('negotiateExpositionFormat', () => {
  it.each([
    ['no header', undefined, 'prometheus'],
    ['empty header', '', 'prometheus'],
    ['curl (*/*)', '*/*', 'prometheus'],
    ['text/plain', 'text/plain;version=0.0.4', 'prometheus'],
    ['bare OpenMetrics', 'application/openmetrics-text', 'openmetrics'],
    ['Prometheus 2 default', PROMETHEUS_2_ACCEPT, 'openmetrics'],
    ['Prometheus 3 default', PROMETHEUS_3_ACCEPT, 'openmetrics'],
    [
      'Prometheus with text first in scrape_protocols',
      'text/plain;version=0.0.4;q=0.5,application/openmetrics-text;version=1.0.0;q=0.4,*/*;q=0.1',
      'prometheus',
    ],
    [
      'higher q-value wins over header order',
      'text/plain;version=0.0.4;q=0.3,application/openmetrics-text;version=1.0.0;q=0.9',
      'openmetrics',
    ],
    ['OpenMetrics refused with q=0', 'application/openmetrics-text;q=0, text/plain', 'prometheus'],
    [
      'OpenMetrics version we do not speak',
      'application/openmetrics-text;version=2.0.0',
      'prometheus',
    ],
    ['case and spaces', ' Application/OpenMetrics-Text ; Version=1.0.0 ; q=0.9 ', 'openmetrics'],
    ['garbage', ';;,,=;q', 'prometheus'],
  ] as const)('%s → %s', (_name, header, expected) => {
    expect(negotiateExpositionFormat(header)).toBe(expected);
  });
});

describe('the page of the registry', () => {
  it('gives each format its content type', async () => {
    const registry = emptyRegistry();
    expect(
      (await registryPage(registry).render('prometheus', { acceptGzip: false })).contentType,
    ).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(
      (await registryPage(registry).render('openmetrics', { acceptGzip: false })).contentType,
    ).toBe('application/openmetrics-text; version=1.0.0; charset=utf-8');
    expect(PROMETHEUS_CONTENT_TYPE).toContain('0.0.4');
    expect(OPENMETRICS_CONTENT_TYPE).toContain('1.0.0');
  });

  it('ends an OpenMetrics page with # EOF even when it is empty', async () => {
    const registry = emptyRegistry();
    expect(await renderRegistry(registry, 'openmetrics')).toBe('# EOF\n');
    expect(await renderRegistry(registry, 'prometheus')).toBe('');
  });

  it('escapes HELP and label values', async () => {
    const registry = emptyRegistry();
    const gauge = new Gauge({
      name: 'test_escaping',
      help: 'back\\slash "quoted"\nsecond line',
      labelNames: ['value'] as const,
      registers: [registry],
    });
    gauge.set({ value: 'a\\b "c"\nd é' }, 1);

    const prometheus = await renderRegistry(registry, 'prometheus');
    expect(prometheus).toBe(
      [
        '# HELP test_escaping back\\\\slash "quoted"\\nsecond line',
        '# TYPE test_escaping gauge',
        'test_escaping{value="a\\\\b \\"c\\"\\nd é"} 1',
        '',
      ].join('\n'),
    );
    const openMetrics = await renderRegistry(registry, 'openmetrics');
    expect(openMetrics).toBe(
      [
        '# HELP test_escaping back\\\\slash \\"quoted\\"\\nsecond line',
        '# TYPE test_escaping gauge',
        'test_escaping{value="a\\\\b \\"c\\"\\nd é"} 1',
        '# EOF',
        '',
      ].join('\n'),
    );
  });

  // Label values are checked for these characters before they are escaped: each on its own must
  // still be caught, not only when another one comes along.
  it.each([
    ['a backslash', 'C:\\temp', 'C:\\\\temp'],
    ['a double quote', 'say "hi"', 'say \\"hi\\"'],
    ['a newline', 'two\nlines', 'two\\nlines'],
  ])('escapes a label value whose only special character is %s', async (_name, value, escaped) => {
    const registry = emptyRegistry();
    const gauge = new Gauge({
      name: 'test_escaping',
      help: 'Escaping.',
      labelNames: ['value'] as const,
      registers: [registry],
    });
    gauge.set({ value }, 1);
    for (const format of ['prometheus', 'openmetrics'] as const) {
      expect(await renderRegistry(registry, format)).toContain(
        `test_escaping{value="${escaped}"} 1\n`,
      );
    }
  });

  it('spells NaN and infinities as the parsers expect', async () => {
    const registry = emptyRegistry();
    const gauge = new Gauge({
      name: 'test_special',
      help: 'Special values.',
      labelNames: ['case'] as const,
      registers: [registry],
    });
    gauge.set({ case: 'nan' }, Number.NaN);
    gauge.set({ case: 'plus' }, Number.POSITIVE_INFINITY);
    gauge.set({ case: 'minus' }, Number.NEGATIVE_INFINITY);
    gauge.set({ case: 'small' }, 1e-7);
    gauge.set({ case: 'negative' }, -2.5);

    for (const format of ['prometheus', 'openmetrics'] as const) {
      const body = await renderRegistry(registry, format);
      expect(body).toContain('test_special{case="nan"} NaN\n');
      expect(body).toContain('test_special{case="plus"} +Inf\n');
      expect(body).toContain('test_special{case="minus"} -Inf\n');
      expect(body).toContain('test_special{case="small"} 1e-7\n');
      expect(body).toContain('test_special{case="negative"} -2.5\n');
    }
  });

  it('renders histograms as _bucket{le}, _sum and _count', async () => {
    const registry = emptyRegistry();
    const histogram = new Histogram({
      name: 'test_duration_seconds',
      help: 'Durations.',
      labelNames: ['endpoint'] as const,
      buckets: [0.5, 1],
      registers: [registry],
    });
    histogram.observe({ endpoint: 'a' }, 0.7);
    histogram.observe({ endpoint: 'a' }, 3);

    expect(await renderRegistry(registry, 'prometheus')).toBe(
      [
        '# HELP test_duration_seconds Durations.',
        '# TYPE test_duration_seconds histogram',
        'test_duration_seconds_bucket{endpoint="a",le="0.5"} 0',
        'test_duration_seconds_bucket{endpoint="a",le="1"} 1',
        'test_duration_seconds_bucket{endpoint="a",le="+Inf"} 2',
        'test_duration_seconds_sum{endpoint="a"} 3.7',
        'test_duration_seconds_count{endpoint="a"} 2',
        '',
      ].join('\n'),
    );
    // OpenMetrics compares `le` as text after canonicalising it: 1.0, never 1.
    expect(await renderRegistry(registry, 'openmetrics')).toContain(
      'test_duration_seconds_bucket{endpoint="a",le="1.0"} 1\n',
    );
  });

  it('renders summaries with quantile labels', async () => {
    const registry = emptyRegistry();
    const summary = new Summary({
      name: 'test_size_bytes',
      help: 'Sizes.',
      percentiles: [0.5, 1],
      registers: [registry],
    });
    summary.observe(10);
    const prometheus = await renderRegistry(registry, 'prometheus');
    expect(prometheus).toContain('test_size_bytes{quantile="0.5"} 10\n');
    expect(prometheus).toContain('test_size_bytes_sum 10\ntest_size_bytes_count 1\n');
    const openMetrics = await renderRegistry(registry, 'openmetrics');
    expect(openMetrics).toContain('test_size_bytes{quantile="1.0"} 10\n');
  });

  it('names OpenMetrics counter families without _total and their samples with it', async () => {
    const registry = emptyRegistry();
    new Counter({ name: 'test_events_total', help: 'Events.', registers: [registry] }).inc(3);
    new Counter({ name: 'test_legacy', help: 'No suffix.', registers: [registry] }).inc();

    expect(await renderRegistry(registry, 'openmetrics')).toBe(
      [
        '# HELP test_events Events.',
        '# TYPE test_events counter',
        'test_events_total 3',
        '# HELP test_legacy No suffix.',
        '# TYPE test_legacy counter',
        'test_legacy_total 1',
        '# EOF',
        '',
      ].join('\n'),
    );
    expect(await renderRegistry(registry, 'prometheus')).toBe(
      [
        '# HELP test_events_total Events.',
        '# TYPE test_events_total counter',
        'test_events_total 3',
        '# HELP test_legacy No suffix.',
        '# TYPE test_legacy counter',
        'test_legacy 1',
        '',
      ].join('\n'),
    );
  });

  it('keeps _total in the Prometheus format after an OpenMetrics render (prom-client 15 bug)', async () => {
    const registry = emptyRegistry();
    new Counter({ name: 'test_requests_total', help: 'Requests.', registers: [registry] }).inc();

    const before = await renderRegistry(registry, 'prometheus');
    await renderRegistry(registry, 'openmetrics');
    await renderRegistry(registry, 'openmetrics');
    const after = await renderRegistry(registry, 'prometheus');

    expect(after).toBe(before);
    expect(after).toContain('# TYPE test_requests_total counter\ntest_requests_total 1\n');
  });

  it('never writes blank lines in OpenMetrics, and leaves out families without samples', async () => {
    const registry = createRegistry();
    new Gauge({ name: 'test_never_set', help: 'Never set.', registers: [registry] });
    new Gauge({
      name: 'test_labelled_never_set',
      help: 'Never set.',
      labelNames: ['x'] as const,
      registers: [registry],
    });
    const body = await renderRegistry(registry, 'openmetrics');
    expect(body).not.toMatch(/\n\n/);
    expect(body.endsWith('\n# EOF\n')).toBe(true);
    expect(body.match(/# EOF/g)).toHaveLength(1);
    expect(body).not.toContain('test_labelled_never_set');
    // A label-less gauge has its one sample from the start, as in prom-client's own output.
    expect(body).toContain('test_never_set 0\n');
  });
});

describe('familyText', () => {
  const histogram = [30, 90, 90, 100_000].reduce(
    (counts, value) => observe(counts, value),
    emptyHistogram(),
  );
  const cases = [{ repo: 'github.com/acme/"quoted"\\back\nline', outcome: 'merged' }, {}] as const;

  it.each(
    (['prometheus', 'openmetrics'] as const).flatMap((format) =>
      cases.map((labels) => [format, labels] as const),
    ),
  )(
    'renders a histogram as renderFamilySamples renders prom-client JSON (%s, %j)',
    (format, labels) => {
      const family: MetricFamily = {
        name: 'flow_seconds',
        help: 'h',
        type: 'histogram',
        values: [
          ...cumulativeBuckets(histogram).map((bucket) => ({
            labels: { ...labels, le: bucket.le },
            value: bucket.count,
            metricName: 'flow_seconds_bucket',
          })),
          { labels, value: histogram.sum, metricName: 'flow_seconds_sum' },
          { labels, value: histogram.count, metricName: 'flow_seconds_count' },
        ],
      };
      const definition: FamilyDefinition = {
        name: 'flow_seconds',
        help: () => 'h',
        type: 'histogram',
        labelNames: Object.keys(labels),
        scope: 'targets',
        samples: () => [],
      };
      const text = familyText(definition, 'h', format).render([
        { labels: Object.values(labels), histogram },
      ]);
      expect(text).toContain('le="+Inf"');
      expect(text).toBe(renderFamilySamples(family, format));
    },
  );
});

// OpenMetrics 1.0's ABNF: `sample = metricname [labels] SP number [SP timestamp] [exemplar] LF`,
// `exemplar = SP HASH SP labels SP number [SP timestamp]`.
describe('familyText exemplars', () => {
  const definition: FamilyDefinition = {
    name: 'wait_seconds',
    help: () => 'h',
    type: 'histogram',
    labelNames: ['repo'],
    scope: 'targets',
    samples: () => [],
  };
  const bucketLines = (
    format: 'prometheus' | 'openmetrics',
    histogram: HistogramCounts,
    exemplarsSince?: number,
  ): string[] =>
    familyText(definition, 'h', format)
      .render([
        { labels: ['r'], histogram, ...(exemplarsSince === undefined ? {} : { exemplarsSince }) },
      ])
      .split('\n')
      .filter((line) => line.startsWith('wait_seconds_bucket'));
  const one = (pullRequest: number, timestampSeconds: number) =>
    observe(emptyHistogram([60, 900]), 754, { pullRequest, timestampSeconds });

  it("writes the exemplar after its bucket's value in OpenMetrics, and never in the text format", () => {
    expect(bucketLines('openmetrics', one(123, 1_732_790_000))).toEqual([
      'wait_seconds_bucket{repo="r",le="60.0"} 0',
      'wait_seconds_bucket{repo="r",le="900.0"} 1 # {pr="123"} 754.0 1732790000.000',
      'wait_seconds_bucket{repo="r",le="+Inf"} 1',
    ]);
    expect(bucketLines('prometheus', one(123, 1_732_790_000))).toEqual([
      'wait_seconds_bucket{repo="r",le="60"} 0',
      'wait_seconds_bucket{repo="r",le="900"} 1',
      'wait_seconds_bucket{repo="r",le="+Inf"} 1',
    ]);
  });

  it('writes the timestamp to the millisecond, and none that is not a number', () => {
    expect(bucketLines('openmetrics', one(7, 1_732_790_000.1234))[1]).toBe(
      'wait_seconds_bucket{repo="r",le="900.0"} 1 # {pr="7"} 754.0 1732790000.123',
    );
    expect(bucketLines('openmetrics', one(7, Number.NaN))[1]).toBe(
      'wait_seconds_bucket{repo="r",le="900.0"} 1 # {pr="7"} 754.0',
    );
  });

  it('leaves out the exemplars of events before exemplarsSince, and keeps every count', () => {
    const histogram = observe(one(2, 2_000), 30, { pullRequest: 1, timestampSeconds: 1_000 });
    expect(bucketLines('openmetrics', histogram, 1_001)).toEqual([
      'wait_seconds_bucket{repo="r",le="60.0"} 1',
      'wait_seconds_bucket{repo="r",le="900.0"} 2 # {pr="2"} 754.0 2000.000',
      'wait_seconds_bucket{repo="r",le="+Inf"} 2',
    ]);
    // One that happened at the time is written; one of no known time is not.
    expect(bucketLines('openmetrics', histogram, 1_000)[0]).toBe(
      'wait_seconds_bucket{repo="r",le="60.0"} 1 # {pr="1"} 30.0 1000.000',
    );
    expect(bucketLines('openmetrics', one(7, Number.NaN), 0)[1]).toBe(
      'wait_seconds_bucket{repo="r",le="900.0"} 1',
    );
  });
});
