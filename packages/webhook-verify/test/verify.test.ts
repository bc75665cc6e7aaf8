import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { verifyWebhook, WebhookVerificationError } from '../src/index.js';

const secret = 'subscription-secret-0123';
const body = JSON.stringify({ event_id: 'evt_1', event_key: 'lead.created', payload: { lead: { id: 'l1' } } });

/** Signs as the documented formats say (docs/webhooks.md), independently of the sender's code. */
function signed(opts: { at?: number; secrets?: string[]; text?: string } = {}) {
  const at = Math.floor((opts.at ?? Date.now()) / 1000);
  const text = opts.text ?? body;
  const secrets = opts.secrets ?? [secret];
  return {
    'x-svc-event-id': 'evt_1',
    'x-svc-signature': secrets.map((s) => `sha256=${createHmac('sha256', s).update(text).digest('hex')}`).join(','),
    'webhook-id': 'evt_1',
    'webhook-timestamp': String(at),
    'webhook-signature': secrets.map((s) => `v1,${createHmac('sha256', s).update(`evt_1.${at}.${text}`).digest('base64')}`).join(' '),
  };
}
const without = (h: Record<string, string>, ...names: string[]) =>
  Object.fromEntries(Object.entries(h).filter(([k]) => !names.includes(k)));

describe('@svc/webhook-verify', () => {
  it('accepts a genuine delivery and returns the envelope, with headers as an object, a Headers or a Buffer body', () => {
    expect(verifyWebhook({ body, headers: signed(), secrets: [secret] })).to.deep.equal(JSON.parse(body));
    expect(verifyWebhook({ body: Buffer.from(body), headers: new Headers(signed()), secrets: [secret] }).event_id).to.equal('evt_1');
  });

  it('takes the secret in its whsec_ form too', () => {
    const whsec = `whsec_${Buffer.from(secret).toString('base64')}`;
    expect(verifyWebhook({ body, headers: signed(), secrets: [whsec] }).event_key).to.equal('lead.created');
  });

  it('accepts either secret during a rotation', () => {
    const h = signed({ secrets: ['new-secret-0123456789', secret] });
    for (const s of [secret, 'new-secret-0123456789']) expect(verifyWebhook({ body, headers: h, secrets: [s] }).event_id).to.equal('evt_1');
  });

  it('refuses a tampered body, a wrong secret and a timestamp outside the tolerance (a replay)', () => {
    expect(() => verifyWebhook({ body: body.replace('l1', 'l2'), headers: signed(), secrets: [secret] })).to.throw(
      WebhookVerificationError,
    );
    expect(() => verifyWebhook({ body, headers: signed(), secrets: ['another-secret'] })).to.throw(WebhookVerificationError);
    const old = signed({ at: Date.now() - 10 * 60_000 });
    expect(() => verifyWebhook({ body, headers: old, secrets: [secret] })).to.throw(WebhookVerificationError, /tolerance/);
    expect(verifyWebhook({ body, headers: old, secrets: [secret], toleranceSeconds: 3600 }).event_id).to.equal('evt_1');
  });

  it('refuses a delivery stripped of its timestamped signature, even with a valid x-svc-signature', () => {
    const stripped = without(signed({ at: Date.now() - 3600_000 }), 'webhook-id', 'webhook-timestamp', 'webhook-signature');
    expect(() => verifyWebhook({ body, headers: stripped, secrets: [secret] })).to.throw(WebhookVerificationError, /legacySignature/);
  });

  it('refuses incomplete Standard Webhooks headers, whatever the options', () => {
    const partial = without(signed(), 'webhook-signature');
    for (const legacySignature of [false, true]) {
      expect(() => verifyWebhook({ body, headers: partial, secrets: [secret], legacySignature })).to.throw(
        WebhookVerificationError,
        /incomplete/,
      );
    }
  });

  it('with legacySignature, accepts x-svc-signature alone and still refuses a wrong one', () => {
    const svcOnly = without(signed(), 'webhook-id', 'webhook-timestamp', 'webhook-signature');
    expect(verifyWebhook({ body, headers: svcOnly, secrets: [secret], legacySignature: true }).event_id).to.equal('evt_1');
    expect(() => verifyWebhook({ body: `${body} `, headers: svcOnly, secrets: [secret], legacySignature: true })).to.throw(
      WebhookVerificationError,
      /x-svc-signature/,
    );
    expect(() => verifyWebhook({ body, headers: without(svcOnly, 'x-svc-signature'), secrets: [secret], legacySignature: true })).to.throw(
      /no signature header/,
    );
  });

  it('refuses an x-svc-event-id that differs from the body, no secrets, and a body that is not JSON', () => {
    expect(() => verifyWebhook({ body, headers: { ...signed(), 'x-svc-event-id': 'evt_2' }, secrets: [secret] })).to.throw(/differs/);
    expect(() => verifyWebhook({ body, headers: signed(), secrets: [] })).to.throw(/no secret/);
    expect(() => verifyWebhook({ body: 'not json', headers: signed({ text: 'not json' }), secrets: [secret] })).to.throw(/not JSON/);
  });

  it('reads header names in any case, from a plain object, a Headers, or anything with get()', () => {
    const upper = Object.fromEntries(Object.entries(signed()).map(([k, v]) => [k.replace(/(^|-)\w/g, (c) => c.toUpperCase()), v]));
    expect(Object.keys(upper)).to.include('Webhook-Signature');
    expect(verifyWebhook({ body, headers: upper, secrets: [secret] }).event_id).to.equal('evt_1');
    const map = new Map(Object.entries(signed()));
    expect(verifyWebhook({ body, headers: { get: (name: string) => map.get(name) }, secrets: [secret] }).event_id).to.equal('evt_1');
    const arrays = Object.fromEntries(Object.entries(signed()).map(([k, v]) => [k, [v]]));
    expect(verifyWebhook({ body, headers: arrays, secrets: [secret] }).event_id).to.equal('evt_1');
  });

  it('warns once, as a SecurityWarning, when it accepts the legacy signature, which cannot refuse a replay', async () => {
    // A module instance of its own: the warning is once a process, and an earlier test has already had it.
    const fresh = (await import(`../src/index.js?fresh=${Date.now()}`)) as typeof import('../src/index.js');
    const warnings: Error[] = [];
    const listen = (w: Error) => warnings.push(w);
    process.on('warning', listen);
    try {
      fresh.verifyWebhook({ body, headers: signed(), secrets: [secret] });
      const svcOnly = without(signed(), 'webhook-id', 'webhook-timestamp', 'webhook-signature');
      fresh.verifyWebhook({ body, headers: svcOnly, secrets: [secret], legacySignature: true });
      fresh.verifyWebhook({ body, headers: svcOnly, secrets: [secret], legacySignature: true });
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off('warning', listen);
    }
    expect(warnings.map((w) => [w.name, (w as Error & { code?: string }).code])).to.deep.equal([
      ['SecurityWarning', 'SVC_WEBHOOK_LEGACY_SIGNATURE'],
    ]);
    expect(warnings[0]?.message).to.match(/replay/);
  });
});
