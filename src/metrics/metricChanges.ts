/**
 * Counts changes to the metrics that are set outside the snapshot store (Trunk API counters, reload
 * gauges), so that a cached rendering of them knows it is out of date: a scrape right after an API
 * call or a reload shows it, while process metrics alone are reused for up to a second.
 */
export class MetricChanges {
  #count = 0;

  /** How many changes so far. */
  get count(): number {
    return this.#count;
  }

  /** Records one change. */
  record(): void {
    this.#count++;
  }
}
