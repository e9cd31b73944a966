// A prom-client Histogram whose series are read from data kept elsewhere (a flow ledger in the
// snapshot store) instead of from observe() calls: prom-client has no way to set a bucket, and
// the ledger, not the metric, is the record, so a removed target's series vanish with it.
import { Histogram } from 'prom-client';
import type { HistogramConfiguration, LabelValues } from 'prom-client';
import { renderHistogramSeries } from './exposition.js';
import type { ExpositionFormat } from './exposition.js';
import {
  cumulativeBuckets,
  FLOW_BUCKETS_SECONDS,
  type HistogramCounts,
} from '../snapshot/histogram.js';

/** One labelled histogram series as it is stored. */
export interface StoredHistogramSeries<T extends string> {
  readonly labels: LabelValues<T>;
  readonly histogram: HistogramCounts;
}

type StoredHistogramConfiguration<T extends string> = Omit<
  HistogramConfiguration<T>,
  'buckets' | 'collect'
> & {
  /** Every series to render, read at scrape time. */
  readonly read: () => Iterable<StoredHistogramSeries<T>>;
};

/** A histogram with FLOW_BUCKETS_SECONDS that renders whatever `read` returns on each scrape. */
export class StoredHistogram<T extends string> extends Histogram<T> {
  readonly #read: () => Iterable<StoredHistogramSeries<T>>;
  readonly #name: string;

  constructor({ read, ...configuration }: StoredHistogramConfiguration<T>) {
    super({ ...configuration, buckets: [...FLOW_BUCKETS_SECONDS] });
    this.#read = read;
    this.#name = configuration.name;
  }

  /** The stored series as exposition lines, as get() then renderFamilySamples would give them. */
  renderSamples(format: ExpositionFormat): string {
    let text = '';
    for (const { labels, histogram } of this.#read()) {
      text += renderHistogramSeries(
        this.#name,
        labels,
        cumulativeBuckets(histogram),
        histogram.sum,
        histogram.count,
        format,
      );
    }
    return text;
  }

  /** The stored series in prom-client's JSON shape (`_bucket` with `le`, `_sum`, `_count`). */
  override async get(): ReturnType<Histogram<T>['get']> {
    const empty = await super.get();
    const values: typeof empty.values = [];
    const name = empty.name;
    for (const { labels, histogram } of this.#read()) {
      for (const { le, count } of cumulativeBuckets(histogram)) {
        values.push({ labels: { ...labels, le }, value: count, metricName: `${name}_bucket` });
      }
      values.push({ labels, value: histogram.sum, metricName: `${name}_sum` });
      values.push({ labels, value: histogram.count, metricName: `${name}_count` });
    }
    return { ...empty, values };
  }
}
