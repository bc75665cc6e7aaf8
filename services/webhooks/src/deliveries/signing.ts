import { createHmac } from 'node:crypto';
import type { CapturedConfig } from './delivery.entity.js';

/** The secrets a delivery is signed with now: the current one, and the previous one during its rotation grace. */
export function signingSecrets(config: CapturedConfig, now = Date.now()): string[] {
  const secrets = [config.secret];
  if (config.previousSecret && config.previousSecretExpiresAt && Date.parse(config.previousSecretExpiresAt) > now)
    secrets.push(config.previousSecret);
  return secrets;
}

/**
 * `x-svc-signature`: `sha256=` and the lowercase hex HMAC-SHA256 of the exact body bytes, keyed with the
 * secret's UTF-8 bytes. One value, as the spec defines it: always the current secret, also during a rotation
 * (only the Standard Webhooks header carries both).
 */
export const svcSignature = (secret: string, body: string | Buffer) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/**
 * Standard Webhooks (`webhook-signature`): `v1,` and the base64 HMAC-SHA256 of `<id>.<timestamp>.<body>`, keyed
 * with the secret's UTF-8 bytes (its `whsec_` form is `whsec_` + base64 of those bytes); space-separated during a
 * rotation.
 */
export const standardSignature = (secrets: string[], id: string, timestamp: number, body: string | Buffer) =>
  secrets.map((s) => `v1,${createHmac('sha256', s).update(`${id}.${timestamp}.`).update(body).digest('base64')}`).join(' ');

export const standardWebhooksSecret = (secret: string) => `whsec_${Buffer.from(secret, 'utf8').toString('base64')}`;
