import { hash } from 'node:crypto';
import { credentials } from '@grpc/grpc-js';
import { unauthorized } from '@svc/platform/errors';
import { callUnary } from '@svc/platform/grpc/server';
import { type Identity, IdentitySigner } from '@svc/platform/identity';
import { CrmServiceClient, type ResolveKeyResponse } from '@svc/proto/crm/v1/crm';
import { LRUCache } from 'lru-cache';

export const KEY_PREFIX = 'svc_';

type IntegrationIdentity = Extract<Identity, { kind: 'integration' }>;

export interface AuthenticatedKey {
  keyId: string;
  companyId: string;
  rateLimitPerMinute: number | undefined;
  /** Lower-cased; such a key is used from browser pages on that domain (decision 0102). */
  allowedDomain: string | undefined;
  identity: IntegrationIdentity;
  /** A string while a signed token is fresh: no promise on the hot path. */
  token(): string | Promise<string>;
}

/** Shared by a key's successive cache entries while its identity is the same. */
interface Token {
  identity: IntegrationIdentity;
  value?: string;
  refreshAt: number;
  usableUntil: number;
  signing?: Promise<string>;
}

/** The key-only rule failures, worked out once per look-up. */
interface CacheEntry {
  expiresAt: number;
  /** So a revocation in the company drops the entry. */
  companyId?: string;
  refused?: string;
  validFrom: number;
  validUntil: number;
  allowedDomain?: string;
  /** Rule 4, checked after the validity period and the domain. */
  creatorRefused?: string;
  key?: AuthenticatedKey;
  token?: Token;
}

/** Never past this share of a token's lifetime: the rest is a margin for clock skew between gateway and services. */
const USABLE_SHARE = 0.6;

/** An expired entry stays until evicted: the next look-up of its key reuses its token. */
const CACHED_KEYS = 50_000;

/**
 * The spec's rules 1 to 4. Look-ups are cached for KEY_CACHE_TTL_MS and concurrent misses share one call; a cache hit
 * makes no promise or timer (decision 0017). Admin changes drop keys at once (decision 0120).
 */
export class KeyAuthenticator {
  private readonly cache = new LRUCache<string, CacheEntry>({ max: CACHED_KEYS });
  private readonly inflight = new Map<string, Promise<CacheEntry>>();
  private readonly client: CrmServiceClient;
  /** A look-up that started before a revocation answers its own request but is not cached. */
  private epoch = 0;

  constructor(
    crmGrpcUrl: string,
    private readonly ttlMs: number,
    private readonly signer: IdentitySigner,
    private readonly now: () => number = Date.now,
  ) {
    this.client = new CrmServiceClient(crmGrpcUrl, credentials.createInsecure());
  }

  close(): void {
    this.client.close();
  }

  /** Called when a key or a user of the company changed (decision 0120). */
  forgetCompany(companyId: string): void {
    this.epoch++;
    this.inflight.clear();
    const dropped = [...this.cache.entries()].filter(([, entry]) => entry.companyId === companyId);
    for (const [keyHash] of dropped) this.cache.delete(keyHash);
  }

  /** Revocations may have been missed while the broadcast was disconnected. */
  forgetAll(): void {
    this.epoch++;
    this.inflight.clear();
    this.cache.clear();
  }

  /** A 401 is thrown, or the promise rejected when the key had to be looked up. */
  authenticate(
    authorization: string | undefined,
    origin: string | undefined,
    referer: string | undefined,
    requestId?: string,
  ): AuthenticatedKey | Promise<AuthenticatedKey> {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!match?.[1]) throw unauthorized('Missing integration key: send Authorization: Bearer <key>');
    const plain = match[1];
    if (!plain.startsWith(KEY_PREFIX)) throw unauthorized('Invalid integration key');
    const keyHash = hash('sha256', plain, 'hex');
    const cached = this.cache.get(keyHash);
    if (cached && cached.expiresAt > this.now()) return admit(cached, origin, referer, this.now());
    return this.lookup(keyHash, cached, requestId).then((entry) => admit(entry, origin, referer, this.now()));
  }

  private lookup(keyHash: string, stale: CacheEntry | undefined, requestId: string | undefined): Promise<CacheEntry> {
    const pending = this.inflight.get(keyHash);
    if (pending) return pending;
    const epoch = this.epoch;
    const p: Promise<CacheEntry> = callUnary(this.client, this.client.resolveKey, { key_hash: keyHash }, 2000, requestId)
      .then((resolved) => {
        const entry = this.entryOf(resolved, stale?.token);
        // crm may have answered before a revocation: only its own request may use the answer.
        if (epoch !== this.epoch) return entry;
        this.cache.set(keyHash, entry);
        return entry;
      })
      .finally(() => {
        if (this.inflight.get(keyHash) === p) this.inflight.delete(keyHash);
      });
    this.inflight.set(keyHash, p);
    return p;
  }

  private entryOf({ key, creator }: ResolveKeyResponse, previous: Token | undefined): CacheEntry {
    const expiresAt = this.now() + this.ttlMs;
    if (!key) return { expiresAt, refused: 'Invalid integration key', validFrom: 0, validUntil: Infinity };
    const refused = key.deleted ? 'The integration key was deleted' : !key.active ? 'The integration key is inactive' : undefined;
    const entry: CacheEntry = {
      expiresAt,
      companyId: key.company_id,
      refused,
      validFrom: key.valid_from ? Date.parse(key.valid_from) : 0,
      validUntil: key.valid_until ? Date.parse(key.valid_until) : Infinity,
      allowedDomain: key.allowed_domain ? key.allowed_domain.toLowerCase() : undefined,
    };
    if (!creator || creator.company_id !== key.company_id || !creator.active || creator.archived) {
      entry.creatorRefused = "The key's creator is not an active user of the company";
      return entry;
    }
    const identity: IntegrationIdentity = {
      kind: 'integration',
      companyId: key.company_id,
      userId: creator.id,
      keyId: key.id,
      permissions: key.permissions,
    };
    // A token signed for other permissions or another creator is never forwarded again.
    entry.token = previous && sameIdentity(previous.identity, identity) ? previous : { identity, refreshAt: 0, usableUntil: 0 };
    const token = entry.token;
    entry.key = {
      keyId: key.id,
      companyId: key.company_id,
      rateLimitPerMinute: key.rate_limit_per_minute,
      allowedDomain: entry.allowedDomain,
      identity,
      token: () => this.tokenOf(token),
    };
    return entry;
  }

  private tokenOf(t: Token): string | Promise<string> {
    const now = this.now();
    if (t.value !== undefined && t.refreshAt > now) return t.value;
    t.signing ??= this.signer.sign(t.identity).then(
      (value) => {
        const signedAt = this.now();
        Object.assign(t, {
          value,
          refreshAt: signedAt + this.signer.lifetimeMs / 2,
          usableUntil: signedAt + this.signer.lifetimeMs * USABLE_SHARE,
          signing: undefined,
        });
        return value;
      },
      (err: unknown) => {
        t.signing = undefined;
        throw err;
      },
    );
    return t.value !== undefined && t.usableUntil > now ? t.value : t.signing;
  }
}

function admit(entry: CacheEntry, origin: string | undefined, referer: string | undefined, now: number): AuthenticatedKey {
  if (entry.refused) throw unauthorized(entry.refused);
  if (entry.validFrom > now) throw unauthorized('The integration key is not valid yet');
  if (entry.validUntil <= now) throw unauthorized('The integration key has expired');
  if (entry.allowedDomain !== undefined) {
    const host = origin ? browserHost(origin, 'origin') : browserHost(referer, 'referer');
    if (host !== entry.allowedDomain) throw unauthorized('Origin domain not authorized for this key');
  }
  if (entry.creatorRefused || !entry.key) throw unauthorized(entry.creatorRefused ?? 'Invalid integration key');
  return entry.key;
}

function sameIdentity(a: IntegrationIdentity, b: IntegrationIdentity): boolean {
  return (
    a.companyId === b.companyId &&
    a.userId === b.userId &&
    a.keyId === b.keyId &&
    a.permissions.length === b.permissions.length &&
    a.permissions.every((p, i) => p === b.permissions[i])
  );
}

/**
 * Only what a browser sends (decision 0150). WHATWG URL parsing is not used: it trims spaces, drops tabs and decodes
 * `%2e` in a host, so a forged value could still match.
 */
const ORIGIN = /^https?:\/\/([a-z0-9](?:[a-z0-9.-]*[a-z0-9])?|\[[0-9a-f:.]+\])(?::([0-9]{1,5}))?/i;
const REFERER_REST = /^(?:[/?#][\x21-\x7e]*)?$/;

export function browserHost(value: string | undefined, kind: 'origin' | 'referer'): string | undefined {
  if (!value) return undefined;
  const m = ORIGIN.exec(value);
  if (!m) return undefined;
  if (m[2] !== undefined && (Number(m[2]) < 1 || Number(m[2]) > 65535)) return undefined;
  const rest = value.slice(m[0].length);
  if (kind === 'origin' ? rest !== '' : !REFERER_REST.test(rest)) return undefined;
  return m[1]?.toLowerCase();
}

export { IdentitySigner };
