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
  /** Lower-cased; a key with one is used from browser pages on that domain (CORS, decision 0102). */
  allowedDomain: string | undefined;
  identity: IntegrationIdentity;
  /** The identity token forwarded to services: a string while a signed one is fresh, re-signed before it gets old. */
  token(): string | Promise<string>;
}

/** A signed identity token, shared by the successive cache entries of a key while its identity is the same. */
interface Token {
  identity: IntegrationIdentity;
  value?: string;
  /** After this the token is re-signed; it is still used meanwhile. */
  refreshAt: number;
  /** After this it is not used any more (a margin before it expires). */
  usableUntil: number;
  signing?: Promise<string>;
}

/**
 * What a resolved key answers to every request, worked out once per look-up: the rule failures that depend
 * on the key alone, in the order of the spec's rules, around the checks that depend on the time and the
 * request's headers.
 */
interface CacheEntry {
  expiresAt: number;
  /** The key's company, so that a revocation in the company drops the entry (unknown keys have none). */
  companyId?: string;
  /** Rules 1-2 that fail whatever the request: unknown, deleted or inactive key. */
  refused?: string;
  validFrom: number;
  validUntil: number;
  allowedDomain?: string;
  /** Rule 4, checked after the validity period and the domain as before. */
  creatorRefused?: string;
  key?: AuthenticatedKey;
  token?: Token;
}

/**
 * A token is re-signed at half its lifetime; requests meanwhile go on with the old one, but never past this share
 * of its lifetime, which keeps most of it as a margin for clocks that differ between the gateway and a service.
 */
const USABLE_SHARE = 0.6;

/**
 * Keys remembered at most; the least recently used go first. An expired entry stays until then: the next look-up of
 * its key reuses its token.
 */
const CACHED_KEYS = 50_000;

/**
 * Authenticates integration keys exactly as the spec's Authentication part says (rules 1 to 4). Look-ups
 * by key hash are cached for at most KEY_CACHE_TTL_MS (and concurrent misses share one gRPC call); a key changed
 * through the admin API is dropped at once (forgetCompany, decision 0120), the TTL bounds a lost broadcast. A key found in the cache is checked without a promise or a
 * timer: this runs on every proxied request (decision 0017).
 */
export class KeyAuthenticator {
  private readonly cache = new LRUCache<string, CacheEntry>({ max: CACHED_KEYS });
  private readonly inflight = new Map<string, Promise<CacheEntry>>();
  private readonly client: CrmServiceClient;
  /** Bumped by every revocation: a look-up that started before one answers its own request but is not cached. */
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

  /**
   * Drops every cached look-up of a company's keys, and forgets the look-ups under way, so that the next request
   * of any of its keys asks crm: called when a key or a user of the company changed (decision 0120).
   */
  forgetCompany(companyId: string): void {
    this.epoch++;
    this.inflight.clear();
    const dropped = [...this.cache.entries()].filter(([, entry]) => entry.companyId === companyId);
    for (const [keyHash] of dropped) this.cache.delete(keyHash);
  }

  /** Drops every cached look-up: revocations may have been missed (the broadcast was disconnected). */
  forgetAll(): void {
    this.epoch++;
    this.inflight.clear();
    this.cache.clear();
  }

  /**
   * The key of a request, or a 401 (thrown, or the promise rejected when the key had to be looked up). A look-up
   * carries `requestId` to crm (the id of the request that started it; decision 0146: the gateway holds no
   * AsyncLocalStorage).
   */
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
        // crm may have answered before a revocation that happened since: only its own request may use the answer.
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
    // The old token is still good for a while: requests go on with it while the new one is signed.
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
 * What a browser puts in the header, and nothing else (decision 0150): `http` or `https`, a host written out (letters,
 * digits, dots, hyphens, or a bracketed IPv6 address; no percent-escapes, user info or spaces), an optional port. An
 * Origin has nothing after that; a Referer may go on with a path, query or fragment of printable characters. WHATWG URL
 * parsing is not used: it trims spaces, drops tabs and decodes `%2e` in a host, so a forged value could still match.
 */
const ORIGIN = /^https?:\/\/([a-z0-9](?:[a-z0-9.-]*[a-z0-9])?|\[[0-9a-f:.]+\])(?::([0-9]{1,5}))?/i;
const REFERER_REST = /^(?:[/?#][\x21-\x7e]*)?$/;

/** The lower-cased host of a header value a browser could have sent, else undefined. */
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
