import { expect } from 'chai';
import type { CallResult } from '../support/client.js';
import { expectErrorBody } from '../support/errors.js';
import { openStack } from '../support/session.js';
import type { Stack } from '../support/stack.js';
import { seedTaskTenant, type TaskTenant } from '../support/tasks.js';

/**
 * Numbers beyond the range of the column that stores them (issue 23 item 2): a code no record can have is a 404,
 * any other number a 400 naming its field; never a 500, and nothing written.
 */
describe('numbers beyond a column’s range (through the gateway)', () => {
  let stack: Stack;
  let call: Awaited<ReturnType<typeof openStack>>['call'];
  let db: Awaited<ReturnType<typeof openStack>>['db'];
  let t: TaskTenant;
  let lead: { id: string; code: number };
  const ext = (method: string, path: string, body?: unknown) => call(method, `/integrations/external${path}`, { token: t.key.key, body });
  const adm = (method: string, path: string, body?: unknown) =>
    call(method, `/admin/v1/companies/${t.company.id}${path}`, { token: stack.adminToken, body });
  const expectStatus = (res: CallResult, status: number, what: string) => {
    expect(res.status, `${what}: ${res.text}`).to.equal(status);
    expectErrorBody(res, what);
  };
  const expect400On = (res: CallResult, field: string, what: string) => {
    expectStatus(res, 400, what);
    expect(
      res.body.details.fields.map((f: { field: string }) => f.field),
      what,
    ).to.include(field);
  };
  // Beyond int4 (the code column), up to the ten digits a code may be written with, and beyond those.
  const codes = ['2147483648', '4294967296', '9999999999', '10000000000', '99999999999999999999'];

  before(async () => {
    ({ stack, call, db } = await openStack());
    t = await seedTaskTenant(call, stack.adminToken, { rate_limit_per_minute: 100_000 });
    lead = (await ext('POST', '/leads', { title: 'Lead' })).body;
    expect(lead.code).to.be.a('number');
  });
  after(async () => {
    await db?.end();
    await stack?.stop();
  });

  it('a lead or deal code beyond int4 is a 404 on GET and PUT, as an unknown code is', async () => {
    for (const kind of ['leads', 'deals']) {
      for (const code of ['2147483647', ...codes]) {
        expectStatus(await ext('GET', `/${kind}/${code}`), 404, `GET /${kind}/${code}`);
        expectStatus(await ext('PUT', `/${kind}/${code}`, { title: 'x' }), 404, `PUT /${kind}/${code}`);
      }
    }
    expect((await ext('GET', `/leads/${lead.code}`)).status).to.equal(200);
  });

  it('a skip beyond the lists’ offsets is a 400 naming skip on every list that pages with it', async () => {
    for (const path of ['/leads', '/deals', '/custom-fields', `/files?crm_lead_id=${lead.id}`, `/proposals?crm_lead_id=${lead.id}`]) {
      const sep = path.includes('?') ? '&' : '?';
      expect400On(await ext('GET', `${path}${sep}skip=2147483648`), 'skip', `${path} skip`);
      expect((await ext('GET', `${path}${sep}skip=2147483647`)).status, path).to.equal(200);
    }
  });

  it('the admin routes that take a code (actions of leads and deals, deliveries, contracts) answer 404 beyond int4', async () => {
    const user_id = t.user.id;
    for (const code of codes) {
      expectStatus(await adm('POST', `/leads/${code}/win`, { user_id }), 404, `win lead ${code}`);
      expectStatus(await adm('POST', `/deals/${code}/win`, { user_id }), 404, `win deal ${code}`);
      expectStatus(await adm('POST', `/leads/${code}/lose`, { user_id }), 404, `lose lead ${code}`);
      expectStatus(await adm('PUT', `/deals/${code}/quality`, { user_id, quality_rating: 3 }), 404, `quality deal ${code}`);
      expectStatus(await adm('GET', `/deliveries/${code}`), 404, `delivery ${code}`);
      expectStatus(await adm('GET', `/contracts/${code}`), 404, `contract ${code}`);
    }
  });

  it('proposal prices beyond their numeric columns are a 400 naming the field, and no proposal is written', async () => {
    const before = Number((await db.query('select count(*) from crm.proposals where company_id = $1', [t.company.id])).rows[0].count);
    const base = { crm_lead_id: lead.id, title: 'Big' };
    expect400On(
      await ext('POST', '/proposals', { ...base, items: [{ name: 'x', quantity: 1, unit_price: 1e12 }] }),
      'items.0.unit_price',
      'unit_price',
    );
    expect400On(
      await ext('POST', '/proposals', { ...base, items: [{ name: 'x', quantity: 1e9, unit_price: 999_999_999_999.99 }] }),
      'items.0.quantity',
      'line total',
    );
    const big = { name: 'x', quantity: 1000, unit_price: 99_999_999_999.99 };
    expect400On(await ext('POST', '/proposals', { ...base, items: [big, big] }), 'items', 'subtotal');
    expect400On(
      await ext('POST', '/proposals', { ...base, discount_type: 'amount', discount_value: 1e12 }),
      'discount_value',
      'discount_value',
    );
    const after = Number((await db.query('select count(*) from crm.proposals where company_id = $1', [t.company.id])).rows[0].count);
    expect(after).to.equal(before);
    // The largest line a column holds is accepted.
    const ok = await ext('POST', '/proposals', { ...base, items: [{ name: 'x', quantity: 100, unit_price: 999_999_999_999.99 }] });
    expect(ok.status, ok.text).to.equal(201);
    expect(ok.body.total).to.equal(99_999_999_999_999);
  });

  it('a count of the chat import beyond int4 is a 400 naming it (chat, admin)', async () => {
    const res = await adm('POST', '/chats', {
      channel_type: 'WHATSAPP',
      contact_phone: '5511999990000',
      unread_count: 2 ** 31,
    });
    expect400On(res, 'unread_count', 'unread_count');
  });
});
