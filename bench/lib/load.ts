/**
 * HTTP load from this process with autocannon. autocannon's own latency histogram has 1 ms resolution,
 * so every response's exact duration (its float milliseconds) is recorded here through setupClient,
 * which also gives the per-second throughput of the run.
 */
import autocannon from 'autocannon';
import { type Figures, figures, Samples } from './stats.js';

export interface LoadSpec {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** A new body for every request (autocannon's setupRequest), instead of `body`. */
  bodyOf?: () => string;
  connections: number;
  durationS: number;
  warmupS: number;
  /** The status every response must have; others are counted and reported as errors. */
  expectStatus: number;
}

export interface LoadResult extends Figures {
  connections: number;
  /** Responses with a status other than expectStatus, and socket errors/timeouts. */
  unexpected: number;
  statuses: Record<string, number>;
  /** Responses completed in each whole second of the measured window. */
  perSecond: number[];
}

interface Client {
  on(event: 'response', fn: (status: number, bytes: number, durationMs: number) => void): void;
}

function once(spec: LoadSpec, durationS: number, record: boolean): Promise<LoadResult> {
  const samples = new Samples();
  const statuses: Record<string, number> = {};
  const perSecond: number[] = [];
  let unexpected = 0;
  let started = 0n;
  return new Promise((resolve, reject) => {
    started = process.hrtime.bigint();
    autocannon(
      {
        url: spec.url,
        method: spec.method ?? 'GET',
        headers: spec.headers,
        body: spec.body,
        ...(spec.bodyOf ? { requests: [{ setupRequest: (req: object) => ({ ...req, body: spec.bodyOf!() }) }] } : {}),
        connections: spec.connections,
        pipelining: 1,
        duration: durationS,
        timeout: 30,
        setupClient: (client: Client) => {
          client.on('response', (status, _bytes, durationMs) => {
            statuses[status] = (statuses[status] ?? 0) + 1;
            if (status !== spec.expectStatus) {
              unexpected++;
              return;
            }
            if (!record) return;
            samples.push(durationMs * 1000);
            const second = Number((process.hrtime.bigint() - started) / 1_000_000_000n);
            perSecond[second] = (perSecond[second] ?? 0) + 1;
          });
        },
      },
      (err: Error | null, result: { errors: number; timeouts: number }) => {
        if (err) return reject(err);
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        const f = figures(samples.values(), seconds);
        resolve({
          ...f,
          connections: spec.connections,
          unexpected: unexpected + result.errors + result.timeouts,
          statuses,
          perSecond: Array.from({ length: Math.floor(seconds) }, (_, i) => perSecond[i] ?? 0),
        });
      },
    );
  });
}

/** A warm-up run (discarded), then the measured run. */
export async function measure(spec: LoadSpec): Promise<LoadResult> {
  if (spec.warmupS > 0) await once(spec, spec.warmupS, false);
  return once(spec, spec.durationS, true);
}
