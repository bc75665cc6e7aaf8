import { renderPrivateFileUrls } from '@svc/platform/files/signed-url';
import { SpanKind, SpanStatusCode, startSpan, TRACEPARENT, traceparentOf, tracerOf } from '@svc/platform/tracing';
import { Agent, type Dispatcher } from 'undici';
import type { Delivery } from './delivery.entity.js';
import { DESTINATION_NOT_ALLOWED, DestinationNotAllowedError, type DestinationPolicy, guardedConnector } from './destination.js';
import { signingSecrets, standardSignature, svcSignature } from './signing.js';

export const USER_AGENT = 'svc-webhooks/1.0';
export const ATTEMPT_TIMEOUT_MS = 30_000;
const SERVICE = 'webhooks';
export const MAX_RESPONSE_BYTES = 1024 * 1024;
export const RESPONSE_SNIPPET_BYTES = 1024;

/** A character cut at the end becomes U+FFFD; NULs, which Postgres text refuses, go. */
export const responseSnippet = (chunks: Buffer[]): string | null => {
  const bytes = Buffer.concat(chunks).subarray(0, RESPONSE_SNIPPET_BYTES);
  return bytes.length ? bytes.toString('utf8').replaceAll('\u0000', '') : null;
};

export interface AttemptResult {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** Retry-After, when the receiver sent one. */
  retryAfterSeconds: number | null;
  outcome: 'succeeded' | 'retry' | 'failed';
  responseBody?: string | null;
}

const RETRYABLE = new Set([408, 409, 425, 429]);

/** Decision 0156. */
export const LEASE_LOST = 'lease lost';
class LeaseLostError extends Error {}

export interface AttemptLease {
  signal: AbortSignal;
  held: () => boolean;
}

/** Subscription headers first; the spec's and Standard Webhooks headers win on a repeated name (case-insensitively). */
export function buildHeaders(delivery: Delivery, body: string | Buffer, now = Date.now()): Record<string, string> {
  const secrets = signingSecrets(delivery.config, now);
  const timestamp = Math.floor(now / 1000);
  const auth = delivery.config.auth;
  const own: [string, string][] = [];
  for (const name in delivery.config.headers) own.push([name, delivery.config.headers[name] as string]);
  if (auth?.type === 'basic') own.push(['authorization', `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`]);
  if (auth?.type === 'bearer') own.push(['authorization', `Bearer ${auth.token}`]);
  if (auth?.type === 'api_key') own.push([auth.header, auth.value]);
  const fixed: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-svc-event': delivery.eventKey,
    'x-svc-event-id': delivery.eventId,
    'x-svc-signature': svcSignature(delivery.config.secret, body),
    'webhook-id': delivery.eventId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': standardSignature(secrets, delivery.eventId, timestamp, body),
  };
  // Most subscriptions add none: no case-insensitive merge (decision 0260).
  if (!own.length) return fixed;
  const headers = new Map<string, [string, string]>();
  for (const [name, value] of own) headers.set(name.toLowerCase(), [name, value]);
  for (const name in fixed) headers.set(name, [name, fixed[name] as string]);
  return Object.fromEntries([...headers.values()]);
}

function parseRetryAfter(value: string | string[] | undefined): number | null {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return null;
  if (/^\d+$/.test(v.trim())) return Number(v.trim());
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

const msSince = (started: number) => Math.round(performance.now() - started);

interface Resolvers<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(reason: unknown): void;
}
/** Node 22 has it; the compiler's library (es2023) does not declare it yet. No executor closure per promise. */
export const withResolvers = <T>(): Resolvers<T> => (Promise as unknown as { withResolvers<U>(): Resolvers<U> }).withResolvers<T>();

/**
 * One POST through the agent's dispatch, this object its handler: no response stream, async iterator, resource or
 * closures per attempt, as undici's `request` makes (decision 0260). Keeps at most the first 1 KB of the answer and
 * reads at most 1 MB of it. The lease is checked when undici is about to write the request, which may be long after
 * the attempt began: a lost lease aborts it before any byte is written. `abort` (the deadline's) and the lease's
 * abort event (`handleEvent`) abort it at once once written, else when it would be.
 */
class Exchange implements Dispatcher.DispatchHandler {
  statusCode = 0;
  headers: Record<string, string | string[] | undefined> = {};
  /** The answer's first chunks, at least RESPONSE_SNIPPET_BYTES of it when it is that long. */
  readonly head: Buffer[] = [];
  tooLarge = false;
  private size = 0;
  private settled = false;
  private reason: unknown;
  private controller: Dispatcher.DispatchController | undefined;
  private readonly done = withResolvers<Exchange>();

  constructor(private readonly lease: AttemptLease | undefined) {}

  send(agent: Dispatcher, url: string, headers: Record<string, string>, body: Buffer, timeoutMs: number): Promise<Exchange> {
    try {
      const { origin, path } = targetOf(url);
      agent.dispatch({ origin, path, method: 'POST', headers, body, headersTimeout: timeoutMs, bodyTimeout: timeoutMs }, this);
    } catch (err) {
      this.settle(err as Error);
    }
    return this.done.promise;
  }

  /** Before undici starts the request (queued for a connection), the attempt ends now and the request is dropped at its start, unwritten. */
  abort(reason: unknown): void {
    if (this.settled) return;
    if (this.controller) this.controller.abort(reason as Error);
    else {
      this.reason = reason;
      this.settle(reason as Error);
    }
  }

  /** The lease's signal. */
  handleEvent(): void {
    this.abort(new DOMException('the lease was lost', 'AbortError'));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.lease && !this.lease.held()) controller.abort(new LeaseLostError(LEASE_LOST));
    else if (this.reason !== undefined) controller.abort(this.reason as Error);
    else this.controller = controller;
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    // Informational answers come before the final one.
    if (statusCode < 200) return;
    this.statusCode = statusCode;
    this.headers = headers;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    if (this.size < RESPONSE_SNIPPET_BYTES) this.head.push(chunk);
    this.size += chunk.length;
    if (this.size > MAX_RESPONSE_BYTES) {
      this.tooLarge = true;
      this.settle(null);
      controller.abort(new Error('response body larger than 1 MB'));
    }
  }

  onResponseEnd(): void {
    this.settle(null);
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.settle(err);
  }

  private settle(err: Error | null): void {
    if (this.settled) return;
    this.settled = true;
    if (err) this.done.reject(err);
    else this.done.resolve(this);
  }
}

/** Parsed once per subscription URL; bounded, so URLs of deleted subscriptions do not pile up. */
const targets = new Map<string, { origin: string; path: string }>();
const TARGETS_KEPT = 10_000;
function targetOf(url: string): { origin: string; path: string } {
  let target = targets.get(url);
  if (!target) {
    const u = new URL(url);
    target = { origin: u.origin, path: `${u.pathname}${u.search}` };
    if (targets.size >= TARGETS_KEPT) targets.clear();
    targets.set(url, target);
  }
  return target;
}

/** Reads at most 1 MB of the answer. */
export class WebhookSender {
  private readonly agent: Dispatcher;
  /** One timer aborts attempts past their deadline: an AbortSignal.timeout per attempt costs as much as signing. */
  private readonly deadlines = new Map<Exchange, number>();
  private readonly watchdog = setInterval(() => {
    const now = performance.now();
    for (const [exchange, deadline] of this.deadlines)
      if (deadline <= now) {
        this.deadlines.delete(exchange);
        exchange.abort(new DOMException('the attempt took too long', 'TimeoutError'));
      }
  }, 250).unref();

  /** `destinations` is checked on the resolved address of every new connection. */
  constructor(
    private readonly files?: { baseUrl: string; secret: string },
    destinations: DestinationPolicy = { allowPrivateNetworks: false },
    private readonly timeoutMs = ATTEMPT_TIMEOUT_MS,
  ) {
    this.agent = new Agent({ keepAliveTimeout: 30_000, connections: 64, pipelining: 1, connect: guardedConnector(destinations) });
  }

  /**
   * `lease` is checked when the request is written; its signal cancels the attempt. A traced delivery's POST is part
   * of the integrator's trace (decision 0200).
   */
  async attempt(delivery: Delivery, lease?: AttemptLease): Promise<AttemptResult> {
    const tracer = delivery.traceparent ? tracerOf(SERVICE) : undefined;
    if (!tracer) return this.post(delivery, lease);
    const span = startSpan(tracer, `webhook POST ${delivery.eventKey}`, SpanKind.CLIENT, delivery.traceparent, {
      'http.request.method': 'POST',
      'webhook.delivery_id': delivery.id,
      'webhook.attempt': delivery.attemptCount + 1,
    });
    const result = await this.post(delivery, lease, traceparentOf(span));
    if (result.statusCode !== null) span.setAttribute('http.response.status_code', result.statusCode);
    if (result.outcome !== 'succeeded') span.setStatus({ code: SpanStatusCode.ERROR, message: result.error ?? '' });
    span.end();
    return result;
  }

  private async post(delivery: Delivery, lease?: AttemptLease, traceparent?: string): Promise<AttemptResult> {
    const cancel = lease?.signal;
    // Only private file URLs change between attempts: regenerated per send, encoded once for both signatures.
    const body = Buffer.from(this.files ? renderPrivateFileUrls(delivery.body, this.files.baseUrl, this.files.secret) : delivery.body);
    const started = performance.now();
    const exchange = new Exchange(lease);
    this.deadlines.set(exchange, started + this.timeoutMs);
    if (cancel?.aborted) exchange.handleEvent();
    cancel?.addEventListener('abort', exchange, { once: true });
    try {
      const headers = buildHeaders(delivery, body);
      if (traceparent) headers[TRACEPARENT] = traceparent;
      const { statusCode, head, tooLarge } = await exchange.send(this.agent, delivery.url, headers, body, this.timeoutMs);
      const retryAfterSeconds = parseRetryAfter(exchange.headers['retry-after']);
      const responseBody = responseSnippet(head);
      if (tooLarge)
        return {
          statusCode,
          error: 'response body larger than 1 MB',
          durationMs: msSince(started),
          retryAfterSeconds,
          outcome: 'failed',
          responseBody,
        };
      if (statusCode >= 200 && statusCode < 300)
        return { statusCode, error: null, durationMs: msSince(started), retryAfterSeconds, outcome: 'succeeded', responseBody };
      const retry = RETRYABLE.has(statusCode) || statusCode >= 500;
      return {
        statusCode,
        error: `HTTP ${statusCode}`,
        durationMs: msSince(started),
        retryAfterSeconds,
        outcome: retry ? 'retry' : 'failed',
        responseBody,
      };
    } catch (err) {
      const e = err as Error & { code?: string };
      if (e instanceof LeaseLostError)
        return { statusCode: null, error: LEASE_LOST, durationMs: msSince(started), retryAfterSeconds: null, outcome: 'retry' };
      if (e instanceof DestinationNotAllowedError)
        return {
          statusCode: null,
          error: DESTINATION_NOT_ALLOWED,
          durationMs: msSince(started),
          retryAfterSeconds: null,
          outcome: 'failed',
        };
      const message =
        e.name === 'TimeoutError' || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT'
          ? 'timeout'
          : `${e.code ?? e.name}: ${e.message}`;
      return { statusCode: null, error: message, durationMs: msSince(started), retryAfterSeconds: null, outcome: 'retry' };
    } finally {
      this.deadlines.delete(exchange);
      cancel?.removeEventListener('abort', exchange);
    }
  }

  close(): Promise<void> {
    clearInterval(this.watchdog);
    return this.agent.close();
  }
}

export const RETRY_BASE_MS = 3000;
/** A Retry-After included (decision 0121). */
export const RETRY_MAX_WAIT_MS = 3_600_000;

/**
 * Exponential with jitter (never below the base); a longer Retry-After wins; capped so a long outage is retried every
 * `maxWaitMs` rather than once more after days.
 */
export function nextWaitMs(
  attemptsSoFar: number,
  retryAfterSeconds: number | null,
  random = Math.random,
  baseMs = RETRY_BASE_MS,
  maxWaitMs = RETRY_MAX_WAIT_MS,
): number {
  // Capped exponent, so a large attempt count cannot overflow to Infinity.
  const base = baseMs * 2 ** Math.min(Math.max(0, attemptsSoFar - 1), 40);
  const jittered = Math.round(base * (1 + 0.25 * random()));
  const asked = retryAfterSeconds === null ? 0 : retryAfterSeconds * 1000;
  return Math.min(maxWaitMs, Math.max(jittered, asked));
}

/** Without jitter or Retry-After: the shortest schedule a delivery has. */
export function retrySchedule(maxRetries: number, baseMs = RETRY_BASE_MS, maxWaitMs = RETRY_MAX_WAIT_MS): number[] {
  return Array.from({ length: maxRetries }, (_, i) => nextWaitMs(i + 1, null, () => 0, baseMs, maxWaitMs));
}
