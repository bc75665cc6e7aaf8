import { createHmac } from 'node:crypto';
import { PRIVATE_FILE_REF, renderPrivateFileUrls, verifyFileUrl } from '@svc/platform/files/signed-url';
import { verifyWebhook, WebhookVerificationError } from '@svc/webhook-verify';
import { expect } from 'chai';
import type { Delivery } from '../src/deliveries/delivery.entity.js';
import { buildHeaders } from '../src/deliveries/sender.js';
import { signingSecrets, standardWebhooksSecret, svcSignature } from '../src/deliveries/signing.js';

const body = JSON.stringify({ event_id: 'evt_1', event_key: 'lead.created', payload: { lead: { id: 'l1' } } });
const delivery = (config: Partial<Delivery['config']> = {}): Delivery =>
  ({
    eventId: 'evt_1',
    eventKey: 'lead.created',
    body,
    config: { secret: 'new-secret-0123456789', headers: {}, auth: null, ...config },
  }) as Delivery;

describe('signatures: x-svc-signature, Standard Webhooks, rotation', () => {
  it('signs x-svc-signature as sha256= and the lowercase hex HMAC of the body', () => {
    expect(svcSignature('k', body)).to.equal(`sha256=${createHmac('sha256', 'k').update(body).digest('hex')}`);
  });

  it('sends the Standard Webhooks headers: id = event id, a current timestamp, v1 over id.timestamp.body', () => {
    const now = 1_800_000_000_000;
    const h = buildHeaders(delivery(), body, now);
    expect(h['webhook-id']).to.equal('evt_1');
    expect(h['webhook-timestamp']).to.equal('1800000000');
    const expected = createHmac('sha256', 'new-secret-0123456789').update(`evt_1.1800000000.${body}`).digest('base64');
    expect(h['webhook-signature']).to.equal(`v1,${expected}`);
  });

  it('gives the whsec_ form of a secret for Standard Webhooks libraries', () => {
    expect(standardWebhooksSecret('abc')).to.equal(`whsec_${Buffer.from('abc').toString('base64')}`);
  });

  it('signs webhook-signature with the old and the new secret during a rotation grace, and only the new one after', () => {
    const rotating = delivery({
      previousSecret: 'old-secret-0123456789',
      previousSecretExpiresAt: new Date(Date.now() + 60_000).toISOString(),
    });
    expect(signingSecrets(rotating.config)).to.deep.equal(['new-secret-0123456789', 'old-secret-0123456789']);
    const h = buildHeaders(rotating, body);
    expect(h['webhook-signature']!.split(' ')).to.have.length(2);
    const expired = delivery({ previousSecret: 'old-secret-0123456789', previousSecretExpiresAt: new Date(Date.now() - 1).toISOString() });
    expect(signingSecrets(expired.config)).to.deep.equal(['new-secret-0123456789']);
    expect(buildHeaders(expired, body)['x-svc-signature']).to.not.contain(',');
  });
});

describe('x-svc-signature during a rotation', () => {
  it('is one value, the HMAC of the body with the current secret, as the spec defines it', () => {
    const rotating = delivery({
      previousSecret: 'old-secret-0123456789',
      previousSecretExpiresAt: new Date(Date.now() + 60_000).toISOString(),
    });
    expect(buildHeaders(rotating, body)['x-svc-signature']).to.equal(
      `sha256=${createHmac('sha256', 'new-secret-0123456789').update(body).digest('hex')}`,
    );
  });
});

describe('the subscriber verification helper (@svc/webhook-verify) on what the sender builds', () => {
  const headersFor = (d: Delivery, now = Date.now()) => buildHeaders(d, body, now);

  it('accepts a genuine delivery and returns the envelope', () => {
    const event = verifyWebhook({ body: Buffer.from(body), headers: headersFor(delivery()), secrets: ['new-secret-0123456789'] });
    expect(event).to.deep.equal(JSON.parse(body));
  });

  it('accepts with either secret during a rotation, so no verification is missed', () => {
    const d = delivery({ previousSecret: 'old-secret-0123456789', previousSecretExpiresAt: new Date(Date.now() + 60_000).toISOString() });
    for (const secret of ['old-secret-0123456789', 'new-secret-0123456789']) {
      expect(verifyWebhook({ body, headers: headersFor(d), secrets: [secret] }).event_key).to.equal('lead.created');
    }
  });

  it('refuses a tampered body, a wrong secret and a replayed old delivery', () => {
    const h = headersFor(delivery());
    expect(() => verifyWebhook({ body: body.replace('l1', 'l2'), headers: h, secrets: ['new-secret-0123456789'] })).to.throw(
      WebhookVerificationError,
    );
    expect(() => verifyWebhook({ body, headers: h, secrets: ['another-secret-012345'] })).to.throw(WebhookVerificationError);
    const old = headersFor(delivery(), Date.now() - 10 * 60_000);
    expect(() => verifyWebhook({ body, headers: old, secrets: ['new-secret-0123456789'] })).to.throw(WebhookVerificationError, /timestamp/);
  });

  it('refuses a delivery stripped of the Standard Webhooks headers unless the receiver opts into x-svc-signature', () => {
    const { 'webhook-id': _a, 'webhook-timestamp': _b, 'webhook-signature': _c, ...svcOnly } = headersFor(delivery());
    expect(() => verifyWebhook({ body, headers: svcOnly, secrets: ['new-secret-0123456789'] })).to.throw(WebhookVerificationError);
    expect(verifyWebhook({ body, headers: svcOnly, secrets: ['new-secret-0123456789'], legacySignature: true }).event_id).to.equal('evt_1');
    expect(() => verifyWebhook({ body: `${body} `, headers: svcOnly, secrets: ['new-secret-0123456789'], legacySignature: true })).to.throw(
      WebhookVerificationError,
    );
  });
});

describe('private file URLs in payloads', () => {
  const secret = 'f'.repeat(40);
  it('regenerates each private file reference as a signed URL valid 24 hours from the send', () => {
    const stored = JSON.stringify({ file: { id: 'file1', url: `${PRIVATE_FILE_REF}file1` }, other: 'https://public.example/x' });
    const now = new Date('2030-01-01T00:00:00Z');
    const sent = JSON.parse(renderPrivateFileUrls(stored, 'https://api.example/public/files', secret, now));
    const url = new URL(sent.file.url);
    expect(url.origin + url.pathname).to.equal('https://api.example/public/files/file1');
    expect(Number(url.searchParams.get('expires'))).to.equal(now.getTime() / 1000 + 86_400);
    expect(verifyFileUrl(secret, 'file1', url.searchParams.get('expires'), url.searchParams.get('signature'), now.getTime())).to.equal(
      true,
    );
    expect(verifyFileUrl(secret, 'file2', url.searchParams.get('expires'), url.searchParams.get('signature'), now.getTime())).to.equal(
      false,
    );
    expect(
      verifyFileUrl(secret, 'file1', url.searchParams.get('expires'), url.searchParams.get('signature'), now.getTime() + 86_401_000),
    ).to.equal(false);
    expect(sent.other).to.equal('https://public.example/x');
  });
  it('leaves a payload without references byte for byte', () => {
    expect(renderPrivateFileUrls(body, 'https://x', secret)).to.equal(body);
  });
});
