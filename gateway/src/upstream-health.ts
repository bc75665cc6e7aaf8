import type { Logger } from '@svc/platform/logging';
import type { Gauge } from 'prom-client';

/** Nothing listening, as opposed to a slow or failed request. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

export const isUnreachable = (err: unknown): boolean =>
  typeof err === 'object' && err !== null && UNREACHABLE.has(String((err as { code?: unknown }).code));

export interface UpstreamHealthOptions {
  probeMs: number;
  logger: Logger;
  gauge?: Gauge<'upstream'>;
}

/**
 * A refused connection marks the service down: its routes answer 503 at once while a probe asks `/healthz`; other
 * services' routes are not touched (decision 0189).
 */
export class UpstreamHealth {
  private readonly down = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly urls: Record<string, string>,
    private readonly options: UpstreamHealthOptions,
  ) {
    for (const name of Object.keys(urls)) options.gauge?.set({ upstream: name }, 1);
  }

  retryAfter(name: string): number | undefined {
    return this.down.has(name) ? Math.max(1, Math.ceil(this.options.probeMs / 1000)) : undefined;
  }

  states(): Record<string, 'up' | 'down'> {
    return Object.fromEntries(Object.keys(this.urls).map((name) => [name, this.down.has(name) ? 'down' : 'up']));
  }

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
