/** Latency samples (microseconds) and the figures printed from them. */

export interface Figures {
  /** Completed requests (or transactions) in the measured window. */
  count: number;
  seconds: number;
  /** count / seconds. */
  rate: number;
  p50us: number;
  p99us: number;
  meanUs: number;
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** The median of unsorted values (nearest rank). */
export const median = (values: number[]): number => percentile(Float64Array.from(values).sort(), 50);

export function figures(samplesUs: Float64Array, seconds: number): Figures {
  const sorted = Float64Array.from(samplesUs).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    count: sorted.length,
    seconds,
    rate: sorted.length / seconds,
    p50us: percentile(sorted, 50),
    p99us: percentile(sorted, 99),
    meanUs: sorted.length ? sum / sorted.length : Number.NaN,
  };
}

/** A growable Float64Array. */
export class Samples {
  private buf = new Float64Array(1 << 16);
  length = 0;
  push(v: number): void {
    if (this.length === this.buf.length) {
      const next = new Float64Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length++] = v;
  }
  values(): Float64Array {
    return this.buf.subarray(0, this.length);
  }
}
