import { createHmac } from 'node:crypto';
import type { CapturedConfig } from './delivery.entity.js';

/** The previous secret too, during its rotation grace. */
export function signingSecrets(config: CapturedConfig, now = Date.now()): string[] {
  const secrets = [config.secret];
  if (config.previousSecret && config.previousSecretExpiresAt && Date.parse(config.previousSecretExpiresAt) > now)
    secrets.push(config.previousSecret);
  return secrets;
}

/** `sha256=<hex HMAC-SHA256 of the body>`: always the current secret, also during a rotation, as the spec defines. */
export const svcSignature = (secret: string, body: string | Buffer) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** `v1,<base64 HMAC-SHA256 of id.timestamp.body>`, keyed with the secret's UTF-8 bytes; space-separated in a rotation. */
export function standardSignature(secrets: string[], id: string, timestamp: number, body: string | Buffer): string {
  let signatures = '';
  for (const secret of secrets)
    signatures += `${signatures ? ' ' : ''}v1,${createHmac('sha256', secret).update(`${id}.${timestamp}.`).update(body).digest('base64')}`;
  return signatures;
}

export const standardWebhooksSecret = (secret: string) => `whsec_${Buffer.from(secret, 'utf8').toString('base64')}`;
