import { unavailable } from '@svc/platform/errors';
import { eventTypesOf } from '@svc/platform/http/event-types';
import type { OpenApiFragment } from '@svc/platform/http/openapi';
import { assembleDocument } from '@svc/platform/http/openapi-document';

/**
 * The OpenAPI document of the external API (decision 0100): each service describes the routes it serves
 * (`GET /openapi.json` on the service), and the gateway merges what the running services say, so the document is
 * the one of the versions deployed. Reassembled at most every `ttlMs`; callers meanwhile share one assembly.
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

  /** `GET /webhooks/event-types`'s answer, from the same assembly (decision 0176). */
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
