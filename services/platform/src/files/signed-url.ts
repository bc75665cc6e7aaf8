import { createHmac, timingSafeEqual } from 'node:crypto';

/** Signed with a secret shared by the issuer (webhooks, before each send) and the server (files). */
export const PRIVATE_FILE_REF = 'svc-private-file://';
export const PRIVATE_FILE_URL_TTL_MS = 24 * 60 * 60 * 1000;

const mac = (secret: string, fileId: string, expires: number) =>
  createHmac('sha256', secret).update(`${fileId}.${expires}`).digest('base64url');

export function signFileUrl(baseUrl: string, secret: string, fileId: string, expiresAt: Date): string {
  const expires = Math.floor(expiresAt.getTime() / 1000);
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}/${encodeURIComponent(fileId)}`);
  url.searchParams.set('expires', String(expires));
  url.searchParams.set('signature', mac(secret, fileId, expires));
  return url.toString();
}

export function verifyFileUrl(secret: string, fileId: string, expires: string | null, signature: string | null, now = Date.now()): boolean {
  if (!expires || !signature || !/^\d+$/.test(expires) || Number(expires) * 1000 <= now) return false;
  const expected = Buffer.from(mac(secret, fileId, Number(expires)));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** Signed for 24 hours from `now`; payloads without references come back unchanged. */
export function renderPrivateFileUrls(body: string, baseUrl: string, secret: string, now = new Date()): string {
  if (!body.includes(PRIVATE_FILE_REF)) return body;
  const expiresAt = new Date(now.getTime() + PRIVATE_FILE_URL_TTL_MS);
  return body.replace(/"svc-private-file:\/\/([A-Za-z0-9_-]{1,100})"/g, (_m, id: string) =>
    JSON.stringify(signFileUrl(baseUrl, secret, id, expiresAt)),
  );
}

/** Files and webhooks derive the same key when FILE_URL_SIGNING_SECRET is unset. */
export const fileUrlSecret = (configured: string | undefined, identitySecret: string): string =>
  configured ?? createHmac('sha256', identitySecret).update('svc-file-urls').digest('hex');
