import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

/**
 * Rides an AsyncLocalStorage, so every log line and gRPC call made while a request is served carries it (decisions
 * 0102, 0140).
 */
export const REQUEST_ID_HEADER = 'x-request-id';

/** Enough for a UUID, a ULID or a trace id, nothing to inject. */
const WELL_FORMED = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

export function wellFormedRequestId(given: unknown): string | undefined {
  return typeof given === 'string' && WELL_FORMED.test(given) ? given : undefined;
}

export function requestIdOf(given: string | string[] | undefined): string {
  return wellFormedRequestId(Array.isArray(given) ? given[0] : given) ?? randomUUID();
}

const context = new AsyncLocalStorage<{ requestId: string }>();

export const currentRequestId = (): string | undefined => context.getStore()?.requestId;

export function withRequestId<T>(requestId: string, work: () => T): T {
  return context.run({ requestId }, work);
}
