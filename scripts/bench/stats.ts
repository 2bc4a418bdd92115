// Small helpers shared by the benchmarks: percentiles, timing loops and markdown tables.

export function percentile(sortedMs: number[], p: number): number {
  if (sortedMs.length === 0) return NaN;
  const index = Math.min(sortedMs.length - 1, Math.max(0, Math.ceil((p / 100) * sortedMs.length) - 1));
  return sortedMs[index] as number;
}

export interface LatencyStats {
  count: number;
  p50: number;
  p99: number;
  mean: number;
  /** Completed operations per second over the whole run. */
  throughput: number;
}

/** Runs `op` `total` times with `concurrency` in flight; returns latency percentiles in ms. */
export async function measure(op: () => Promise<void>, total: number, concurrency: number): Promise<LatencyStats> {
  const { latencies: _latencies, elapsed: _elapsed, ...stats } = await measureRaw(op, total, concurrency);
  return stats;
}

export function markdownTable(header: string[], rows: (string | number)[][]): string {
  const fmt = (v: string | number): string => (typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(3)) : v);
  const lines = [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`];
  for (const row of rows) lines.push(`| ${row.map(fmt).join(' | ')} |`);
  return lines.join('\n');
}

export function ratio(value: number, baseline: number): string {
  return `${(value / baseline).toFixed(2)}x`;
}

export function machineDescription(): string {
  return `${process.platform} ${process.arch}, node ${process.version}`;
}

/**
 * Measures two paths in alternating blocks so that drift on a noisy machine (other processes, CPU
 * frequency) lands on both sides alike; returns the stats of each.
 */
export async function measurePair(
  baseline: () => Promise<void>,
  candidate: () => Promise<void>,
  total: number,
  concurrency: number,
  blocks = 6,
): Promise<{ baseline: LatencyStats; candidate: LatencyStats }> {
  const per = Math.max(concurrency, Math.ceil(total / blocks));
  const parts: { baseline: LatencyStats[]; candidate: LatencyStats[] } = { baseline: [], candidate: [] };
  for (let i = 0; i < blocks; i++) {
    parts.baseline.push(await measureRaw(baseline, per, concurrency));
    parts.candidate.push(await measureRaw(candidate, per, concurrency));
  }
  return { baseline: combine(parts.baseline), candidate: combine(parts.candidate) };
}

interface RawStats extends LatencyStats {
  latencies: number[];
  elapsed: number;
}

async function measureRaw(op: () => Promise<void>, total: number, concurrency: number): Promise<RawStats> {
  const latencies: number[] = [];
  let started = 0;
  const begin = performance.now();
  const worker = async (): Promise<void> => {
    while (started < total) {
      started++;
      const t0 = performance.now();
      await op();
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = performance.now() - begin;
  return { ...summarise(latencies, elapsed), latencies, elapsed };
}

function summarise(latencies: number[], elapsedMs: number): LatencyStats {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sorted.reduce((s, x) => s + x, 0) / sorted.length,
    throughput: (sorted.length / elapsedMs) * 1000,
  };
}

function combine(parts: LatencyStats[]): LatencyStats {
  const raw = parts as RawStats[];
  return summarise(
    raw.flatMap((p) => p.latencies),
    raw.reduce((s, p) => s + p.elapsed, 0),
  );
}
