import { createHmac } from 'node:crypto';

/** `x-svc-signature`: `sha256=` and the lowercase hex HMAC-SHA256 of the exact body bytes, keyed with the secret. */
export const svcSignature = (secret: string, body: string | Buffer) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
