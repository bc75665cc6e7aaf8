import { expect } from 'chai';
import { SignJWT } from 'jose';
import { AppError } from '../src/errors.js';
import {
  GATEWAY_MAX_HEADER_SIZE,
  hasPermission,
  IDENTITY_HEADER,
  IdentitySigner,
  IdentityVerifier,
  MAX_KEY_PERMISSIONS,
  MAX_PERMISSION_LENGTH,
  SERVICE_MAX_HEADER_SIZE,
} from '../src/identity.js';

const secret = 'k'.repeat(40);

describe('identity tokens between the gateway and the services', () => {
  const identity = { kind: 'integration' as const, companyId: 'c1', userId: 'u1', keyId: 'k1', permissions: ['crm/lead.read'] };

  it('round-trips an integration identity, an admin identity and the public identity (no credentials, no permission)', async () => {
    const signer = new IdentitySigner(secret);
    const verifier = new IdentityVerifier(secret);
    expect(await verifier.verify(await signer.sign(identity))).to.deep.equal(identity);
    expect(await verifier.verify(await signer.sign({ kind: 'admin' }))).to.deep.equal({ kind: 'admin' });
    const anonymous = await verifier.verify(await signer.sign({ kind: 'public' }));
    expect(anonymous).to.deep.equal({ kind: 'public' });
    expect(hasPermission(anonymous, '*')).to.equal(false);
  });

  it('refuses a missing token, another secret, an expired token and a foreign issuer', async () => {
    const verifier = new IdentityVerifier(secret);
    const rejects = async (token: string | undefined) => {
      try {
        await verifier.verify(token);
        expect.fail('should reject');
      } catch (err) {
        expect(err).to.be.instanceOf(AppError);
        expect((err as AppError).kind).to.equal('unauthorized');
      }
    };
    await rejects(undefined);
    await rejects(await new IdentitySigner('z'.repeat(40)).sign(identity));
    await rejects(await new IdentitySigner(secret, -10).sign(identity));
    await rejects(
      await new SignJWT({ knd: 'admin' })
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer('someone')
        .setAudience('svc-services')
        .setExpirationTime('1m')
        .sign(new TextEncoder().encode(secret)),
    );
    await rejects(
      await new SignJWT({ knd: 'integration', cid: 'c' })
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer('svc-gateway')
        .setAudience('svc-services')
        .setExpirationTime('1m')
        .sign(new TextEncoder().encode(secret)),
    );
  });

  it('grants a permission when listed or with *', () => {
    expect(hasPermission(identity, 'crm/lead.read')).to.equal(true);
    expect(hasPermission(identity, 'crm/lead.create')).to.equal(false);
    expect(hasPermission({ ...identity, permissions: ['*'] }, 'crm/anything')).to.equal(true);
    expect(hasPermission({ kind: 'admin' }, 'crm/lead.read')).to.equal(false);
  });

  it('the identity of the largest key a key can hold fits the services beside the largest headers the gateway accepts (decision 0153)', async () => {
    const uuid = '01a21773-0321-71e8-8328-572f34b43445';
    const permissions = Array.from({ length: MAX_KEY_PERMISSIONS }, (_, i) => `crm/${i}`.padEnd(MAX_PERMISSION_LENGTH, 'x'));
    const token = await new IdentitySigner(secret).sign({ kind: 'integration', companyId: uuid, userId: uuid, keyId: uuid, permissions });
    const identityLine = `${IDENTITY_HEADER}: ${token}\r\n`.length;
    // What the proxy adds besides: x-forwarded-for/-port/-proto/-host with their values.
    const forwarding = 512;
    expect(GATEWAY_MAX_HEADER_SIZE + identityLine + forwarding).to.be.at.most(SERVICE_MAX_HEADER_SIZE);
  });
});
