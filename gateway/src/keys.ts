import { createHash } from 'node:crypto';
import { credentials } from '@grpc/grpc-js';
import { unauthorized } from '@svc/platform/errors';
import { callUnary } from '@svc/platform/grpc/server';
import { type Identity, IdentitySigner } from '@svc/platform/identity';
import { CrmServiceClient, type ResolveKeyResponse } from '@svc/proto/crm/v1/crm';

export const KEY_PREFIX = 'svc_';

export interface AuthenticatedKey {
  keyId: string;
  companyId: string;
  rateLimitPerMinute: number | undefined;
  identity: Extract<Identity, { kind: 'integration' }>;
  /** The identity token forwarded to services, re-signed before it gets old. */
  token(): Promise<string>;
}

interface CacheEntry {
  expiresAt: number;
  resolved: ResolveKeyResponse;
  token?: { value: string; refreshAt: number };
}

/**
 * Authenticates integration keys exactly as the spec's Authentication part says (rules 1 to 4). Look-ups
 * by key hash are cached for at most KEY_CACHE_TTL_MS (and concurrent misses share one gRPC call), so a
 * revoked key stops working within that time.
 */
export class KeyAuthenticator {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly inflight = new Map<string, Promise<CacheEntry>>();
  private readonly client: CrmServiceClient;

  constructor(
    crmGrpcUrl: string,
    private readonly ttlMs: number,
    private readonly signer: IdentitySigner,
  ) {
    this.client = new CrmServiceClient(crmGrpcUrl, credentials.createInsecure());
  }

  close(): void {
    this.client.close();
  }

  async authenticate(
    authorization: string | undefined,
    origin: string | undefined,
    referer: string | undefined,
  ): Promise<AuthenticatedKey> {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!match?.[1]) throw unauthorized('Missing integration key: send Authorization: Bearer <key>');
    const plain = match[1];
    if (!plain.startsWith(KEY_PREFIX)) throw unauthorized('Invalid integration key');
    const hash = createHash('sha256').update(plain).digest('hex');
    const entry = await this.lookup(hash);
    const { key, creator } = entry.resolved;
    if (!key) throw unauthorized('Invalid integration key');
    if (key.deleted) throw unauthorized('The integration key was deleted');
    if (!key.active) throw unauthorized('The integration key is inactive');
    const now = Date.now();
    if (key.valid_from && Date.parse(key.valid_from) > now) throw unauthorized('The integration key is not valid yet');
    if (key.valid_until && Date.parse(key.valid_until) <= now) throw unauthorized('The integration key has expired');
    if (key.allowed_domain) {
      const host = hostOf(origin) ?? (origin ? undefined : hostOf(referer));
      if (host !== key.allowed_domain.toLowerCase()) throw unauthorized('Origin domain not authorized for this key');
    }
    if (!creator || creator.company_id !== key.company_id || !creator.active || creator.archived) {
      throw unauthorized("The key's creator is not an active user of the company");
    }
    const identity = {
      kind: 'integration' as const,
      companyId: key.company_id,
      userId: creator.id,
      keyId: key.id,
      permissions: key.permissions,
    };
    return {
      keyId: key.id,
      companyId: key.company_id,
      rateLimitPerMinute: key.rate_limit_per_minute,
      identity,
      token: async () => {
        const t = entry.token;
        if (t && t.refreshAt > Date.now()) return t.value;
        const value = await this.signer.sign(identity);
        entry.token = { value, refreshAt: Date.now() + this.signer.lifetimeMs / 2 };
        return value;
      },
    };
  }

  private lookup(hash: string): Promise<CacheEntry> | CacheEntry {
    const cached = this.cache.get(hash);
    if (cached && cached.expiresAt > Date.now()) return cached;
    const pending = this.inflight.get(hash);
    if (pending) return pending;
    const p = callUnary(this.client, this.client.resolveKey, { key_hash: hash }, 2000)
      .then((resolved) => {
        const entry: CacheEntry = { resolved, expiresAt: Date.now() + this.ttlMs, token: cached?.token };
        if (this.cache.size > 50_000) this.cache.clear();
        this.cache.set(hash, entry);
        return entry;
      })
      .finally(() => this.inflight.delete(hash));
    this.inflight.set(hash, p);
    return p;
  }
}

function hostOf(value: string | undefined): string | undefined {
  if (!value) return undefined;
  try {
    return new URL(value).hostname.toLowerCase() || undefined;
  } catch {
    return undefined;
  }
}

export { IdentitySigner };
