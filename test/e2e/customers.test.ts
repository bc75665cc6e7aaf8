import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import { type CallResult, client } from '../support/client.js';
import { adminOf } from '../support/fixtures.js';
import { type ReceivedRequest, startReceiver } from '../support/receiver.js';
import { type Stack, startStack } from '../support/stack.js';
import { seedTaskTenant, type TaskTenant, tasksApi } from '../support/tasks.js';

const MISSING = '00000000-0000-7000-8000-000000000000';
const CUSTOMER_FIELDS = ['id', 'code', 'type', 'status', 'person', 'organization', 'created_at', 'updated_at'];

/**
 * Customers (issue 23 item 13, decision 0165): winning a deal makes its organization or person a customer (or finds
 * the one it is) and deal.won names it; the admin API lists, reads and creates them; tasks link to them and show them.
 */
describe('customers: made by a won deal, the admin API, linked from tasks', () => {
  let stack: Stack;
  let call: ReturnType<typeof client>['call'];
  let admin: ReturnType<typeof adminOf>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let a: TaskTenant;
  let b: TaskTenant;
  let api: ReturnType<typeof tasksApi>;

  const customers = (tenant: TaskTenant, rest = '', method = 'GET', body?: unknown) =>
    admin(method, `/companies/${tenant.company.id}/customers${rest}`, body);
  const createCustomer = (tenant: TaskTenant, body: unknown) => customers(tenant, '', 'POST', body);
  const expect400 = (res: CallResult, field: string) => {
    expect(res.status, res.text).to.equal(400);
    expect(res.body).to.include({ statusCode: 400, error: 'Bad Request' });
    expect(res.body.message, res.text).to.contain(field);
    expect(
      res.body.details?.fields?.map((f: { field: string }) => f.field),
      res.text,
    ).to.deep.equal([field]);
  };
  const person = async (tenant: TaskTenant, name: string) => {
    const res = await admin('POST', `/companies/${tenant.company.id}/persons`, { name, contacts: [] });
    expect(res.status, res.text).to.equal(201);
    return res.body as { id: string; name: string };
  };
  const organization = async (tenant: TaskTenant, name: string) => {
    const res = await admin('POST', `/companies/${tenant.company.id}/organizations`, { name, legal_name: `${name} Ltd` });
    expect(res.status, res.text).to.equal(201);
    return res.body as { id: string; name: string };
  };
  const deal = async (body: Record<string, unknown>) => {
    const res = await call('POST', '/integrations/external/deals', { token: a.key.key, body: { title: 'Sale', ...body } });
    expect(res.status, res.text).to.equal(201);
    return res.body as { id: string; code: number };
  };
  const win = async (id: string) => {
    const res = await admin('POST', `/companies/${a.company.id}/deals/${id}/win`, { user_id: a.master.id });
    expect(res.status, res.text).to.equal(200);
  };
  /** The deal.won delivered to the receiver about deal `id`. */
  const wonOf = async (id: string) => {
    const got = await eventually(() =>
      receiver.received.find((r: ReceivedRequest) => r.body?.event_key === 'deal.won' && r.body.payload?.deal?.id === id),
    );
    return got.body.payload;
  };
  const total = async (tenant: TaskTenant) => {
    const res = await customers(tenant);
    expect(res.status, res.text).to.equal(200);
    return res.body.total as number;
  };

  before(async () => {
    stack = await startStack();
    call = client(stack.gatewayUrl).call;
    admin = adminOf(call, stack.adminToken);
    receiver = await startReceiver();
    a = await seedTaskTenant(call, stack.adminToken, { rate_limit_per_minute: 100_000 });
    b = await seedTaskTenant(call, stack.adminToken, { rate_limit_per_minute: 100_000 });
    api = tasksApi(call, () => a.key.key);
    const sub = await admin('POST', `/companies/${a.company.id}/webhooks`, {
      url: receiver.url(`/${a.company.id}`),
      events: ['deal.won', 'task.completed'],
    });
    expect(sub.status, sub.text).to.equal(201);
  });
  after(async () => {
    await receiver?.close();
    await stack?.stop();
  });

  describe('winning a deal', () => {
    it('makes the deal`s person a customer and deal.won names it; a second won deal of that person finds the same one', async () => {
      const ana = await person(a, 'Ana Buyer');
      const first = await deal({ persons_id: [ana.id] });
      await win(first.id);
      const won = await wonOf(first.id);
      expect(won.customer_id).to.be.a('string');
      const read = await customers(a, `/${won.customer_id}`);
      expect(read.status, read.text).to.equal(200);
      expect(read.body).to.have.all.keys(CUSTOMER_FIELDS);
      expect(read.body).to.deep.include({
        id: won.customer_id,
        type: 1,
        status: 1,
        person: { id: ana.id, name: 'Ana Buyer' },
        organization: null,
      });
      const before = await total(a);
      const second = await deal({ persons_id: [ana.id] });
      await win(second.id);
      expect((await wonOf(second.id)).customer_id).to.equal(won.customer_id);
      expect(await total(a)).to.equal(before);
      const byPerson = await customers(a, `?person_id=${ana.id}`);
      expect(byPerson.body.records.map((c: { id: string }) => c.id)).to.deep.equal([won.customer_id]);
    });

    it('deals of one person won at the same time make one customer, named by every deal.won', async () => {
      const kim = await person(a, 'Kim');
      const sales = await Promise.all([1, 2, 3, 4].map(() => deal({ persons_id: [kim.id] })));
      await Promise.all(sales.map((d) => win(d.id)));
      const named = new Set(await Promise.all(sales.map(async (d) => (await wonOf(d.id)).customer_id)));
      const listed = (await customers(a, `?person_id=${kim.id}`)).body.records;
      expect(listed).to.have.length(1);
      expect([...named]).to.deep.equal([listed[0].id]);
    });

    it('makes the deal`s organization the customer when it has one, before its person', async () => {
      const org = await organization(a, 'Acme');
      const bob = await person(a, 'Bob Buyer');
      const sale = await deal({ organization_id: org.id, persons_id: [bob.id] });
      await win(sale.id);
      const won = await wonOf(sale.id);
      const read = await customers(a, `/${won.customer_id}`);
      expect(read.body).to.deep.include({
        type: 2,
        status: 1,
        person: null,
        organization: { id: org.id, name: 'Acme', legal_name: 'Acme Ltd' },
      });
      expect((await customers(a, `?person_id=${bob.id}`)).body.total).to.equal(0);
    });

    it('a deal won by PUT (status 2) makes its person a customer too, the person the PUT left it', async () => {
      const [hal, ian] = [await person(a, 'Hal'), await person(a, 'Ian')];
      const sale = await deal({ persons_id: [hal.id] });
      const res = await call('PUT', `/integrations/external/deals/${sale.id}`, {
        token: a.key.key,
        body: { title: 'Sale', status: 2, persons_id: [{ person_id: hal.id, delete: true }, { person_id: ian.id }] },
      });
      expect(res.status, res.text).to.equal(200);
      expect((await customers(a, `?person_id=${hal.id}`)).body.total).to.equal(0);
      const made = (await customers(a, `?person_id=${ian.id}`)).body.records;
      expect(made).to.have.length(1);
      expect(made[0]).to.deep.include({ type: 1, status: 1, person: { id: ian.id, name: 'Ian' } });
    });

    it('names no customer when the deal has neither person nor organization', async () => {
      const before = await total(a);
      const sale = await deal({});
      await win(sale.id);
      expect((await wonOf(sale.id)).customer_id).to.equal(null);
      expect(await total(a)).to.equal(before);
    });

    it('finds a customer the admin API made, and makes an inactive one active again', async () => {
      const cleo = await person(a, 'Cleo');
      const made = await createCustomer(a, { person_id: cleo.id, status: 2 });
      expect(made.status, made.text).to.equal(201);
      expect(made.body.status).to.equal(2);
      const sale = await deal({ persons_id: [cleo.id] });
      await win(sale.id);
      expect((await wonOf(sale.id)).customer_id).to.equal(made.body.id);
      expect((await customers(a, `/${made.body.id}`)).body.status).to.equal(1);
    });
  });

  describe('the admin API', () => {
    it('POST makes a customer of a person (201) or finds the one it is (200); codes follow per company; GET by id or code', async () => {
      const dora = await person(a, 'Dora');
      const made = await createCustomer(a, { person_id: dora.id });
      expect(made.status, made.text).to.equal(201);
      expect(made.body).to.have.all.keys(CUSTOMER_FIELDS);
      expect(made.body).to.deep.include({ type: 1, status: 1, person: { id: dora.id, name: 'Dora' }, organization: null });
      expect(made.body.code).to.be.a('number');
      const again = await createCustomer(a, { person_id: dora.id.toUpperCase() });
      expect(again.status, again.text).to.equal(200);
      expect(again.body).to.deep.equal(made.body);
      const org = await organization(a, 'Next Org');
      const next = await createCustomer(a, { organization_id: org.id });
      expect(next.status, next.text).to.equal(201);
      expect(next.body).to.deep.include({ code: made.body.code + 1, type: 2, person: null });
      expect((await customers(a, `/${made.body.code}`)).body).to.deep.equal(made.body);
      expect((await customers(a, `/${made.body.id}`)).body).to.deep.equal(made.body);
      const theirs = await createCustomer(b, { person_id: (await person(b, 'Dora of B')).id });
      expect(theirs.status, theirs.text).to.equal(201);
      expect(theirs.body.code).to.equal(1);
    });

    it('refuses a body without the party, with both, or naming an unknown or another company`s one: 400 naming the field, nothing written', async () => {
      const before = await total(a);
      const own = await person(a, 'Eve');
      expect400(await createCustomer(a, {}), 'person_id');
      expect400(await createCustomer(a, { person_id: own.id, organization_id: a.organization.id }), 'organization_id');
      expect400(await createCustomer(a, { person_id: MISSING }), 'person_id');
      expect400(await createCustomer(a, { person_id: b.person.id }), 'person_id');
      expect400(await createCustomer(a, { organization_id: b.organization.id }), 'organization_id');
      expect400(await createCustomer(a, { organization_id: 'nope' }), 'organization_id');
      expect400(await createCustomer(a, { person_id: own.id, status: 3 }), 'status');
      expect400(await createCustomer(a, { person_id: own.id, code: 7 }), 'code');
      expect(await total(a)).to.equal(before);
    });

    it('another company`s customer, an unknown one and codes no customer can have are 404', async () => {
      const theirs = await createCustomer(b, { organization_id: b.organization.id });
      expect(theirs.status, theirs.text).to.equal(201);
      for (const ref of [theirs.body.id, MISSING, '2147483648', '99999999999', 'x', '0']) {
        const res = await customers(a, `/${ref}`);
        expect(res.status, `${ref}: ${res.text}`).to.equal(404);
        expect(res.body).to.deep.equal({ statusCode: 404, message: 'Customer not found', error: 'Not Found' });
      }
      expect((await admin('GET', `/companies/${MISSING}/customers`)).status).to.equal(404);
      const withKey = await call('GET', `/admin/v1/companies/${a.company.id}/customers`, { token: a.key.key });
      expect(withKey.status, withKey.text).to.equal(401);
      const listed = await customers(a, `?organization_id=${b.organization.id}`);
      expect(listed.body.total).to.equal(0);
    });

    it('lists newest first with skip/take or cursor paging; take is capped; filters by type and status', async () => {
      const page = await customers(a, '?take=2');
      expect(page.status, page.text).to.equal(200);
      expect(page.body).to.have.all.keys('total', 'records', 'next_cursor');
      const all = (await customers(a, '?take=1000')).body;
      expect(all.records.length).to.equal(all.total).and.to.be.greaterThan(3);
      const codes = all.records.map((c: { code: number }) => c.code);
      expect(codes).to.deep.equal([...codes].sort((x, y) => y - x));
      expect(page.body.records).to.deep.equal(all.records.slice(0, 2));
      const next = await customers(a, `?take=2&cursor=${page.body.next_cursor}`);
      expect(next.body.records).to.deep.equal(all.records.slice(2, 4));
      expect((await customers(a, '?skip=1&take=1')).body.records).to.deep.equal(all.records.slice(1, 2));
      const orgs = (await customers(a, '?type=2')).body;
      expect(orgs.records.length).to.be.greaterThan(0);
      expect(orgs.records.every((c: { type: number }) => c.type === 2)).to.equal(true);
      expect(orgs.total).to.equal(all.records.filter((c: { type: number }) => c.type === 2).length);
      expect400(await customers(a, '?type=3'), 'type');
      expect400(await customers(a, '?take=0'), 'take');
      expect400(await customers(a, '?cursor=garbage'), 'cursor');
      expect400(await customers(a, '?colour=red'), 'colour');
    });
  });

  describe('tasks', () => {
    it('link a customer of the company and show {id, code, type, status, person, organization}, in the detail, the list and task.completed', async () => {
      const fay = await person(a, 'Fay');
      const customer = (await createCustomer(a, { person_id: fay.id })).body;
      const summary = { id: customer.id, code: customer.code, type: 1, status: 1, person: { id: fay.id, name: 'Fay' }, organization: null };
      const res = await api.create({ crm_task_type_id: a.types.call.id, title: 'Call the customer', crm_customer_id: customer.id });
      expect(res.status, res.text).to.equal(201);
      expect(res.body.crm_customer_id).to.equal(customer.id);
      expect(res.body.crm_customer).to.deep.equal(summary);
      expect((await api.get(res.body.id)).body.crm_customer).to.deep.equal(summary);
      const listed = await api.list({ crm_customer_id: customer.id });
      expect(listed.body.records.map((t: { id: string }) => t.id)).to.deep.equal([res.body.id]);
      expect(listed.body.records[0].crm_customer).to.deep.equal(summary);
      const done = await api.update(res.body.id, { crm_task_stage_id: a.stages.done.id });
      expect(done.status, done.text).to.equal(200);
      const event = await eventually(() =>
        receiver.received.find((r) => r.body?.event_key === 'task.completed' && r.body.payload?.task?.id === res.body.id),
      );
      expect(event.body.payload.task.crm_customer).to.deep.equal(summary);
    });

    it('show an organization customer with its organization, and take a customer on update in place of another link', async () => {
      const org = await organization(a, 'Task Org');
      const customer = (await createCustomer(a, { organization_id: org.id })).body;
      const res = await api.create({ crm_task_type_id: a.types.call.id, title: 'Linked later', crm_person_id: a.person.id });
      expect(res.status, res.text).to.equal(201);
      const updated = await api.update(res.body.id, { crm_customer_id: customer.id });
      expect(updated.status, updated.text).to.equal(200);
      expect(updated.body.crm_customer).to.deep.equal({
        id: customer.id,
        code: customer.code,
        type: 2,
        status: 1,
        person: null,
        organization: { id: org.id, name: 'Task Org', legal_name: 'Task Org Ltd' },
      });
    });

    it('refuse an unknown or another company`s customer alike: 400 on crm_customer_id, nothing written', async () => {
      const theirs = (await createCustomer(b, { person_id: (await person(b, 'Gus of B')).id })).body;
      const before = (await api.list()).body.total;
      const messages = new Set<string>();
      for (const id of [theirs.id, MISSING]) {
        const res = await api.create({ crm_task_type_id: a.types.call.id, title: 'Refused', crm_customer_id: id });
        expect(res.status, res.text).to.equal(400);
        messages.add(res.body.message);
      }
      expect([...messages]).to.deep.equal(['crm_customer_id: customer not found']);
      expect((await api.list()).body.total).to.equal(before);
      const own = (await api.create({ crm_task_type_id: a.types.call.id, title: 'Own' })).body;
      const res = await api.update(own.id, { crm_customer_id: theirs.id });
      expect(res.status, res.text).to.equal(400);
      expect((await api.get(own.id)).body.crm_customer_id).to.equal(null);
    });
  });
});
