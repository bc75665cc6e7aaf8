import { jwtVerify, SignJWT } from 'jose';
import { LRUCache } from 'lru-cache';
import { unauthorized } from './errors.js';

/** Services trust only a short-lived HS256 token signed with IDENTITY_TOKEN_SECRET. */
export type Identity =
  | { kind: 'integration'; companyId: string; userId: string; keyId: string; permissions: string[] }
  | { kind: 'admin' }
  /** Let through the gateway's public routes (a satisfaction form). */
  | { kind: 'public' };

export const IDENTITY_HEADER = 'x-svc-identity';
/** Bounded so an identity always fits the services' header limit (decision 0153). */
export const MAX_KEY_PERMISSIONS = 100;
export const MAX_PERMISSION_LENGTH = 80;
/** Node's default. */
export const GATEWAY_MAX_HEADER_SIZE = 16 * 1024;
/** The client's headers, the largest identity token and the forwarding headers. */
export const SERVICE_MAX_HEADER_SIZE = 32 * 1024;
const ISSUER = 'svc-gateway';
const AUDIENCE = 'svc-services';
const VERIFIED_TOKENS = 10_000;

export class IdentitySigner {
  private readonly key: Uint8Array;
  constructor(
    secret: string,
    private readonly ttlSeconds = 60,
  ) {
    this.key = new TextEncoder().encode(secret);
  }

  get lifetimeMs(): number {
    return this.ttlSeconds * 1000;
  }

  sign(identity: Identity): Promise<string> {
    const claims =
      identity.kind === 'integration'
        ? { knd: 'integration', cid: identity.companyId, kid: identity.keyId, prm: identity.permissions }
        : { knd: identity.kind };
    const jwt = new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(`${this.ttlSeconds}s`);
    if (identity.kind === 'integration') jwt.setSubject(identity.userId);
    return jwt.sign(this.key);
  }
}

/** The gateway reuses a token per key, so verified tokens are remembered: one HMAC per token, not per request. */
export class IdentityVerifier {
  private readonly key: Uint8Array;
  private readonly verified = new LRUCache<string, { identity: Identity; expiresAt: number }>({ max: VERIFIED_TOKENS });

  constructor(secret: string) {
    this.key = new TextEncoder().encode(secret);
  }

  async verify(token: string | undefined): Promise<Identity> {
    if (!token) throw unauthorized('Missing identity token');
    const now = Date.now();
    const cached = this.verified.get(token);
    if (cached && cached.expiresAt > now) return cached.identity;
    let payload: Awaited<ReturnType<typeof jwtVerify>>['payload'];
    try {
      ({ payload } = await jwtVerify(token, this.key, { issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256'] }));
    } catch {
      throw unauthorized('Invalid identity token');
    }
    const identity = toIdentity(payload);
    this.verified.set(token, { identity, expiresAt: (payload.exp ?? 0) * 1000 });
    return identity;
  }
}

function toIdentity(p: Record<string, unknown>): Identity {
  if (p.knd === 'admin') return { kind: 'admin' };
  if (p.knd === 'public') return { kind: 'public' };
  if (
    p.knd === 'integration' &&
    typeof p.sub === 'string' &&
    typeof p.cid === 'string' &&
    typeof p.kid === 'string' &&
    Array.isArray(p.prm) &&
    p.prm.every((x) => typeof x === 'string')
  ) {
    return { kind: 'integration', companyId: p.cid, userId: p.sub, keyId: p.kid, permissions: p.prm as string[] };
  }
  throw unauthorized('Invalid identity token');
}

export function hasPermission(identity: Identity, permission: string): boolean {
  return identity.kind === 'integration' && (identity.permissions.includes('*') || identity.permissions.includes(permission));
}
