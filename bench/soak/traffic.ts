/**
 * The reliability soak's mix (test/reliability/soak.test.ts) sent open loop through the gateway, and the memory
 * samples taken meanwhile: the RSS of every process from /proc, the heap of the watched one from its /metrics.
 */
import { readFileSync } from 'node:fs';

export interface Tenant {
  key: string;
  leadId: string;
  dealId: string;
  taskTypeId: string;
}

interface Op {
  what: string;
  expected: number;
  method: string;
  path: () => string;
  body?: () => unknown;
  /** What the answer changes in the mix (the newest lead is the next one read). */
  after?: (body: { id?: string }) => void;
}

/** Reads dominate, a third writes; each GET lead reads the newest lead created, as the reliability soak does. */
function mixOf(t: Tenant): Op[] {
  let newest = t.leadId;
  return [
    { what: 'GET lead', expected: 200, method: 'GET', path: () => `/integrations/external/leads/${newest}` },
    { what: 'GET leads', expected: 200, method: 'GET', path: () => '/integrations/external/leads?take=20' },
    { what: 'GET tasks', expected: 200, method: 'GET', path: () => `/integrations/external/tasks?crm_lead_id=${t.leadId}` },
    { what: 'GET deal', expected: 200, method: 'GET', path: () => `/integrations/external/deals/${t.dealId}` },
    {
      what: 'POST lead',
      expected: 201,
      method: 'POST',
      path: () => '/integrations/external/leads',
      body: () => ({ title: 'Soak lead', visibility: 1 }),
      after: (b) => {
        if (b.id) newest = b.id;
      },
    },
    {
      what: 'PUT lead',
      expected: 200,
      method: 'PUT',
      path: () => `/integrations/external/leads/${t.leadId}`,
      body: () => ({ title: `Soak ${Date.now()}` }),
    },
    {
      what: 'POST task',
      expected: 201,
      method: 'POST',
      path: () => '/integrations/external/tasks',
      body: () => ({ title: 'Soak task', crm_task_type_id: t.taskTypeId }),
    },
  ];
}

export interface TrafficResult {
  sent: number;
  skipped: number;
  errors: Map<string, number>;
  latenciesMs: number[];
}

/** Past this many requests in flight the system is not keeping up: further ones are skipped and counted. */
const MAX_IN_FLIGHT = 256;

/** `rate` requests per second for `seconds`, each leaving on schedule whatever the previous ones do. */
export async function sendTraffic(gatewayUrl: string, t: Tenant, rate: number, seconds: number): Promise<TrafficResult> {
  const mix = mixOf(t);
  const out: TrafficResult = { sent: 0, skipped: 0, errors: new Map(), latenciesMs: [] };
  const count = (k: string) => out.errors.set(k, (out.errors.get(k) ?? 0) + 1);
  let inFlight = 0;
  const started = Date.now();
  const interval = 1000 / rate;
  const one = async (op: Op) => {
    const t0 = performance.now();
    const body = op.body?.();
    const res = await fetch(`${gatewayUrl}${op.path()}`, {
      method: op.method,
      headers: { authorization: `Bearer ${t.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    out.latenciesMs.push(performance.now() - t0);
    if (res.status !== op.expected) return count(`${op.what} ${res.status} ${text.slice(0, 80)}`);
    op.after?.(JSON.parse(text) as { id?: string });
  };
  await new Promise<void>((done) => {
    const tick = setInterval(() => {
      const due = Math.floor((Date.now() - started) / interval);
      while (out.sent < due) {
        out.sent++;
        if (inFlight >= MAX_IN_FLIGHT) {
          out.skipped++;
          continue;
        }
        const op = mix[out.sent % mix.length]!;
        inFlight++;
        one(op)
          .catch((err: Error) => count(`${op.what} ${err.message}`))
          .finally(() => inFlight--);
      }
      if (Date.now() - started >= seconds * 1000) {
        clearInterval(tick);
        done();
      }
    }, 5);
  });
  while (inFlight > 0) await new Promise((r) => setTimeout(r, 10));
  return out;
}

export function rssMb(pid: number): number {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:'));
    return Number(line?.split(/\s+/)[1] ?? 0) / 1024;
  } catch {
    return Number.NaN;
  }
}

export interface HeapFigures {
  usedMb: number;
  totalMb: number;
  externalMb: number;
  /** Used bytes of each V8 space (old, new, code, large_object...). */
  spacesMb: Record<string, number>;
}

/** The V8 heap figures prom-client's default metrics publish on the process's /metrics. */
export async function heapOf(metricsUrl: string): Promise<HeapFigures | undefined> {
  try {
    const text = await (await fetch(`${metricsUrl}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
    const value = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)`, 'm').exec(text)?.[1] ?? Number.NaN) / 2 ** 20;
    const spacesMb: Record<string, number> = {};
    for (const m of text.matchAll(/^nodejs_heap_space_size_used_bytes\{[^}]*space="([^"]+)"[^}]*\} (\S+)/gm)) {
      spacesMb[m[1]!] = Number(m[2]) / 2 ** 20;
    }
    return {
      usedMb: value('nodejs_heap_size_used_bytes'),
      totalMb: value('nodejs_heap_size_total_bytes'),
      externalMb: value('nodejs_external_memory_bytes'),
      spacesMb,
    };
  } catch {
    return undefined;
  }
}
