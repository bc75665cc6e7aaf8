import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

/**
 * Request ids (decision 0102): the gateway takes the caller's `x-request-id` when it is well formed, else makes one,
 * answers it on every response and forwards it; each service answers and logs under the id it was given. The id
 * rides an AsyncLocalStorage, so every log line written while the request is served carries it (logging.ts).
 */
export const REQUEST_ID_HEADER = 'x-request-id';

/** Printable, no spaces, up to 128 characters: enough for a UUID, a ULID or a trace id, nothing to inject. */
const WELL_FORMED = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

export function requestIdOf(given: string | string[] | undefined): string {
  const value = Array.isArray(given) ? given[0] : given;
  return value !== undefined && WELL_FORMED.test(value) ? value : randomUUID();
}

const context = new AsyncLocalStorage<{ requestId: string }>();

export const currentRequestId = (): string | undefined => context.getStore()?.requestId;

export function withRequestId<T>(requestId: string, work: () => T): T {
  return context.run({ requestId }, work);
}
