// A Prometheus histogram fed through handles, one per label set, for paths that run on every invocation.
// prom-client's Histogram.observe(labels, value) builds a closure and hashes and validates the labels on
// every call (about 1 µs, as much as the dispatcher's whole work for a plugin that answers at once); a
// handle resolved once per label set makes an observation a bucket search and three additions.
//
// A prom-client Registry serves it like prom-client's own histogram: the registry reads a metric's name,
// help and type, asks get() for its values (bucket, sum and count samples, as prom-client's Histogram
// returns them) and calls reset().
import type { Metric, Registry } from 'prom-client';

export interface HistogramSeries {
  /** One observation, in the histogram's unit (seconds for a duration). */
  observe(value: number): void;
}

interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

class Series implements HistogramSeries {
  /** Observations per bucket (not cumulative); the last slot holds those above the largest bound. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Record<string, string>,
    private readonly bounds: Float64Array,
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) return;
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }

  reset(): void {
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
  }
}

export class SeriesHistogram<L extends string> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly bounds: Float64Array;
  private readonly series = new Set<Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly L[],
    buckets: readonly number[],
  ) {
    if (buckets.length === 0 || buckets.some((b, i) => !Number.isFinite(b) || (i > 0 && b <= buckets[i - 1]!))) {
      throw new Error(`${name}: buckets must be finite and strictly increasing`);
    }
    this.bounds = Float64Array.from(buckets);
  }

  /** A handle for one label set; keep it and observe through it. Closed handles stop being served. */
  open(labels: Record<L, string>): HistogramSeries {
    const series = new Series({ ...labels }, this.bounds);
    this.series.add(series);
    return series;
  }

  close(handle: HistogramSeries): void {
    this.series.delete(handle as Series);
  }

  registerIn(registry: Registry): void {
    // The registry only reads the members a prom-client metric has (name, help, type, aggregator, get,
    // reset); its declared parameter type is the union of prom-client's own classes.
    registry.registerMetric(this as unknown as Metric);
  }

  async get(): Promise<{ name: string; help: string; type: 'histogram'; aggregator: 'sum'; values: Sample[] }> {
    const values: Sample[] = [];
    const bucket = `${this.name}_bucket`;
    for (const series of this.series) {
      let cumulative = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        cumulative += series.counts[i]!;
        values.push({ labels: { le: this.bounds[i]!, ...series.labels }, value: cumulative, metricName: bucket });
      }
      values.push({ labels: { le: '+Inf', ...series.labels }, value: series.count, metricName: bucket });
      values.push({ labels: series.labels, value: series.sum, metricName: `${this.name}_sum` });
      values.push({ labels: series.labels, value: series.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    for (const series of this.series) series.reset();
  }
}
