import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Verifies a delivery of the CRM's webhooks (decision 0103). Node 20+, no dependencies.
 *
 *   const event = verifyWebhook({ body: rawBody, headers: req.headers, secrets: [process.env.WEBHOOK_SECRET] });
 *
 * `body` must be the raw bytes received, before any JSON parsing. `secrets` lists the subscription secrets accepted
 * (during a rotation the new and the old one), as shown in `secret` or in the `whsec_…` form of
 * `standard_webhooks_secret`. A delivery must carry the timestamped Standard Webhooks signature (`webhook-id`,
 * `webhook-timestamp`, `webhook-signature`) with a timestamp within `toleranceSeconds` of now: without it, it is
 * refused, so stripping those headers cannot get past the replay protection. `legacySignature: true` accepts a
 * delivery that has none of them on its `x-svc-signature` alone (no replay protection; for receivers that cannot
 * read those headers). Resends keep their `webhook-id`: remember the ids processed to drop duplicates.
 */
export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

/**
 * The request's headers in any common form: Node's `IncomingHttpHeaders`, a fetch `Headers`, a plain object whatever
 * the case of its names (Express, Lambda, a test), or anything with a `get(name)` method.
 */
export type WebhookHeaders = Record<string, string | string[] | undefined> | { get(name: string): string | null | undefined };

export interface VerifyOptions {
  body: string | Buffer | Uint8Array;
  headers: WebhookHeaders;
  secrets: readonly string[];
  /** How far the signed timestamp may be from now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** Accept `x-svc-signature` alone when the delivery has no Standard Webhooks headers (default false). */
  legacySignature?: boolean;
  /** Now, in milliseconds (tests). */
  now?: number;
}

export interface WebhookEvent {
  event_id?: string;
  event_key: string;
  payload: unknown;
}

const STANDARD = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

const same = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

function header(headers: WebhookHeaders, name: string): string | undefined {
  let value: unknown;
  if (typeof headers.get === 'function') value = (headers as { get(name: string): unknown }).get(name);
  else {
    const record = headers as Record<string, unknown>;
    value = record[name] ?? Object.entries(record).find(([key]) => key.toLowerCase() === name)?.[1];
  }
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' ? first : undefined;
}

let legacyWarned = false;

/** Once a process: the legacy signature has no timestamp, so a captured delivery can be sent again and still pass. */
function warnLegacy(): void {
  if (legacyWarned) return;
  legacyWarned = true;
  process.emitWarning(
    'Verified a webhook by x-svc-signature alone: it signs only the body, so a replayed delivery passes. Verify the ' +
      'webhook-id, webhook-timestamp and webhook-signature headers instead, and drop repeated webhook-id values.',
    { type: 'SecurityWarning', code: 'SVC_WEBHOOK_LEGACY_SIGNATURE' },
  );
}

/** The HMAC key of a secret: its bytes, or the decoded bytes of its `whsec_` form. */
const keyOf = (secret: string): Buffer => (secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret));

function verifyStandard(raw: Buffer, headers: WebhookHeaders, keys: Buffer[], toleranceSeconds: number, now: number): void {
  const [id, timestamp, signature] = STANDARD.map((h) => header(headers, h)) as [string, string, string];
  const ts = Number(timestamp);
  if (!/^\d+$/.test(timestamp) || Math.abs(now / 1000 - ts) > toleranceSeconds) {
    throw new WebhookVerificationError('webhook-timestamp is outside the tolerance');
  }
  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`), raw]);
  const given = signature
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => s.slice(3));
  const ok = keys.some((key) => {
    const expected = createHmac('sha256', key).update(signed).digest('base64');
    return given.some((g) => same(g, expected));
  });
  if (!ok) throw new WebhookVerificationError('webhook-signature does not match');
}

function verifyLegacy(raw: Buffer, headers: WebhookHeaders, keys: Buffer[]): void {
  const svc = header(headers, 'x-svc-signature');
  if (!svc) throw new WebhookVerificationError('no signature header');
  const given = svc.split(',').map((s) => s.trim());
  const ok = keys.some((key) => given.some((g) => same(g, `sha256=${createHmac('sha256', key).update(raw).digest('hex')}`)));
  if (!ok) throw new WebhookVerificationError('x-svc-signature does not match');
}

export function verifyWebhook(options: VerifyOptions): WebhookEvent {
  const { headers, secrets, toleranceSeconds = 300, legacySignature = false, now = Date.now() } = options;
  const raw = typeof options.body === 'string' ? Buffer.from(options.body, 'utf8') : Buffer.from(options.body);
  if (!secrets.length) throw new WebhookVerificationError('no secret to verify with');
  const keys = secrets.map(keyOf);
  const present = STANDARD.filter((h) => header(headers, h) !== undefined);
  if (present.length === STANDARD.length) verifyStandard(raw, headers, keys, toleranceSeconds, now);
  else if (present.length > 0) throw new WebhookVerificationError(`incomplete Standard Webhooks headers: only ${present.join(', ')}`);
  else if (legacySignature) {
    verifyLegacy(raw, headers, keys);
    warnLegacy();
  } else {
    throw new WebhookVerificationError(
      'no timestamped signature (webhook-id, webhook-timestamp, webhook-signature); pass legacySignature: true to accept x-svc-signature alone',
    );
  }
  let event: WebhookEvent;
  try {
    event = JSON.parse(raw.toString('utf8')) as WebhookEvent;
  } catch {
    throw new WebhookVerificationError('the body is not JSON');
  }
  const eventId = header(headers, 'x-svc-event-id');
  if (eventId !== undefined && event.event_id !== undefined && eventId !== event.event_id) {
    throw new WebhookVerificationError('x-svc-event-id differs from the body');
  }
  return event;
}
