import { randomBytes } from 'node:crypto';
import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { type World, world } from './support/world.js';

/**
 * Runs last: every process of the suite's system (restarts included) logged at debug level through every other
 * file of the suite. No integration key, admin token, webhook secret or auth token, delivery signature or full
 * conversion URL (spec: "never logged") any request carried appears in any line.
 */
describe('reliability: no secret in any log line of the run', () => {
  let w: World;
  let receiver: WebhookReceiver;
  before(async function () {
    this.timeout(180_000);
    w = await world();
    receiver = await WebhookReceiver.start();
  });
  after(() => receiver?.close());

  it('logs no key, token, webhook secret, signature or full conversion URL', async function () {
    this.timeout(120_000);
    // A subscription with a secret and an auth token of its own, deliveries signed with it, a lead whose
    // conversion URL carries a private fragment and obref, requests with wrong keys (401s are logged).
    const secret = randomBytes(24).toString('hex');
    const bearer = `tok-${randomBytes(16).toString('hex')}`;
    const sub = await w.admin('POST', `/companies/${w.own.companyId}/webhooks`, {
      url: receiver.route('secrets', () => 200),
      events: ['lead.created'],
      secret,
      auth: { type: 'bearer', token: bearer },
    });
    expect(sub.status, sub.text).to.equal(201);
    w.secrets.add(secret).add(bearer);
    const conversion = `https://landing.example.test/offer?utm_source=ads&obref=${randomBytes(8).toString('hex')}#private-${randomBytes(8).toString('hex')}`;
    w.secrets.add(conversion);
    const lead = await w.call('POST', '/integrations/external/leads', {
      token: w.own.key,
      body: { title: 'Secrets probe', measurement_consent: 'DENIED', marketing: { url_conversion: conversion } },
    });
    expect(lead.status, lead.text).to.equal(201);
    const wrongKey = `svc_${randomBytes(32).toString('base64url')}`;
    w.secrets.add(wrongKey);
    expect((await w.call('GET', '/integrations/external/leads', { token: wrongKey })).status).to.equal(401);
    const delivered = await eventually(() => receiver.on('secrets').find((r) => r.body.payload?.lead?.id === lead.body.id), 30_000);
    for (const header of ['x-svc-signature', 'webhook-signature', 'authorization']) {
      const value = String(delivered.headers[header] ?? '');
      expect(value, header).not.to.equal('');
      for (const part of value.split(/[ ,]/)) if (part.length >= 16) w.secrets.add(part.replace(/^(sha256=|v1,)/, ''));
    }

    const logs = w.system.logs();
    const lines = logs.split('\n').filter(Boolean);
    const found = [...w.secrets]
      .filter((s) => s.length >= 16 && logs.includes(s))
      .map((s) => `${s.slice(0, 12)}… in: ${lines.find((l) => l.includes(s))?.slice(0, 300)}`);
    console.log(
      `      ${lines.length} log lines of ${Object.keys(w.system.deployed).length} deployables scanned for ${w.secrets.size} secrets`,
    );
    for (const name of Object.keys(w.system.deployed)) expect(logs, `${name} logged`).to.match(new RegExp(`"name":"${name}"`));
    expect(found).to.deep.equal([]);
  });
});
