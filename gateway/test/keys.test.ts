import { createHash } from 'node:crypto';
import type { ServerUnaryCall, sendUnaryData } from '@grpc/grpc-js';
import { type RunningGrpcServer, startGrpcServer } from '@svc/platform/grpc/server';
import { type Identity, IdentitySigner } from '@svc/platform/identity';
import { eventually } from '@svc/platform/testing';
import { CrmServiceService, type ResolveKeyRequest, type ResolveKeyResponse } from '@svc/proto/crm/v1/crm';
import { expect } from 'chai';
import { type AuthenticatedKey, KeyAuthenticator } from '../src/keys.js';

/** A signer whose signings the test finishes by hand: which token a request gets depends on when they finish. */
class HeldSigner extends IdentitySigner {
  readonly signed: Identity[] = [];
  private held: { finish: () => void }[] = [];
  constructor() {
    super('s'.repeat(32), 60);
  }
  override sign(identity: Identity): Promise<string> {
    this.signed.push(identity);
    const value = `token-${this.signed.length}`;
    return new Promise((resolve) => this.held.push({ finish: () => resolve(value) }));
  }
  finishAll(): void {
    for (const h of this.held.splice(0)) h.finish();
  }
}

const PLAIN = `svc_${'k'.repeat(43)}`;
const HASH = createHash('sha256').update(PLAIN).digest('hex');
const TTL_MS = 500;
const LIFETIME_MS = 60_000;

describe('gateway key authentication: cache and identity tokens (a crm gRPC server on loopback)', () => {
  let crm: RunningGrpcServer;
  let answer: ResolveKeyResponse;
  let lookups = 0;
  /** The x-request-id metadata of each look-up crm was asked. */
  let lookupIds: (string | undefined)[] = [];
  /** While set, crm's answers (as they were when asked) wait here until the test sends them. */
  let heldAnswers: (() => void)[] | undefined;
  let clock = 1_000_000;
  let signer: HeldSigner;
  let keys: KeyAuthenticator;

  const keyAnswer = (permissions: string[]): ResolveKeyResponse => ({
    key: { id: 'key-1', company_id: 'c-1', created_by_user_id: 'u-1', permissions, active: true, deleted: false },
    creator: { id: 'u-1', company_id: 'c-1', name: 'U', email: 'u@x.test', active: true, archived: false },
  });
  const authenticate = () => keys.authenticate(`Bearer ${PLAIN}`, undefined, undefined);
  const flush = () => new Promise((r) => setImmediate(r));

  before(async () => {
    crm = await startGrpcServer('127.0.0.1', 0, [
      {
        definition: CrmServiceService,
        implementation: {
          resolveKey: (call: ServerUnaryCall<ResolveKeyRequest, ResolveKeyResponse>, done: sendUnaryData<ResolveKeyResponse>) => {
            lookups++;
            lookupIds.push(call.metadata.get('x-request-id')[0] as string | undefined);
            const now = call.request.key_hash === HASH ? answer : {};
            if (heldAnswers) heldAnswers.push(() => done(null, now));
            else done(null, now);
          },
          getCompany: () => undefined,
          getUser: () => undefined,
        },
      },
    ]);
  });
  after(() => crm.stop(100));
  beforeEach(() => {
    answer = keyAnswer(['*']);
    lookups = 0;
    lookupIds = [];
    heldAnswers = undefined;
    signer = new HeldSigner();
    keys = new KeyAuthenticator(`127.0.0.1:${crm.port}`, TTL_MS, signer, () => clock);
  });
  afterEach(() => keys.close());

  it('answers a cached key without a promise, and asks crm again once the cache period is over', async () => {
    const first = authenticate();
    expect(first).to.be.instanceOf(Promise);
    const key = await first;
    expect(key.identity.permissions).to.deep.equal(['*']);
    const second = authenticate();
    expect(second).not.to.be.instanceOf(Promise);
    expect(second).to.equal(key);
    expect(lookups).to.equal(1);
    clock += TTL_MS;
    expect(authenticate()).to.be.instanceOf(Promise);
    await authenticate();
    expect(lookups).to.equal(2);
  });

  it('sends crm the request id it was given with a look-up, and nothing without one (decision 0146)', async () => {
    await keys.authenticate(`Bearer ${PLAIN}`, undefined, undefined, 'rid-1');
    clock += TTL_MS + 1;
    await keys.authenticate(`Bearer ${PLAIN}`, undefined, undefined);
    expect(lookupIds).to.deep.equal(['rid-1', undefined]);
  });

  it('checks the validity period on every request, also for a cached key', async () => {
    answer = keyAnswer(['*']);
    answer.key!.valid_until = new Date(clock + 100).toISOString();
    await authenticate();
    clock += 99;
    expect(() => authenticate()).not.to.throw();
    clock += 1;
    expect(() => authenticate()).to.throw('The integration key has expired');
  });

  it('signs a token once, re-signs it in the background at half its lifetime, and stops using the old one at 60 %', async () => {
    const key = (await authenticate()) as AuthenticatedKey;
    const firstToken = key.token();
    expect(firstToken).to.be.instanceOf(Promise); // nothing signed yet: the request waits
    signer.finishAll();
    expect(await firstToken).to.equal('token-1');
    expect(key.token()).to.equal('token-1');
    expect(signer.signed).to.have.length(1);

    clock += LIFETIME_MS / 2; // refresh due: the old token still goes out while the new one is signed
    expect(key.token()).to.equal('token-1');
    expect(key.token()).to.equal('token-1');
    expect(signer.signed).to.have.length(2); // one signing for both requests

    clock += LIFETIME_MS * 0.1; // 60 % of its lifetime: the old one is no longer used
    const waiting = key.token();
    expect(waiting).to.be.instanceOf(Promise);
    signer.finishAll();
    expect(await waiting).to.equal('token-2');
    await flush();
    expect(key.token()).to.equal('token-2');
    expect(signer.signed).to.have.length(2);
  });

  it('carries a token over to the next look-up of the key only while its identity is the same', async () => {
    let key = (await authenticate()) as AuthenticatedKey;
    const signing = key.token();
    signer.finishAll();
    expect(await signing).to.equal('token-1');

    clock += TTL_MS; // same answer: the fresh token is kept
    key = await (authenticate() as Promise<AuthenticatedKey>);
    expect(key.token()).to.equal('token-1');

    answer = keyAnswer(['crm/lead.read']); // permissions changed in crm
    clock += TTL_MS;
    key = await (authenticate() as Promise<AuthenticatedKey>);
    const next = key.token();
    expect(next, 'a token signed for the old permissions').to.be.instanceOf(Promise);
    signer.finishAll();
    expect(await next).to.equal('token-2');
    expect(signer.signed.at(-1)).to.deep.include({ permissions: ['crm/lead.read'] });
  });

  it('refuses in the rules order with the same messages, from the cache too', async () => {
    answer = keyAnswer(['*']);
    answer.key!.active = false;
    answer.creator!.active = false;
    await (authenticate() as Promise<AuthenticatedKey>).then(
      () => expect.fail('accepted'),
      (err: Error) => expect(err.message).to.equal('The integration key is inactive'),
    );
    expect(() => authenticate()).to.throw('The integration key is inactive');

    answer = keyAnswer(['*']);
    answer.key!.allowed_domain = 'App.Example.com';
    answer.creator!.archived = true;
    clock += TTL_MS;
    await (authenticate() as Promise<AuthenticatedKey>).then(
      () => expect.fail('accepted'),
      (err: Error) => expect(err.message).to.equal('Origin domain not authorized for this key'),
    );
    expect(() => keys.authenticate(`Bearer ${PLAIN}`, 'https://app.example.com:8443', undefined)).to.throw(
      "The key's creator is not an active user of the company",
    );
    expect(lookups).to.equal(2);
  });

  it("forgets a company's cached keys at once on a revocation, and only that company's", async () => {
    await authenticate();
    expect(authenticate()).not.to.be.instanceOf(Promise);
    keys.forgetCompany('another-company');
    expect(authenticate(), 'another company changed: still cached').not.to.be.instanceOf(Promise);
    answer.key!.active = false;
    keys.forgetCompany('c-1');
    await (authenticate() as Promise<AuthenticatedKey>).then(
      () => expect.fail('accepted'),
      (err: Error) => expect(err.message).to.equal('The integration key is inactive'),
    );
    expect(lookups).to.equal(2);
  });

  it('does not cache an answer crm gave before a revocation, nor hand it to requests made after it', async () => {
    heldAnswers = [];
    const before = authenticate() as Promise<AuthenticatedKey>;
    await eventuallyHeld(1);
    answer = keyAnswer(['*']);
    answer.key!.deleted = true;
    keys.forgetCompany('c-1'); // the key was deleted while crm's older answer was on its way
    const after = authenticate() as Promise<AuthenticatedKey>;
    expect(after, 'a new look-up, not the one under way').to.be.instanceOf(Promise);
    await eventuallyHeld(2);
    for (const send of heldAnswers.splice(0)) send();
    heldAnswers = undefined;
    expect((await before).keyId, 'the request made before the revocation').to.equal('key-1');
    await after.then(
      () => expect.fail('accepted after the revocation'),
      (err: Error) => expect(err.message).to.equal('The integration key was deleted'),
    );
    expect(() => authenticate()).to.throw('The integration key was deleted');
    keys.forgetAll();
    expect(authenticate()).to.be.instanceOf(Promise);
  });

  it('matches allowed_domain only against an Origin or Referer a browser sends: http(s), a host, an optional port (decision 0150)', async () => {
    answer.key!.allowed_domain = 'app.example.com';
    await keys.authenticate(`Bearer ${PLAIN}`, 'https://app.example.com', undefined);
    const admitted = (origin: string | undefined, referer?: string) => {
      try {
        keys.authenticate(`Bearer ${PLAIN}`, origin, referer);
        return true;
      } catch (err) {
        expect((err as Error).message).to.equal('Origin domain not authorized for this key');
        return false;
      }
    };
    for (const origin of ['https://app.example.com', 'http://APP.Example.com:8080', 'https://app.example.com:443'])
      expect(admitted(origin), origin).to.equal(true);
    for (const referer of ['https://app.example.com/', 'https://app.example.com/page?x=1#top', 'http://app.example.com:8080'])
      expect(admitted(undefined, referer), referer).to.equal(true);
    for (const origin of [
      'ftp://app.example.com',
      'ws://app.example.com',
      'file://app.example.com',
      'https:app.example.com',
      'https:/app.example.com',
      'https://app.example.com/',
      'https://app.example.com/page',
      'https://app.example.com?x',
      ' https://app.example.com',
      'https://app.example.com ',
      'https://app.exa\tmple.com',
      'https://app%2eexample.com',
      'https://app.example%2Ecom',
      'https://user@app.example.com',
      'https://app.example.com:',
      'https://app.example.com:99999',
      'https://app.example.com.',
      'null',
    ])
      expect(admitted(origin), JSON.stringify(origin)).to.equal(false);
    for (const referer of [
      'ftp://app.example.com/x',
      ' https://app.example.com/x',
      'https://app.example.com/a b',
      'https://app%2eexample.com/',
      'https://app.example.com\\@evil.test/',
      'https://evil.test@app.example.com/',
    ])
      expect(admitted(undefined, referer), JSON.stringify(referer)).to.equal(false);
  });

  const eventuallyHeld = (n: number) => eventually(() => heldAnswers?.length === n, 2000, 5);
});
