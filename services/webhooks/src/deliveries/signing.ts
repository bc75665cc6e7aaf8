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
 * secret's UTF-8 bytes. During a secret rotation one value per secret, comma-separated, newest first.
 */
export const svcSignature = (secrets: string | string[], body: string | Buffer) =>
  (Array.isArray(secrets) ? secrets : [secrets]).map((s) => `sha256=${createHmac('sha256', s).update(body).digest('hex')}`).join(',');

/**
 * Standard Webhooks (`webhook-signature`): `v1,` and the base64 HMAC-SHA256 of `<id>.<timestamp>.<body>`, keyed
 * with the secret's UTF-8 bytes (its `whsec_` form is `whsec_` + base64 of those bytes); space-separated during a
 * rotation.
 */
export const standardSignature = (secrets: string[], id: string, timestamp: number, body: string | Buffer) =>
  secrets.map((s) => `v1,${createHmac('sha256', s).update(`${id}.${timestamp}.`).update(body).digest('base64')}`).join(' ');

export const standardWebhooksSecret = (secret: string) => `whsec_${Buffer.from(secret, 'utf8').toString('base64')}`;
