import { nativePool } from '@svc/platform/db/native';
import { createOrm, migrate, type Orm } from '@svc/platform/db/orm';
import { createLogger } from '@svc/platform/logging';
import { createTestDatabase, type TestDatabase } from '@svc/platform/testing';
import { expect } from 'chai';
import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { dbDefinition } from '../src/db.js';
import { LeadStore } from '../src/leads/lead.store.js';
import { LeadViewFolder } from '../src/leads/lead.views.js';

/**
 * The view folder (decision 0012): views queued (by an older crm; GETs now record theirs directly, 0015) reach
 * leads.views_count and lead_views exactly once, and a GET counts them meanwhile.
 */
describe('lead views: queue, fold, count', () => {
  let db: TestDatabase;
  let orms: Orm[];
  let pools: Pool[];
  let store: LeadStore;
  const company = uuidv7();
  const user = uuidv7();
  const leads = [uuidv7(), uuidv7(), uuidv7()];
  const logger = createLogger('crm-test', 'silent');

  const view = (leadId: string) => store.detail(pools[0]!, company, leadId, true, uuidv7(), user);
  const queue = (leadId: string) =>
    pools[0]!.query('insert into lead_view_queue (id, company_id, lead_id, user_id, viewed_at) values ($1, $2, $3, $4, now())', [
      uuidv7(),
      company,
      leadId,
      user,
    ]);
  const counts = async () =>
    (
      await pools[0]!.query(
        `select l.id, l.views_count counted, (select count(*)::int from lead_view_queue q where q.lead_id = l.id) queued,
                (select count(*)::int from lead_views v where v.lead_id = l.id) history
         from leads l order by l.id`,
      )
    ).rows;

  before(async () => {
    db = await createTestDatabase();
    // Two "replicas": two ORMs with their own pools on one database.
    orms = await Promise.all(
      [0, 1].map(() => createOrm({ url: db.url, schema: 'crm', entities: dbDefinition.entities, migrations: dbDefinition.migrations })),
    );
    await migrate(orms[0]!, 'crm');
    pools = await Promise.all(orms.map((o) => nativePool(o)));
    store = new LeadStore(orms[0]!);
    const pipeline = uuidv7();
    const stage = uuidv7();
    await pools[0]!.query(
      `insert into companies (id, name, master_user_id, created_at) values ($1, 'c', $2, now());
       insert into users (id, company_id, name, email, active, archived, created_at) values ($2, $1, 'u', 'u@x.test', true, false, now());
       insert into pipelines (id, company_id, name, is_primary, requires_quality_reason, created_at) values ($3, $1, 'p', true, false, now());
       insert into stages (id, company_id, pipeline_id, name, position) values ($4, $1, $3, 's', 1);`.replace(
        /\$(\d)/g,
        (_, n) => `'${[company, user, pipeline, stage][Number(n) - 1]}'`,
      ),
    );
    for (const [i, id] of leads.entries()) {
      await pools[0]!.query(
        `insert into leads (id, company_id, code, title, pipeline_id, stage_id, responsible_id, created_by_id, status, visibility, created_at, updated_at)
         values ($1, $2, $3, 'l', $4, $5, $6, $6, 1, 0, now(), now())`,
        [id, company, i + 1, pipeline, stage, user],
      );
    }
  });
  after(async () => {
    await Promise.all((orms ?? []).map((o) => o.close(true)));
    await db?.drop();
  });

  it('a GET counts the folded views, the queued ones and itself', async () => {
    await queue(leads[0]!);
    const second = await view(leads[0]!);
    expect(second!._viewsCount).to.equal(2);
    await new LeadViewFolder(Promise.resolve(pools[0]!), store, logger).foldAll();
    expect((await view(leads[0]!))!._viewsCount).to.equal(3);
  });

  it('two replicas folding at once count every view exactly once', async () => {
    await Promise.all(Array.from({ length: 300 }, (_, i) => queue(leads[i % 3]!)));
    const folders = pools.map((p) => new LeadViewFolder(Promise.resolve(p), store, logger));
    await Promise.all([...folders.map((f) => f.foldAll()), ...Array.from({ length: 30 }, (_, i) => view(leads[i % 3]!))]);
    await folders[0]!.foldAll();
    const rows = await counts();
    expect(rows.map((r) => r.queued)).to.deep.equal([0, 0, 0]);
    // lead 0 had 3 views from the first test; every lead got 100 queued + 10 GETs here.
    expect(rows.map((r) => r.counted)).to.deep.equal([113, 110, 110]);
    expect(rows.map((r) => r.history)).to.deep.equal([113, 110, 110]);
  });

  it('a failed fold leaves the views queued and still counted', async () => {
    await queue(leads[1]!);
    const broken = { foldViews: (db: Pool) => db.query('select 1 / 0 as folded').then(() => 0) };
    await new LeadViewFolder(Promise.resolve(pools[0]!), broken, logger).foldAll().catch(() => undefined);
    const row = (await counts())[1];
    expect(row).to.include({ counted: 110, queued: 1 });
    expect((await view(leads[1]!))!._viewsCount).to.equal(112);
  });
});
