// Verifies a delivery of the CRM's webhooks. Copy this file into your receiver; it needs Node 18+ and nothing else.
//
//   import { verifyWebhook } from './verify-webhook.mjs';
//   const event = verifyWebhook({ body: rawBodyBuffer, headers: req.headers, secrets: [process.env.WEBHOOK_SECRET] });
//
// `body` must be the raw bytes received (before any JSON parsing). `secrets` lists the subscription secrets you
// accept (during a rotation, the new and the old one). With the Standard Webhooks headers present it also refuses
// deliveries whose timestamp is more than `toleranceSeconds` away from now (replay protection); remember the
// `webhook-id` values you processed if you need to drop resends (the id is stable across retries).
import { createHmac, timingSafeEqual } from 'node:crypto';

export class WebhookVerificationError extends Error {}

const same = (a, b) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

const header = (headers, name) => {
  const v = typeof headers.get === 'function' ? headers.get(name) : (headers[name] ?? headers[name.toLowerCase()]);
  return Array.isArray(v) ? v[0] : (v ?? undefined);
};

export function verifyWebhook({ body, headers, secrets, toleranceSeconds = 300, now = Date.now() }) {
  const raw = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  if (!secrets?.length) throw new WebhookVerificationError('no secret to verify with');
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const standard = header(headers, 'webhook-signature');
  if (id && timestamp && standard) {
    const ts = Number(timestamp);
    if (!Number.isInteger(ts) || Math.abs(now / 1000 - ts) > toleranceSeconds)
      throw new WebhookVerificationError('timestamp outside the tolerance');
    const signed = Buffer.concat([Buffer.from(`${id}.${ts}.`), raw]);
    const given = standard
      .split(' ')
      .map((s) => s.split(',')[1])
      .filter(Boolean);
    const ok = secrets.some((secret) => {
      const expected = createHmac('sha256', secret).update(signed).digest('base64');
      return given.some((g) => same(g, expected));
    });
    if (!ok) throw new WebhookVerificationError('webhook-signature does not match');
  } else {
    const svc = header(headers, 'x-svc-signature');
    if (!svc) throw new WebhookVerificationError('no signature header');
    const given = svc.split(',').map((s) => s.trim());
    const ok = secrets.some((secret) => given.some((g) => same(g, `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`)));
    if (!ok) throw new WebhookVerificationError('x-svc-signature does not match');
  }
  const event = JSON.parse(raw.toString('utf8'));
  const eventId = header(headers, 'x-svc-event-id');
  if (eventId !== undefined && event.event_id !== undefined && eventId !== event.event_id)
    throw new WebhookVerificationError('x-svc-event-id differs from the body');
  return event;
}
