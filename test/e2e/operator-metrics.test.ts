import { readFileSync } from 'node:fs';
import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import { parse } from 'yaml';
import { client } from '../support/client.js';
import { adminOf, seedTenant, type Tenant } from '../support/fixtures.js';
import { familyOf, type Scrape, scrape, seriesOf } from '../support/metrics.js';
import { type Stack, startStack } from '../support/stack.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

const repo = new URL('../../', import.meta.url);

describe('what an operator sees: webhook, JetStream, outbox and gateway series (issue 19 item 5)', () => {
  let stack: Stack;
  let call: ReturnType<typeof client>['call'];
  let admin: ReturnType<typeof adminOf>;
  let receiver: WebhookReceiver;
  let t: Tenant;
  let lead: { id: string };

  before(async () => {
    // A retry waits long enough to still be waiting when scraped; one delivery ending failed disables its subscription.
    stack = await startStack({
      webhooks: { WEBHOOK_RETRY_BASE_MS: '600000', WEBHOOK_DISABLE_AFTER_FAILURES: '1', WEBHOOK_DISABLE_AFTER_MS: '0' },
    });
    call = client(stack.gatewayUrl).call;
    admin = adminOf(call, stack.adminToken);
    receiver = await WebhookReceiver.start();
    t = await seedTenant(call, stack.adminToken);
    for (const [name, status] of [
      ['ok', 200],
      ['down', 500],
      ['gone', 410],
    ] as const) {
      const res = await admin('POST', `/companies/${t.company.id}/webhooks`, {
        url: receiver.route(`${t.company.id}/${name}`, () => status),
        events: ['lead.created'],
      });
      expect(res.status, res.text).to.equal(201);
    }
    const created = await call('POST', '/integrations/external/leads', { token: t.key.key, body: { title: 'Watched' } });
    expect(created.status, created.text).to.equal(201);
    lead = created.body;
  });
  after(async () => {
    await receiver?.close();
    await stack?.stop();
  });

  const webhooksMetrics = () => scrape(`${stack.services.webhooks!.metricsUrl}/metrics`);
  const gatewayMetrics = () => scrape(`${stack.gateway.metricsUrl}/metrics`);
  const crmMetrics = () => scrape(`${stack.services.crm.metricsUrl}/metrics`);
  const value = (s: Scrape, name: string, labels: Record<string, string> = {}) => s.find(name, labels).reduce((n, x) => n + x.value, 0);

  it('counts delivery outcomes by result and status class, commit-to-2xx latency, retries waiting and disabled subscriptions', async () => {
    const s = await eventually(async () => {
      const m = await webhooksMetrics();
      return value(m, 'webhook_deliveries_retry_pending') === 1 && value(m, 'webhook_subscriptions_disabled') === 1 ? m : undefined;
    }, 20_000);
    expect(value(s, 'webhook_delivery_attempts_total', { result: 'succeeded', status_class: '2xx' })).to.equal(1);
    expect(value(s, 'webhook_delivery_attempts_total', { result: 'retrying', status_class: '5xx' })).to.equal(1);
    expect(value(s, 'webhook_delivery_attempts_total', { result: 'failed', status_class: '4xx' })).to.equal(1);
    expect(value(s, 'webhook_delivery_commit_to_success_seconds_count')).to.equal(1);
    // Measured from the event's commit: positive, and within the test's own lifetime.
    const sum = value(s, 'webhook_delivery_commit_to_success_seconds_sum');
    expect(sum).to.be.greaterThan(0).and.lessThan(process.uptime());
    expect(s.find('webhook_deliveries_retry_pending')[0]?.labels).to.deep.equal({ service: 'webhooks' });
    // Failing: the 500 receiver's subscription, whose delivery waits for a retry (the 410 one is disabled, not active).
    expect(value(s, 'webhook_subscriptions_failing')).to.equal(1);
  });

  it("reports the JetStream consumer's lag by consumer", async () => {
    const s = await webhooksMetrics();
    const pending = s.find('jetstream_consumer_pending_messages', { consumer: 'webhooks' });
    const ackPending = s.find('jetstream_consumer_ack_pending_messages', { consumer: 'webhooks' });
    expect(pending).to.have.length(1);
    expect(ackPending).to.have.length(1);
    // Every event of this stack was acknowledged once its deliveries were issued.
    expect(pending[0]!.value).to.equal(0);
    expect(ackPending[0]!.value).to.equal(0);
  });

  it('reports the outbox backlog and the age of its oldest unpublished row where a relay runs', async () => {
    const s = await eventually(async () => {
      const m = await crmMetrics();
      return value(m, 'outbox_pending') === 0 ? m : undefined;
    }, 10_000);
    expect(s.find('outbox_oldest_pending_age_seconds', { service: 'crm' })).to.have.length(1);
    expect(value(s, 'outbox_oldest_pending_age_seconds')).to.equal(0);
    expect(value(s, 'outbox_published_total')).to.be.greaterThan(0);
  });

  it('labels gateway requests by route template and upstream, and exports no series the gateway does not own', async () => {
    const auth = { authorization: `Bearer ${t.key.key}` };
    const got = await fetch(`${stack.gatewayUrl}/integrations/external/leads/${lead.id}`, { headers: auth });
    expect(got.status).to.equal(200);
    // The service names the template to the gateway, which keeps it off the client's answer.
    expect(got.headers.get('x-route-template')).to.equal(null);
    expect((await fetch(`${stack.gatewayUrl}/integrations/external/chats/unread-summary`, { headers: auth })).status).to.equal(200);
    expect((await fetch(`${stack.gatewayUrl}/integrations/external/leads/${lead.id}`)).status).to.equal(401);
    const s = await gatewayMetrics();
    const count = (labels: Record<string, string>) => value(s, 'http_request_duration_seconds_count', labels);
    expect(count({ method: 'GET', route: '/integrations/external/leads/{ref}', upstream: 'crm', status: '200' })).to.equal(1);
    // Refused by the gateway before any service saw it: labelled by resource.
    expect(count({ method: 'GET', route: '/integrations/external/leads/*', upstream: 'crm', status: '401' })).to.equal(1);
    expect(count({ method: 'GET', route: '/integrations/external/chats/unread-summary', upstream: 'chat', status: '200' })).to.equal(1);
    expect(count({ method: 'POST', route: '/integrations/external/leads', upstream: 'crm', status: '201' })).to.equal(1);
    expect(count({ method: 'POST', route: '/admin/v1/companies/{id}/webhooks', upstream: 'webhooks', status: '201' })).to.equal(3);
    // No id reached a label.
    for (const x of s.find('http_request_duration_seconds_count')) expect(x.labels.route).to.not.include(lead.id);
    const foreign = [...s.families].filter((n) => /^(outbox_|webhook_|jetstream_)/.test(n));
    expect(foreign).to.deep.equal([]);
    // And the services export none of the gateway's or the webhooks service's own.
    const crm = await crmMetrics();
    expect([...crm.families].filter((n) => /^(gateway_|webhook_|jetstream_)/.test(n))).to.deep.equal([]);
  });

  it('the Grafana dashboard and the alert rules read only series the processes register', async () => {
    const families = new Set<string>();
    for (const s of [await gatewayMetrics(), await crmMetrics(), await webhooksMetrics()]) for (const f of s.families) families.add(f);
    const dashboard = JSON.parse(readFileSync(new URL('deploy/grafana/crm-platform.json', repo), 'utf8'));
    const panels: { title: string; targets?: { expr: string }[]; panels?: unknown[] }[] = dashboard.panels.flatMap((p: any) => [
      p,
      ...(p.panels ?? []),
    ]);
    const exprs = panels.flatMap((p) => (p.targets ?? []).map((x) => ({ where: `panel "${p.title}"`, expr: x.expr })));
    const rules = parse(readFileSync(new URL('deploy/prometheus/alerts.yaml', repo), 'utf8'));
    expect(rules.kind).to.equal('PrometheusRule');
    for (const group of rules.spec.groups)
      for (const rule of group.rules) {
        expect(rule.alert, JSON.stringify(rule)).to.be.a('string');
        expect(rule.labels?.severity, rule.alert).to.be.oneOf(['warning', 'critical']);
        expect(rule.annotations?.summary, rule.alert).to.be.a('string');
        exprs.push({ where: `alert ${rule.alert}`, expr: rule.expr });
      }
    expect(exprs.length).to.be.greaterThan(10);
    const unknown = exprs.flatMap(({ where, expr }) =>
      seriesOf(expr)
        .filter((n) => !familyOf(n, families))
        .map((n) => `${where}: ${n}`),
    );
    expect(unknown).to.deep.equal([]);
    // Each of the series has a panel.
    const read = new Set(exprs.flatMap(({ expr }) => seriesOf(expr).map((n) => familyOf(n, families))));
    for (const name of [
      'webhook_delivery_attempts_total',
      'webhook_delivery_commit_to_success_seconds',
      'webhook_deliveries_retry_pending',
      'webhook_subscriptions_disabled',
      'jetstream_consumer_pending_messages',
      'outbox_oldest_pending_age_seconds',
      'http_request_duration_seconds',
    ])
      expect(read, name).to.include(name);
  });
});
