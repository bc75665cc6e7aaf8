import type { Logger } from '@svc/platform/logging';
import type { Gauge } from 'prom-client';

/** Errors that say nothing is listening at the upstream's address (as opposed to a slow or failed request). */
const UNREACHABLE = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

export const isUnreachable = (err: unknown): boolean =>
  typeof err === 'object' && err !== null && UNREACHABLE.has(String((err as { code?: unknown }).code));

export interface UpstreamHealthOptions {
  /** How often an upstream known to be down is asked for its `/healthz`. */
  probeMs: number;
  logger: Logger;
  gauge?: Gauge<'upstream'>;
}

/**
 * Which services the gateway cannot reach (decision 0189). A proxied request whose connection is refused marks its
 * service down; from then on that service's routes answer 503 with `Retry-After` at once, without a connection
 * attempt, while one probe a `probeMs` asks the service's `/healthz` and marks it up when it answers. The other
 * services' routes are not touched: each bounded context fails on its own.
 */
export class UpstreamHealth {
  private readonly down = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly urls: Record<string, string>,
    private readonly options: UpstreamHealthOptions,
  ) {
    for (const name of Object.keys(urls)) options.gauge?.set({ upstream: name }, 1);
  }

  /** Seconds a client should wait before trying the upstream again, or undefined when it is up. */
  retryAfter(name: string): number | undefined {
    return this.down.has(name) ? Math.max(1, Math.ceil(this.options.probeMs / 1000)) : undefined;
  }

  /** The state of every upstream, for `/readyz`'s body. */
  states(): Record<string, 'up' | 'down'> {
    return Object.fromEntries(Object.keys(this.urls).map((name) => [name, this.down.has(name) ? 'down' : 'up']));
  }

  /** A proxied request to `name` failed with `err`: an unreachable upstream is marked down until a probe answers. */
  failed(name: string, err: unknown): void {
    if (!isUnreachable(err) || this.down.has(name) || !this.urls[name]) return;
    this.options.logger.warn({ upstream: name, err: (err as Error).message }, 'upstream unreachable; answering 503 until it is back');
    this.options.gauge?.set({ upstream: name }, 0);
    const probe = setInterval(() => void this.probe(name), this.options.probeMs);
    probe.unref();
    this.down.set(name, probe);
  }

  private async probe(name: string): Promise<void> {
    const ok = await fetch(`${this.urls[name]}/healthz`, { signal: AbortSignal.timeout(this.options.probeMs) }).then(
      (res) => res.ok,
      () => false,
    );
    const probe = this.down.get(name);
    if (!ok || !probe) return;
    clearInterval(probe);
    this.down.delete(name);
    this.options.gauge?.set({ upstream: name }, 1);
    this.options.logger.info({ upstream: name }, 'upstream reachable again');
  }

  stop(): void {
    for (const probe of this.down.values()) clearInterval(probe);
    this.down.clear();
  }
}
