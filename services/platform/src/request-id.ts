import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

/**
 * Request ids (decision 0102): the gateway takes the caller's `x-request-id` when it is well formed, else makes one,
 * answers it on every response and forwards it; each service answers and logs under the id it was given. The id
 * rides an AsyncLocalStorage, so every log line written while the request is served carries it (logging.ts), and
 * every gRPC call made meanwhile carries it as metadata of the same name to the service it calls (grpc/server.ts,
 * decision 0140).
 */
export const REQUEST_ID_HEADER = 'x-request-id';

/** Printable, no spaces, up to 128 characters: enough for a UUID, a ULID or a trace id, nothing to inject. */
const WELL_FORMED = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** The given id when it is well formed, else undefined. */
export function wellFormedRequestId(given: unknown): string | undefined {
  return typeof given === 'string' && WELL_FORMED.test(given) ? given : undefined;
}

/** The id a request is served under: the caller's when well formed, else a new UUID. */
export function requestIdOf(given: string | string[] | undefined): string {
  return wellFormedRequestId(Array.isArray(given) ? given[0] : given) ?? randomUUID();
}

const context = new AsyncLocalStorage<{ requestId: string }>();

export const currentRequestId = (): string | undefined => context.getStore()?.requestId;

export function withRequestId<T>(requestId: string, work: () => T): T {
  return context.run({ requestId }, work);
}
