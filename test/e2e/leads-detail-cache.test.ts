import { randomUUID } from 'node:crypto';
import { LeadStore } from '@svc/crm';
import { IDENTITY_HEADER, IdentitySigner } from '@svc/platform/identity';
import { expect } from 'chai';
import type pg from 'pg';
import type { client } from '../support/client.js';
import { type adminOf, seedTenant, type Tenant } from '../support/fixtures.js';
import { spawnEntry, waitReady } from '../support/processes.js';
import { openStack } from '../support/session.js';
import { freePort, type Stack } from '../support/stack.js';

/**
 * Decision 0015: crm caches assembled lead details and checks them against versions Postgres triggers bump. Two crm
 * processes on one database (the stack's, behind the gateway, and a second one called directly) must show every
 * change at once, whichever process made it or none (a direct SQL write).
 */
describe('GET lead detail cache: current across crm processes', () => {
  let stack: Stack;
  let call: ReturnType<typeof client>['call'];
  let admin: ReturnType<typeof adminOf>;
  let t: Tenant;
  let db: pg.Client;
  let second: ReturnType<typeof spawnEntry>;
  let secondUrl: string;
  let signer: IdentitySigner;
  const ref: Record<string, any> = {};

  const adminCreate = async (path: string, body: unknown) => {
    const res = await admin('POST', `/companies/${t.company.id}/${path}`, body);
    expect(res.status, res.text).to.equal(201);
    return res.body;
  };
  const create = async (body: Record<string, unknown>) => {
    const res = await call('POST', '/integrations/external/leads', { token: t.key.key, body: { title: 'Cached', ...body } });
    expect(res.status, res.text).to.equal(201);
    return res.body as { id: string; code: number };
  };
  /** Through the gateway to the stack's crm. */
  const viaFirst = async (leadRef: string | number, token = t.key.key) => call('GET', `/integrations/external/leads/${leadRef}`, { token });
  /** Straight to the second crm process, as the key's creator (or `userId`). */
  const viaSecond = async (leadRef: string | number, userId: string = t.user.id) => {
    const token = await signer.sign({ kind: 'integration', companyId: t.company.id, userId, keyId: t.key.id, permissions: ['*'] });
    const res = await fetch(`${secondUrl}/integrations/external/leads/${leadRef}`, { headers: { [IDENTITY_HEADER]: token } });
    const text = await res.text();
    return { status: res.status, text, body: text ? JSON.parse(text) : undefined };
  };
  const detailBoth = async (leadRef: string | number) => {
    const a = await viaFirst(leadRef);
    const b = await viaSecond(leadRef);
    expect(a.status, a.text).to.equal(200);
    expect(b.status, b.text).to.equal(200);
    return [a.body, b.body];
  };
  /** What both processes answer, less what each read changes (its view count). */
  const same = (a: any, b: any) => {
    const { views_count: _a, stage_durations: da, ...restA } = a;
    const { views_count: _b, stage_durations: db_, ...restB } = b;
    expect(restB).to.deep.equal(restA);
    expect(db_.map((d: any) => d.stage_id)).to.deep.equal(da.map((d: any) => d.stage_id));
  };
  const sql = (text: string, values: unknown[] = []) => db.query(text, values);

  before(async () => {
    ({ stack, call, admin, db } = await openStack());
    signer = new IdentitySigner(stack.env.IDENTITY_TOKEN_SECRET!);
    const ports = { HTTP_PORT: String(await freePort()), GRPC_PORT: String(await freePort()) };
    secondUrl = `http://127.0.0.1:${ports.HTTP_PORT}`;
    second = spawnEntry('services/crm/src/main.ts', { ...stack.env, ...ports, LOG_LEVEL: 'warn' });
    await waitReady(secondUrl);
    t = await seedTenant(call, stack.adminToken);
    ref.hot = await adminCreate('tags', { name: 'Hot' });
    ref.ana = await adminCreate('persons', { name: 'Ana', contacts: [{ type: 1, value: 'ana@example.test' }] });
    ref.acme = await adminCreate('organizations', { name: 'Acme' });
    ref.segment = await adminCreate('custom-fields', { entity: 'lead', name: 'Segment', type: 'select', options: ['SMB', 'Enterprise'] });
    ref.role = await adminCreate('follower-roles', { name: 'Helper' });
    ref.colleague = await adminCreate('users', { name: 'Colleague', email: `colleague-${randomUUID()}@example.test` });
  });
  after(async () => {
    await second?.stop();
    await db?.end();
    await stack?.stop();
  });

  it('shows every change of the lead and of what it shows at once, in both processes, by id and by code', async () => {
    const lead = await create({
      tags: [ref.hot.id],
      persons_id: [ref.ana.id],
      organization_id: ref.acme.id,
      custom_fields: [{ id: ref.segment.id, option_id: ref.segment.options[0].id }],
      followers: [{ user_id: ref.colleague.id, role_id: ref.role.id }],
    });
    let dealId: string | undefined;
    // Cached in both processes, under both references.
    for (const r of [lead.id, lead.code, lead.id, lead.code]) same(...((await detailBoth(r)) as [any, any]));

    const changes: [string, () => Promise<unknown>, (d: any) => void][] = [
      [
        'tag name',
        () => sql('update crm.tags set name = $2 where id = $1', [ref.hot.id, 'Hotter']),
        (d) => expect(d.tags[0].name).to.equal('Hotter'),
      ],
      [
        'person name',
        () => sql('update crm.persons set name = $2 where id = $1', [ref.ana.id, 'Ana Maria']),
        (d) => expect(d.participants[0].person.name).to.equal('Ana Maria'),
      ],
      [
        "a person's new contact",
        () =>
          sql(
            `insert into crm.person_contacts (id, company_id, person_id, type, value, "primary") values ($1, $2, $3, 2, '+5511999', false)`,
            [randomUUID(), t.company.id, ref.ana.id],
          ),
        (d) => expect(JSON.stringify(d.participants[0])).to.contain('+5511999'),
      ],
      [
        'stage name',
        () => sql('update crm.stages set name = $2 where id = $1', [t.pipeline.stages[0].id, 'Fresh']),
        (d) => {
          expect(d.stage.name).to.equal('Fresh');
          expect(d.pipeline_stages[0].name).to.equal('Fresh');
          expect(d.stage_durations[0].stage_name).to.equal('Fresh');
        },
      ],
      [
        'a new stage of its pipeline',
        () =>
          sql(`insert into crm.stages (id, company_id, pipeline_id, name, position) values ($1, $2, $3, 'Late', 99)`, [
            randomUUID(),
            t.company.id,
            t.pipeline.id,
          ]),
        (d) => expect(d.pipeline_stages.map((s: any) => s.name)).to.include('Late'),
      ],
      [
        'pipeline name',
        () => sql('update crm.pipelines set name = $2 where id = $1', [t.pipeline.id, 'Funnel']),
        (d) => expect(d.stage.pipeline.name).to.equal('Funnel'),
      ],
      [
        'responsible user name (admin API)',
        () => admin('PATCH', `/companies/${t.company.id}/users/${t.user.id}`, { name: 'Integrator 2' }),
        (d) => expect(d.responsible.name).to.equal('Integrator 2'),
      ],
      [
        'organization name',
        () => sql('update crm.organizations set name = $2 where id = $1', [ref.acme.id, 'Acme Inc']),
        (d) => expect(d.organization.name).to.equal('Acme Inc'),
      ],
      [
        'custom field name and option value',
        () =>
          sql('update crm.custom_fields set name = $2 where id = $1', [ref.segment.id, 'Tier']).then(() =>
            sql('update crm.custom_field_options set value = $2 where id = $1', [ref.segment.options[0].id, 'Small']),
          ),
        (d) => expect([d.custom_fields[0].field_name, d.custom_fields[0].answers[0].option_value]).to.deep.equal(['Tier', 'Small']),
      ],
      [
        'follower role name',
        () => sql('update crm.named_items set name = $2 where id = $1', [ref.role.id, 'Assistant']),
        (d) => expect(d.followers[0].role.name).to.equal('Assistant'),
      ],
      [
        'title (PUT through the first process)',
        () => call('PUT', `/integrations/external/leads/${lead.id}`, { token: t.key.key, body: { title: 'Renamed' } }),
        (d) => expect(d.title).to.equal('Renamed'),
      ],
      [
        'a move (admin action)',
        () => admin('POST', `/companies/${t.company.id}/leads/${lead.id}/move`, { user_id: t.user.id, stage_id: t.pipeline.stages[1].id }),
        (d) => {
          expect(d.stage.id).to.equal(t.pipeline.stages[1].id);
          expect(d.stage_durations).to.have.length(2);
        },
      ],
      [
        'a removed tag (admin action)',
        () => admin('DELETE', `/companies/${t.company.id}/leads/${lead.id}/tags/${ref.hot.id}?user_id=${t.user.id}`),
        (d) => expect(d.tags).to.deep.equal([]),
      ],
      [
        'a note (direct SQL)',
        () =>
          sql(
            `insert into crm.lead_notes (id, company_id, lead_id, content, is_pinned, automatic, created_at) values ($1, $2, $3, 'n', false, false, now())`,
            [randomUUID(), t.company.id, lead.id],
          ),
        (d) => expect(d.associations_count.notes).to.equal(1),
      ],
      [
        'a win with a deal (admin action)',
        async () => {
          const res = await admin('POST', `/companies/${t.company.id}/leads/${lead.id}/win`, {
            user_id: t.user.id,
            deal: { title: 'Contract', value: 100 },
          });
          dealId = res.body?.deals?.[0]?.id;
          return res;
        },
        (d) => {
          expect(d.status).to.equal(2);
          expect(d.deals.map((x: any) => [x.id, x.title, x.value])).to.deep.equal([[dealId, 'Contract', 100]]);
          expect(d.associations_count.deals).to.equal(1);
        },
      ],
      [
        "the deal's title (PUT /deals through the first process)",
        () => call('PUT', `/integrations/external/deals/${dealId}`, { token: t.key.key, body: { title: 'Contract B' } }),
        (d) => expect(d.deals[0].title).to.equal('Contract B'),
      ],
      [
        "the deal's value (direct SQL)",
        () => sql('update crm.deals set value = 250 where id = $1', [dealId]),
        (d) => expect(d.deals[0].value).to.equal(250),
      ],
      [
        "the deal's stage (admin action on the deal)",
        () => admin('POST', `/companies/${t.company.id}/deals/${dealId}/move`, { user_id: t.user.id, stage_id: t.pipeline.stages[1].id }),
        (d) => expect(d.deals[0].stage.id).to.equal(t.pipeline.stages[1].id),
      ],
    ];
    for (const [what, change, check] of changes) {
      const res = (await change()) as { status?: number; text?: string } | undefined;
      if (res && typeof res.status === 'number') expect(res.status, `${what}: ${res.text}`).to.be.within(200, 299);
      // The second process first (it did not make any of these changes), then the first, by id and by code.
      for (const r of [lead.id, lead.code]) {
        const b = await viaSecond(r);
        const a = await viaFirst(r);
        expect(b.status, b.text).to.equal(200);
        check(b.body);
        check(a.body);
        same(a.body, b.body);
      }
    }
  });

  it('counts every view whichever process serves it, concurrent ones included', async () => {
    const lead = await create({});
    const counts: number[] = [];
    for (let i = 0; i < 4; i++) {
      counts.push((await viaFirst(lead.id)).body.views_count, (await viaSecond(lead.code)).body.views_count);
    }
    expect(counts).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8]);
    const burst = await Promise.all(Array.from({ length: 24 }, (_, i) => (i % 2 ? viaSecond(lead.id) : viaFirst(lead.id))));
    expect(burst.map((r) => r.status)).to.deep.equal(Array(24).fill(200));
    for (const r of burst) expect(r.body.views_count).to.be.within(9, 32);
    expect((await viaSecond(lead.id)).body.views_count).to.equal(33);
  });

  it('a cached lead that turns private is refused at once to a user who may no longer see it, and no view is recorded', async () => {
    const colleagueKey = (
      await admin('POST', `/companies/${t.company.id}/keys`, { created_by_user_id: ref.colleague.id, permissions: ['crm/lead.read'] })
    ).body.key as string;
    const lead = await create({ visibility: 1 });
    expect((await viaFirst(lead.id, colleagueKey)).status).to.equal(200);
    expect((await viaSecond(lead.id, ref.colleague.id)).status).to.equal(200);
    await sql('update crm.leads set visibility = 0 where id = $1', [lead.id]);
    expect((await viaFirst(lead.id, colleagueKey)).status).to.equal(403);
    expect((await viaSecond(lead.id, ref.colleague.id)).status).to.equal(403);
    expect((await viaSecond(lead.code, ref.colleague.id)).status).to.equal(403);
    // The creator still sees it: 2 views by the colleague before, this one.
    expect((await viaSecond(lead.id)).body.views_count).to.equal(3);
  });

  it("another company's cached lead is a 404, by id and by code", async () => {
    const lead = await create({});
    expect((await viaFirst(lead.id)).status).to.equal(200);
    const other = await seedTenant(call, stack.adminToken);
    expect((await viaFirst(lead.id, other.key.key)).status).to.equal(404);
    expect((await viaFirst(lead.code, other.key.key)).status).to.equal(404);
  });

  it('every table the detail reads has the triggers that bump the versions', async () => {
    const leadSql = new LeadStore(stack.services.crm.ctx.orm);
    const tables = new Set([...leadSql.detailOf.text.matchAll(/\b(?:from|join)\s+(?!lateral\b)([a-z_]+)(?=\s)/g)].map((m) => m[1]!));
    // Read live by the check statement on every GET, never from the cache.
    for (const live of ['leads', 'companies', 'detail_catalog_versions', 'lead_view_queue']) tables.delete(live);
    // Written only in the transaction that updates its proposal's row (version and updated_at grow), whose triggers bump.
    tables.delete('proposal_items');
    expect(tables.size).to.be.greaterThan(10);
    const { rows } = await sql(
      `select c.relname as table, array_agg(t.tgname::text order by t.tgname) as triggers from pg_trigger t
       join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = 'crm' and not t.tgisinternal group by c.relname`,
    );
    const byTable = new Map(rows.map((r) => [r.table as string, r.triggers as string[]]));
    for (const table of tables) {
      expect(byTable.get(table), table).to.include.members([`${table}_detail_delete`, `${table}_detail_insert`, `${table}_detail_update`]);
    }
    expect(byTable.get('leads')).to.include('leads_detail_version');
  });
});
