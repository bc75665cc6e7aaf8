import { createHash } from 'node:crypto';
import { expect } from 'chai';
import pg from 'pg';
import { seedTenant, type Tenant } from '../support/fixtures.js';
import { expectError, type PostSaleStack, postSaleStack } from '../support/post-sale.js';

const KEY = 'satisfaction.public_submission_created';
const PER_TOKEN = 8;
const PER_ADDRESS = 120;

/** Satisfaction links through the gateway: the external link route, the public page and answer, and the event. */
describe('satisfaction: links, the public form without a key, and satisfaction.public_submission_created', () => {
  let s: PostSaleStack;
  let t: Tenant;
  let other: Tenant;
  let db: pg.Client;
  let lead: any;
  let deal: any;
  let delivery: any;
  let hiddenLead: any;
  const ext = (body: unknown, token = t.key.key) => s.call('POST', '/integrations/external/satisfaction/links', { token, body });
  const link = async (body: Record<string, unknown>) => {
    const res = await ext(body);
    expect(res.status, res.text).to.equal(201);
    return res.body;
  };
  const publicPath = (token: string) => `/public/satisfaction/${token}`;
  const page = (token: string) => fetch(`${s.stack.gatewayUrl}${publicPath(token)}`);
  const answerForm = (token: string, form: string) =>
    fetch(`${s.stack.gatewayUrl}${publicPath(token)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    });

  before(async () => {
    s = await postSaleStack([KEY], {
      gateway: { PUBLIC_TOKEN_RATE_LIMIT_PER_MINUTE: String(PER_TOKEN), PUBLIC_RATE_LIMIT_PER_MINUTE: String(PER_ADDRESS) },
    });
    t = s.t;
    other = await seedTenant(s.call, s.stack.adminToken);
    db = new pg.Client({ connectionString: s.stack.db.url });
    await db.connect();
    lead = (await s.call('POST', '/integrations/external/leads', { token: t.key.key, body: { title: 'Happy lead' } })).body;
    deal = (await s.call('POST', '/integrations/external/deals', { token: t.key.key, body: { title: 'Happy deal' } })).body;
    await s.ok('POST', 'delivery-pipelines', { name: 'Implementation', stages: [{ name: 'Start' }] }, 201);
    delivery = await s.ok('POST', 'deliveries', { user_id: t.user.id, title: 'Happy delivery' }, 201);
    const colleague = await s.ok('POST', 'users', { name: 'Colleague', email: `colleague-${t.company.id}@example.test` }, 201);
    const colleagueKey = await s.ok('POST', 'keys', { created_by_user_id: colleague.id, permissions: ['*'] }, 201);
    hiddenLead = (
      await s.call('POST', '/integrations/external/leads', { token: colleagueKey.key, body: { title: 'Private', visibility: 0 } })
    ).body;
  });
  after(async () => {
    await db?.end();
    await s?.close();
  });

  it('creates a link: 201 with the public URL and its token; only the token`s SHA-256 is stored', async () => {
    const l = await link({ crm_lead_id: lead.id, expires_in_hours: 2 });
    expect(l).to.have.all.keys('id', 'token', 'url', 'expires_at', 'crm_lead_id', 'crm_deal_id', 'crm_delivery_id', 'form', 'created_at');
    expect(l.token).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(l.url).to.equal(`${s.stack.gatewayUrl}${publicPath(l.token)}`);
    expect(l).to.include({ crm_lead_id: lead.id, crm_deal_id: null, crm_delivery_id: null });
    expect(l.form).to.deep.equal({ title: 'How did we do?', question: 'How satisfied are you with our service?', max_score: 5 });
    const hours = (Date.parse(l.expires_at) - Date.parse(l.created_at)) / 3_600_000;
    expect(hours).to.equal(2);
    const { rows } = await db.query('select * from crm.satisfaction_links where id = $1', [l.id]);
    expect(rows).to.have.length(1);
    expect(rows[0].token_hash).to.equal(createHash('sha256').update(l.token).digest('hex'));
    expect(JSON.stringify(rows[0])).not.to.contain(l.token);
    const second = await link({ crm_lead_id: lead.id });
    expect(second.token).not.to.equal(l.token);
  });

  it('refuses bad bodies with a 400 naming the field, and hidden, unknown or another company`s records alike', async () => {
    expectError(await ext({}), 400, 'crm_lead_id: send exactly one');
    expectError(await ext({ crm_lead_id: lead.id, crm_deal_id: deal.id }), 400, 'crm_lead_id: send exactly one');
    expectError(await ext({ crm_lead_id: lead.id, form: { max_score: 7 } }), 400, 'form.max_score');
    expectError(await ext({ crm_lead_id: lead.id, form: { title: '' } }), 400, 'form.title');
    expectError(await ext({ crm_lead_id: lead.id, expires_in_hours: 0 }), 400, 'expires_in_hours');
    expectError(await ext({ crm_lead_id: lead.id, extra: 1 }), 400, 'extra');
    expectError(await ext({ crm_lead_id: hiddenLead.id }), 400, 'crm_lead_id: lead not found');
    const theirs = (await s.call('POST', '/integrations/external/deals', { token: other.key.key, body: { title: 'Theirs' } })).body;
    expectError(await ext({ crm_deal_id: theirs.id }), 400, 'crm_deal_id: deal not found');
    expectError(await ext({ crm_delivery_id: '00000000-0000-7000-8000-000000000000' }), 400, 'crm_delivery_id: delivery not found');
    const { rows } = await db.query('select count(*)::int as n from crm.satisfaction_links where company_id = $1 and record_id = any($2)', [
      t.company.id,
      [hiddenLead.id, theirs.id],
    ]);
    expect(rows[0].n).to.equal(0);
  });

  it('needs a key (401) with crm/satisfaction.write (403); the admin token is not a key', async () => {
    expect((await s.call('POST', '/integrations/external/satisfaction/links', { body: { crm_lead_id: lead.id } })).status).to.equal(401);
    expect((await ext({ crm_lead_id: lead.id }, s.stack.adminToken)).status).to.equal(401);
    const narrow = await s.ok('POST', 'keys', { created_by_user_id: t.user.id, permissions: ['crm/lead.read'] }, 201);
    expectError(await ext({ crm_lead_id: lead.id }, narrow.key), 403, 'crm/satisfaction.write');
    const allowed = await s.ok('POST', 'keys', { created_by_user_id: t.user.id, permissions: ['crm/satisfaction.write'] }, 201);
    expect((await ext({ crm_lead_id: lead.id }, allowed.key)).status).to.equal(201);
  });

  it('GET of the public URL without a key: a plain HTML form, every value escaped, posting to itself', async () => {
    const l = await link({
      crm_deal_id: deal.id,
      form: { title: '<script>alert(1)</script> & co', question: 'Rate "us" <b>now</b>', max_score: 10 },
    });
    const res = await page(l.token);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).to.contain("default-src 'none'");
    expect(res.headers.get('referrer-policy')).to.equal('no-referrer');
    expect(res.headers.get('cache-control')).to.equal('no-store');
    const html = await res.text();
    expect(html).not.to.contain('<script');
    expect(html).not.to.contain('<b>');
    expect(html).to.contain('<title>&lt;script&gt;alert(1)&lt;/script&gt; &amp; co</title>');
    expect(html).to.contain('Rate &quot;us&quot; &lt;b&gt;now&lt;/b&gt;');
    expect(html).to.match(/<form method="post">/);
    expect(html.match(/type="radio" name="score"/g)).to.have.length(10);
    expect(html).to.contain('name="comment"');
  });

  it('POST JSON: 201, satisfaction.public_submission_created with its payload; the token is single-use (409)', async () => {
    const l = await link({ crm_lead_id: lead.id, form: { question: 'Happy?' } });
    const res = await s.call('POST', publicPath(l.token), { body: { score: 4, comment: '  Great  ' } });
    expect(res.status, res.text).to.equal(201);
    expect(res.body).to.have.all.keys('id', 'submitted_at');
    const event = await s.one(KEY, l.id);
    expect(event).to.have.all.keys('submission', 'link', 'form', 'record_type', 'crm_lead', 'crm_deal', 'crm_delivery');
    expect(event.submission).to.deep.equal({
      id: res.body.id,
      score: 4,
      max_score: 5,
      comment: 'Great',
      submitted_at: res.body.submitted_at,
    });
    expect(event.link).to.deep.equal({
      id: l.id,
      created_at: l.created_at,
      expires_at: l.expires_at,
      created_by: { id: t.user.id, name: 'Integrator', avatar: null },
    });
    expect(event.form).to.deep.equal({ title: 'How did we do?', question: 'Happy?', max_score: 5 });
    expect(event.record_type).to.equal('lead');
    expect(event.crm_lead).to.deep.equal({ id: lead.id, title: 'Happy lead', code: lead.code });
    expect(event.crm_deal).to.equal(null);
    expect(event.crm_delivery).to.equal(null);
    expectError(await s.call('POST', publicPath(l.token), { body: { score: 5 } }), 409, 'already answered');
    const again = await page(l.token);
    expect(again.status).to.equal(409);
    expect(await again.text()).to.contain('already answered');
    const { rows } = await db.query('select count(*)::int as n from crm.satisfaction_submissions where link_id = $1', [l.id]);
    expect(rows[0].n).to.equal(1);
  });

  it('answers a token taken by several answers at once exactly once: one 201, the others 409, one event', async () => {
    const l = await link({ crm_deal_id: deal.id });
    const answers = await Promise.all([1, 2, 3, 4, 5].map((score) => s.call('POST', publicPath(l.token), { body: { score } })));
    expect(answers.map((a) => a.status).sort()).to.deep.equal([201, 409, 409, 409, 409]);
    const event = await s.one(KEY, l.id);
    expect(event.submission.id).to.equal(answers.find((a) => a.status === 201)!.body.id);
    expect(event.crm_deal).to.deep.equal({ id: deal.id, title: 'Happy deal', code: deal.code });
    const { rows } = await db.query('select count(*)::int as n from crm.satisfaction_submissions where link_id = $1', [l.id]);
    expect(rows[0].n).to.equal(1);
  });

  it('POST from the HTML form (urlencoded): 201 with a thank-you page; the event names the delivery', async () => {
    const l = await link({ crm_delivery_id: delivery.id });
    const res = await answerForm(l.token, 'score=5&comment=Fast+%26+clean');
    expect(res.status).to.equal(201);
    expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    expect(await res.text()).to.contain('Thank you');
    const event = await s.one(KEY, l.id);
    expect(event.submission).to.include({ score: 5, comment: 'Fast & clean', max_score: 5 });
    expect(event.record_type).to.equal('delivery');
    expect(event.crm_delivery).to.deep.equal({ id: delivery.id, title: 'Happy delivery', code: delivery.code, status: 1 });
    expect(event.crm_lead).to.equal(null);
  });

  it('a NUL or a lone surrogate in an answer is a 400 naming the field, urlencoded or JSON, and the link stays usable (decision 0110)', async () => {
    const l = await link({ crm_lead_id: lead.id });
    const form = await answerForm(l.token, 'score=3&comment=a%00b');
    expect(form.status).to.equal(400);
    expect(await form.text()).to.contain('comment: must not contain NUL characters');
    const json = await fetch(`${s.stack.gatewayUrl}${publicPath(l.token)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"score":3,"comment":"\\ud800"}',
    });
    expect(json.status).to.equal(400);
    expect(((await json.json()) as { message: string }).message).to.contain('comment: must not contain');
    expect((await s.call('POST', publicPath(l.token), { body: { score: 4 } })).status).to.equal(201);
  });

  it('a bad answer is a 400 naming the field and leaves the link usable; unknown tokens are 404, in JSON or HTML', async () => {
    const l = await link({ crm_lead_id: lead.id });
    expectError(await s.call('POST', publicPath(l.token), { body: { score: 6 } }), 400, 'score: must be an integer from 1 to 5');
    expectError(await s.call('POST', publicPath(l.token), { body: { score: 0 } }), 400, 'score');
    expectError(await s.call('POST', publicPath(l.token), { body: { comment: 'no score' } }), 400, 'score');
    expectError(await s.call('POST', publicPath(l.token), { body: { score: 3, comment: 'x'.repeat(2001) } }), 400, 'comment');
    const form = await answerForm(l.token, 'comment=only');
    expect(form.status).to.equal(400);
    expect(await form.text()).to.contain('score');
    expect((await s.call('POST', publicPath(l.token), { body: { score: 1 } })).status).to.equal(201);
    const guessed = 'A'.repeat(43);
    expectError(await s.call('POST', publicPath(guessed), { body: { score: 3 } }), 404, 'Satisfaction link not found');
    expectError(await s.call('POST', publicPath('short'), { body: { score: 3 } }), 404, 'Satisfaction link not found');
    const html = await page(guessed);
    expect(html.status).to.equal(404);
    expect(await html.text()).to.contain('Satisfaction link not found');
  });

  it('an expired link is a 410 and takes no answer', async () => {
    const l = await link({ crm_lead_id: lead.id });
    await db.query(`update crm.satisfaction_links set expires_at = now() - interval '1 second' where id = $1`, [l.id]);
    expectError(await s.call('POST', publicPath(l.token), { body: { score: 3 } }), 410, 'expired');
    expect((await page(l.token)).status).to.equal(410);
    const { rows } = await db.query('select used_at from crm.satisfaction_links where id = $1', [l.id]);
    expect(rows[0].used_at).to.equal(null);
  });

  it(`rate-limits the public route: ${PER_TOKEN} requests per token and minute, then 429 with Retry-After`, async () => {
    const l = await link({ crm_lead_id: lead.id });
    for (let i = 0; i < PER_TOKEN; i++) expect((await page(l.token)).status).to.equal(200);
    const limited = await s.call('GET', publicPath(l.token));
    expectError(limited, 429, 'Too many requests');
    expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 60);
    expect((await page((await link({ crm_lead_id: lead.id })).token)).status, 'another token is not limited').to.equal(200);
  });

  it(`rate-limits the public route per client address: at most ${PER_ADDRESS} requests a minute over every token`, async () => {
    let status = 0;
    let sent = 0;
    while (status !== 429 && sent <= PER_ADDRESS) {
      status = (await s.call('GET', publicPath(`guess${sent}`))).status;
      sent++;
    }
    expect(status).to.equal(429);
  });
});
