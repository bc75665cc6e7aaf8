import { unavailable } from '@svc/platform/errors';
import { eventTypesOf } from '@svc/platform/http/event-types';
import type { OpenApiFragment } from '@svc/platform/http/openapi';
import { assembleDocument } from '@svc/platform/http/openapi-document';

/**
 * Merged from what the running services describe, so it matches the deployed versions (decision 0100).
 * Callers within `ttlMs` share one assembly.
 */
export class ApiDocument {
  private cached: { text: string; at: number; eventTypes?: string } | undefined;
  private pending: Promise<string> | undefined;

  constructor(
    private readonly upstreams: Record<string, string>,
    private readonly ttlMs = 30_000,
  ) {}

  text(): Promise<string> {
    if (this.cached && Date.now() - this.cached.at < this.ttlMs) return Promise.resolve(this.cached.text);
    this.pending ??= this.assemble().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  async eventTypes(): Promise<string> {
    const text = await this.text();
    const cached = this.cached;
    if (cached?.text === text && cached.eventTypes) return cached.eventTypes;
    const answer = JSON.stringify(eventTypesOf(JSON.parse(text)));
    if (cached?.text === text) cached.eventTypes = answer;
    return answer;
  }

  private async assemble(): Promise<string> {
    const fragments = await Promise.all(
      Object.entries(this.upstreams).map(async ([name, url]) => {
        const res = await fetch(`${url}/openapi.json`, { signal: AbortSignal.timeout(5000) }).catch(() => undefined);
        if (!res?.ok) throw unavailable(`The ${name} service is unavailable`);
        return (await res.json()) as OpenApiFragment;
      }),
    );
    const text = JSON.stringify(assembleDocument(fragments, { version: '1.0.0' }));
    this.cached = { text, at: Date.now() };
    return text;
  }
}
