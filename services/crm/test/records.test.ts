import { credentials } from '@grpc/grpc-js';
import type { AppError } from '@svc/platform/errors';
import { callUnary } from '@svc/platform/grpc/server';
import { IdentitySigner } from '@svc/platform/identity';
import { type RunningService, startService } from '@svc/platform/service';
import type { TestDatabase } from '@svc/platform/testing';
import { serviceTestEnv } from '@svc/platform/testing-suite';
import { RecordServiceClient, RecordType } from '@svc/proto/crm/v1/records';
import { expect } from 'chai';
import pg from 'pg';
import { canSeeLead, LeadVisibility, leadVisibleSql } from '../src/sales/sales.visibility.js';
import { crmService } from '../src/service.js';

/** crm.v1.RecordService: what tasks (and later other contexts) learn of crm's records, and lead visibility. */
describe('crm.v1.RecordService over gRPC', () => {
  let crm: RunningService;
  let db: TestDatabase;
  let grpc: RecordServiceClient;
  let signer: IdentitySigner;
  let admin: (method: string, path: string, body?: unknown) => Promise<any>;
  let a: { company: any; master: any; alice: any; bob: any; tag: any; person: any; org: any };
  let b: { company: any; tag: any; person: any };
  const leads: Record<string, any> = {};

  const createLead = async (company: any, userId: string, body: unknown) => {
    const token = await signer.sign({ kind: 'integration', companyId: company.id, userId, keyId: userId, permissions: ['*'] });
    const res = await fetch(`${crm.httpUrl}/integrations/external/leads`, {
      method: 'POST',
      headers: { 'x-svc-identity': token, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).to.equal(201);
    return res.json();
  };

  before(async () => {
    const t = await serviceTestEnv();
    db = t.db;
    crm = await startService(crmService, t.env);
    grpc = new RecordServiceClient(crm.grpcAddress, credentials.createInsecure());
    signer = new IdentitySigner(t.env.IDENTITY_TOKEN_SECRET!);
    const token = await signer.sign({ kind: 'admin' });
    admin = async (method, path, body) => {
      const res = await fetch(`${crm.httpUrl}/admin/v1${path}`, {
        method,
        headers: { 'x-svc-identity': token, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return res.json();
    };
    const company = await admin('POST', '/companies', { name: 'A', master_user: { name: 'M', email: 'm@a.test' } });
    a = {
      company,
      master: company.master_user,
      alice: await admin('POST', `/companies/${company.id}/users`, {
        name: 'Alice',
        email: 'alice@a.test',
        avatar: 'https://a.test/alice.png',
      }),
      bob: await admin('POST', `/companies/${company.id}/users`, { name: 'Bob', email: 'bob@a.test' }),
      tag: await admin('POST', `/companies/${company.id}/tags`, { name: 'Hot', color: { background: '#f00', foreground: '#fff' } }),
      person: await admin('POST', `/companies/${company.id}/persons`, { name: 'Pat', contacts: [] }),
      org: await admin('POST', `/companies/${company.id}/organizations`, { name: 'Org', legal_name: 'Org Ltd' }),
    };
    await admin('POST', `/companies/${company.id}/pipelines`, { name: 'P', is_primary: true, stages: [{ name: 'S' }] });
    const other = await admin('POST', '/companies', { name: 'B', master_user: { name: 'MB', email: 'm@b.test' } });
    b = {
      company: other,
      tag: await admin('POST', `/companies/${other.id}/tags`, { name: 'B tag' }),
      person: await admin('POST', `/companies/${other.id}/persons`, { name: 'B person', contacts: [] }),
    };
    leads.team = await createLead(company, a.alice.id, { title: 'Team', visibility: 1 });
    leads.alicePrivate = await createLead(company, a.alice.id, { title: 'Alice private' });
    leads.aliceForBob = await createLead(company, a.alice.id, { title: 'Created by Alice for Bob', responsible_id: a.bob.id });
  });
  after(async () => {
    grpc?.close();
    await crm?.stop();
    await db?.drop();
  });

  const ask = (viewer: string, refs: { type: RecordType; id: string }[], companyId = a.company.id) =>
    callUnary(grpc, grpc.getRecordSummaries, { company_id: companyId, viewer_user_id: viewer, refs });
  const leadRefs = () => Object.values(leads).map((l) => ({ type: RecordType.RECORD_TYPE_LEAD, id: l.id }));
  const titles = (r: { leads: { title: string }[] }) => r.leads.map((l) => l.title).sort();

  it('shows a private lead to its creator, its responsible user and the master user only; a team lead to everyone', async () => {
    expect(titles(await ask(a.alice.id, leadRefs()))).to.deep.equal(['Alice private', 'Created by Alice for Bob', 'Team']);
    expect(titles(await ask(a.bob.id, leadRefs()))).to.deep.equal(['Created by Alice for Bob', 'Team']);
    expect(titles(await ask(a.master.id, leadRefs()))).to.deep.equal(['Alice private', 'Created by Alice for Bob', 'Team']);
    const stranger = await admin('POST', `/companies/${a.company.id}/users`, { name: 'Carl', email: 'carl@a.test' });
    expect(titles(await ask(stranger.id, leadRefs()))).to.deep.equal(['Team']);
  });

  it('answers summaries with the shapes tasks shows, users with their e-mail and state', async () => {
    const r = await ask(a.bob.id, [
      { type: RecordType.RECORD_TYPE_LEAD, id: leads.team.id },
      { type: RecordType.RECORD_TYPE_PERSON, id: a.person.id },
      { type: RecordType.RECORD_TYPE_ORGANIZATION, id: a.org.id },
      { type: RecordType.RECORD_TYPE_TAG, id: a.tag.id },
      { type: RecordType.RECORD_TYPE_USER, id: a.alice.id },
    ]);
    expect(r.leads).to.deep.equal([{ id: leads.team.id, title: 'Team', code: leads.team.code }]);
    expect(r.persons).to.deep.equal([{ id: a.person.id, name: 'Pat' }]);
    expect(r.organizations).to.deep.equal([{ id: a.org.id, name: 'Org', legal_name: 'Org Ltd' }]);
    expect(r.tags).to.deep.equal([{ id: a.tag.id, name: 'Hot', color_background: '#f00', color_foreground: '#fff' }]);
    expect(r.users).to.deep.equal([
      { id: a.alice.id, name: 'Alice', avatar: 'https://a.test/alice.png', email: 'alice@a.test', active: true, archived: false },
    ]);
  });

  it('answers customers with their person or organization; another company`s customer is left out', async () => {
    const ofPerson = await admin('POST', `/companies/${a.company.id}/customers`, { person_id: a.person.id });
    const ofOrg = await admin('POST', `/companies/${a.company.id}/customers`, { organization_id: a.org.id, status: 2 });
    const theirs = await admin('POST', `/companies/${b.company.id}/customers`, { person_id: b.person.id });
    const r = await ask(
      a.bob.id,
      [ofPerson, ofOrg, theirs].map((c) => ({ type: RecordType.RECORD_TYPE_CUSTOMER, id: c.id })),
    );
    expect(r.customers.sort((x, y) => x.code - y.code)).to.deep.equal([
      { id: ofPerson.id, code: ofPerson.code, type: 1, status: 1, person: { id: a.person.id, name: 'Pat' }, organization: undefined },
      {
        id: ofOrg.id,
        code: ofOrg.code,
        type: 2,
        status: 2,
        person: undefined,
        organization: { id: a.org.id, name: 'Org', legal_name: 'Org Ltd' },
      },
    ]);
  });

  it("leaves another company's records, unknown ids, non-UUIDs and deals out of the answer", async () => {
    const r = await ask(a.alice.id, [
      { type: RecordType.RECORD_TYPE_TAG, id: b.tag.id },
      { type: RecordType.RECORD_TYPE_PERSON, id: b.person.id },
      { type: RecordType.RECORD_TYPE_USER, id: b.company.master_user.id },
      { type: RecordType.RECORD_TYPE_PERSON, id: '00000000-0000-7000-8000-000000000000' },
      { type: RecordType.RECORD_TYPE_TAG, id: 'not-a-uuid' },
      { type: RecordType.RECORD_TYPE_DEAL, id: leads.team.id },
      { type: RecordType.RECORD_TYPE_DELIVERY, id: leads.team.id },
    ]);
    expect(r).to.deep.equal({ leads: [], deals: [], persons: [], organizations: [], tags: [], users: [], deliveries: [], customers: [] });
    // The same lead asked through company B is not found either, whoever looks.
    const viaB = await ask(b.company.master_user.id, [{ type: RecordType.RECORD_TYPE_LEAD, id: leads.team.id }], b.company.id);
    expect(viaB.leads).to.deep.equal([]);
  });

  it('refuses a request without a company or viewer as INVALID_ARGUMENT', async () => {
    for (const [company, viewer] of [
      ['nope', a.alice.id],
      [a.company.id, ''],
    ]) {
      try {
        await ask(viewer!, [], company);
        expect.fail('should reject');
      } catch (err) {
        expect((err as AppError).kind).to.equal('invalid');
      }
    }
  });

  it('has a predicate and a SQL condition that agree on every combination', async () => {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query('set search_path = crm');
      const users = [a.master.id, a.alice.id, a.bob.id];
      for (const visibility of [LeadVisibility.private, LeadVisibility.team]) {
        for (const responsibleId of users) {
          for (const createdById of users) {
            for (const viewer of users) {
              const lead = { companyId: a.company.id, visibility, responsibleId, createdById };
              const predicate = canSeeLead(lead, { companyId: a.company.id, userId: viewer, isCompanyMaster: viewer === a.master.id });
              const { rows } = await client.query(
                `select ${leadVisibleSql('l', '$5::uuid')} as visible from (select gen_random_uuid() as id, $1::uuid as company_id,
                  $2::int as visibility, $3::uuid as responsible_id, $4::uuid as created_by_id) l`,
                [a.company.id, visibility, responsibleId, createdById, viewer],
              );
              expect(rows[0].visible, JSON.stringify({ visibility, responsibleId, createdById, viewer })).to.equal(predicate);
            }
          }
        }
      }
    } finally {
      await client.end();
    }
  });
});
