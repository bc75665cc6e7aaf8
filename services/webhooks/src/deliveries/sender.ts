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
  const headers = new Map<string, [string, string]>();
  const put = (name: string, value: string) => headers.set(name.toLowerCase(), [name, value]);
  for (const [name, value] of Object.entries(delivery.config.headers)) put(name, value);
  const auth = delivery.config.auth;
  if (auth?.type === 'basic') put('authorization', `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`);
  if (auth?.type === 'bearer') put('authorization', `Bearer ${auth.token}`);
  if (auth?.type === 'api_key') put(auth.header, auth.value);
  const secrets = signingSecrets(delivery.config, now);
  const timestamp = Math.floor(now / 1000);
  put('content-type', 'application/json');
  put('user-agent', USER_AGENT);
  put('x-svc-event', delivery.eventKey);
  put('x-svc-event-id', delivery.eventId);
  put('x-svc-signature', svcSignature(delivery.config.secret, body));
  put('webhook-id', delivery.eventId);
  put('webhook-timestamp', String(timestamp));
  put('webhook-signature', standardSignature(secrets, delivery.eventId, timestamp, body));
  return Object.fromEntries([...headers.values()]);
}

function parseRetryAfter(value: string | string[] | undefined): number | null {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return null;
  if (/^\d+$/.test(v.trim())) return Number(v.trim());
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

interface Exchanged {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  /** The answer's first chunks, at least RESPONSE_SNIPPET_BYTES of it when it is that long. */
  head: Buffer[];
  tooLarge: boolean;
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
  private readonly deadlines = new Map<AbortController, number>();
  private readonly watchdog = setInterval(() => {
    const now = performance.now();
    for (const [controller, deadline] of this.deadlines)
      if (deadline <= now) {
        this.deadlines.delete(controller);
        controller.abort(new DOMException('the attempt took too long', 'TimeoutError'));
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
    const elapsed = () => Math.round(performance.now() - started);
    const controller = new AbortController();
    this.deadlines.set(controller, started + this.timeoutMs);
    const onCancel = () => controller.abort(new DOMException('the lease was lost', 'AbortError'));
    if (cancel?.aborted) onCancel();
    cancel?.addEventListener('abort', onCancel, { once: true });
    try {
      const { statusCode, headers, head, tooLarge } = await this.exchange(
        delivery.url,
        traceparent ? { ...buildHeaders(delivery, body), [TRACEPARENT]: traceparent } : buildHeaders(delivery, body),
        body,
        controller.signal,
        lease?.held,
      );
      const retryAfterSeconds = parseRetryAfter(headers['retry-after']);
      const responseBody = responseSnippet(head);
      if (tooLarge)
        return {
          statusCode,
          error: 'response body larger than 1 MB',
          durationMs: elapsed(),
          retryAfterSeconds,
          outcome: 'failed',
          responseBody,
        };
      if (statusCode >= 200 && statusCode < 300)
        return { statusCode, error: null, durationMs: elapsed(), retryAfterSeconds, outcome: 'succeeded', responseBody };
      const retry = RETRYABLE.has(statusCode) || statusCode >= 500;
      return {
        statusCode,
        error: `HTTP ${statusCode}`,
        durationMs: elapsed(),
        retryAfterSeconds,
        outcome: retry ? 'retry' : 'failed',
        responseBody,
      };
    } catch (err) {
      const e = err as Error & { code?: string };
      if (e instanceof LeaseLostError)
        return { statusCode: null, error: LEASE_LOST, durationMs: elapsed(), retryAfterSeconds: null, outcome: 'retry' };
      if (e instanceof DestinationNotAllowedError)
        return { statusCode: null, error: DESTINATION_NOT_ALLOWED, durationMs: elapsed(), retryAfterSeconds: null, outcome: 'failed' };
      const message =
        e.name === 'TimeoutError' || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT'
          ? 'timeout'
          : `${e.code ?? e.name}: ${e.message}`;
      return { statusCode: null, error: message, durationMs: elapsed(), retryAfterSeconds: null, outcome: 'retry' };
    } finally {
      this.deadlines.delete(controller);
      cancel?.removeEventListener('abort', onCancel);
    }
  }

  /**
   * One POST through the agent's dispatch with callbacks, not undici's `request`: no response stream, async iterator
   * or resource per attempt, half the sender's CPU per request (decision 0260). Reads at most 1 MB of the answer;
   * `held` is checked when undici is about to write the request, which may be long after the attempt began: a lost
   * lease aborts it before any byte is written. `signal` aborts it, at once if it is written, else when it would be.
   */
  private exchange(
    url: string,
    headers: Record<string, string>,
    body: Buffer,
    signal: AbortSignal,
    held: (() => boolean) | undefined,
  ): Promise<Exchanged> {
    return new Promise<Exchanged>((resolve, reject) => {
      let statusCode = 0;
      let responseHeaders: Record<string, string | string[] | undefined> = {};
      const head: Buffer[] = [];
      let size = 0;
      let settled = false;
      let started: Dispatcher.DispatchController | undefined;
      const settle = (err: Error | null, tooLarge = false) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        if (err) reject(err);
        else resolve({ statusCode, headers: responseHeaders, head, tooLarge });
      };
      const onAbort = () => started?.abort(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart: (controller) => {
          if (held && !held()) return controller.abort(new LeaseLostError(LEASE_LOST));
          if (signal.aborted) return controller.abort(signal.reason);
          started = controller;
        },
        onResponseStart: (_controller, status, headers) => {
          // Informational answers come before the final one.
          if (status < 200) return;
          statusCode = status;
          responseHeaders = headers;
        },
        onResponseData: (controller, chunk) => {
          if (settled) return;
          if (size < RESPONSE_SNIPPET_BYTES) head.push(chunk);
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES) {
            settle(null, true);
            controller.abort(new Error('response body larger than 1 MB'));
          }
        },
        onResponseEnd: () => settle(null),
        onResponseError: (_controller, err) => settle(err),
      };
      try {
        const { origin, path } = targetOf(url);
        this.agent.dispatch(
          {
            origin,
            path,
            method: 'POST',
            headers,
            body,
            headersTimeout: this.timeoutMs,
            bodyTimeout: this.timeoutMs,
          },
          handler,
        );
      } catch (err) {
        settle(err as Error);
      }
    });
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
