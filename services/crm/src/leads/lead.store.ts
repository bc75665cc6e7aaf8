import type { MikroORM } from '@mikro-orm/postgresql';
import { tableOf } from '@svc/platform/db/entity-table';
import { EntityColumns, run, type Statement, statement } from '@svc/platform/db/native';
import type { Pool } from 'pg';
import { SALES_RECORD_PROPERTIES } from '../sales/sales.entity.js';
import { type ListPage, listed, originFilter, SalesList, salesRecordFilters, VIEWER } from '../sales/sales.list.store.js';
import { NOW_US, type OwnColumns } from '../sales/sales.select.js';
import type { SalesRelations } from '../sales/sales.snapshot.js';
import { type Db, SalesStore } from '../sales/sales.store.js';
import { leadVisibleSql } from '../sales/sales.visibility.js';
import { Lead, LeadRelationEntities, LeadView, LeadViewQueued } from './lead.entity.js';

const VIEW_COLUMNS = tableOf(LeadView).columnList(['id', 'companyId', 'leadId', 'userId', 'viewedAt']);
const QUEUED_COLUMNS = tableOf(LeadViewQueued).columnList(['id', 'companyId', 'leadId', 'userId', 'viewedAt']);

import type { ListLeadsQuery } from './lead.schema.js';

type Json = Record<string, unknown>;

export interface DetailCheckRow {
  n: number;
  id: string;
  version: number;
  _catalogVersion: string;
  viewsCount: number;
  _nowUs: string;
}

/** A lead's deals (decision 0057), read through shared columns so leads need not know the deal entity. */
function dealsOfLead(orm: MikroORM): OwnColumns<SalesRelations> {
  const deal = new EntityColumns(orm, Lead, SALES_RECORD_PROPERTIES);
  return {
    select: (alias, s) => {
      const same = `company_id = ${alias}.company_id`;
      const row = (x: string, columns: EntityColumns<object>) => `case when ${x}.id is null then null else ${columns.json(x)} end`;
      return `,
      (select json_agg(json_build_object('deal', ${deal.json('ld')}, 'stage', ${row('ds', s.stage)},
          'pipeline', ${row('dp', s.pipeline)}, 'responsible', ${row('du', s.user)}) order by ld.created_at, ld.id)
        from deals ld left join stages ds on ds.${same} and ds.id = ld.stage_id
        left join pipelines dp on dp.${same} and dp.id = ld.pipeline_id left join users du on du.${same} and du.id = ld.responsible_id
        where ld.${same} and ld.lead_id = ${alias}.id) as "_deals"`;
    },
    read: (row, shared, s) => ({
      ...shared,
      deals: ((row._deals as Json[] | null) ?? []).map((x) => ({
        deal: deal.hydrate(x.deal as Json),
        stage: x.stage ? s.stage.hydrate(x.stage as Json) : null,
        pipeline: x.pipeline ? s.pipeline.hydrate(x.pipeline as Json) : null,
        responsible: x.responsible ? s.user.hydrate(x.responsible as Json) : null,
      })),
    }),
  };
}

/** Named statements (decision 0010): the shared sales ones plus the detail, view folding (0012) and list (0045). */
export class LeadStore {
  readonly sales: SalesStore<Lead, SalesRelations>;
  /** $2 is the id or code, $3 the view id, $4 the viewer; no row means absent or hidden (`access` tells which). */
  readonly detailById: Statement;
  readonly detailByCode: Statement;
  readonly detailOf: Statement;
  /** For the reads of one lead waiting together (decision 0015): $4 view ids and $5 viewers, one each per read. */
  readonly detailCheck: Statement;
  /** Skips rows another replica is folding; moves and counts in one statement so each view is seen exactly once. */
  readonly foldViewsStatement: Statement;
  private readonly listed: SalesList<ListLeadsQuery>;

  constructor(orm: MikroORM) {
    this.sales = new SalesStore<Lead, SalesRelations>(orm, 'lead', Lead, LeadRelationEntities, dealsOfLead(orm));
    const select = this.sales.select;

    // A read queues its view and counts the queued ones (decision 0226): it writes no lead row, so reads of one lead
    // never wait on its row lock, for each other or for a writer. The folder moves the queue into lead_views and
    // views_count in one statement, so a read counts each view once, folded or queued.
    const catalogVersion = (alias: string) =>
      `coalesce((select dv.version from detail_catalog_versions dv where dv.company_id = ${alias}.company_id), 0) as "_catalogVersion"`;
    const queued = (alias: string) => `(select count(*) from lead_view_queue q where q.lead_id = ${alias}.id)::int`;
    const detail = (where: string) => `
      with l as (
        select * from leads where company_id = $1 and ${where} and ${leadVisibleSql('leads', '$4')}
      ), v as (
        insert into lead_view_queue (${QUEUED_COLUMNS}) select $3, l.company_id, l.id, $4, now() from l
      )
      select ${select.relationsSelect('l', { detail: true })}, ${catalogVersion('l')},
        l.views_count + ${queued('l')} + 1 as "_viewsCount"
      from l ${select.relationsJoin('l')}`;
    this.detailById = statement('crm_lead_detail_by_id', detail('id = $2'));
    this.detailByCode = statement('crm_lead_detail_by_code', detail('code = $2'));
    this.detailOf = statement(
      'crm_lead_detail_of',
      `select ${select.relationsSelect('l', { detail: true })}, ${catalogVersion('l')} from leads l ${select.relationsJoin('l')}
       where l.company_id = $1 and l.id = $2`,
    );
    // The k views of the statement answer count + 1 ... count + k, as if the reads ran one by one; the statement does
    // not see its own inserts, so the count is of the views before it.
    this.detailCheck = statement(
      'crm_lead_detail_check',
      `with l as (
         select x.n, x.view_id, x.user_id, ld.id, ld.company_id, ld.detail_version, ld.views_count
         from unnest($4::uuid[], $5::uuid[]) with ordinality as x(view_id, user_id, n)
         join leads ld on ld.company_id = $1
           and ld.id = coalesce($2::uuid, (select c.id from leads c where c.company_id = $1 and c.code = $3::int))
         where ${leadVisibleSql('ld', 'x.user_id')}
       ), v as (
         insert into lead_view_queue (${QUEUED_COLUMNS}) select view_id, company_id, id, user_id, now() from l
       ), c as (
         select ${queued('l')} as queued from l limit 1
       )
       select l.n::int, l.id, l.detail_version as "version", ${catalogVersion('l')}, ${NOW_US} as "_nowUs",
         l.views_count + c.queued + (row_number() over (order by l.n))::int as "viewsCount"
       from l, c`,
    );
    this.foldViewsStatement = statement(
      'crm_lead_fold_views',
      `with d as (
         delete from lead_view_queue where id in (select id from lead_view_queue order by id limit $1 for update skip locked)
         returning *
       ), h as (
         insert into lead_views (${VIEW_COLUMNS}) select id, company_id, lead_id, user_id, viewed_at from d
       ), c as (
         select lead_id, count(*)::int n from d group by lead_id
       ), u as (
         update leads l set views_count = l.views_count + c.n from c where l.id = c.lead_id returning l.id
       )
       select (select count(*) from d)::int as folded`,
    );

    this.listed = new SalesList<ListLeadsQuery>('crm_lead_list', select, [
      ...salesRecordFilters(select),
      originFilter<ListLeadsQuery>(select, (q) => q.lead_source_id),
      {
        type: 'boolean',
        value: (q) => q.only_new || null,
        where: () => `not (exists (select 1 from lead_views fv where fv.lead_id = ${listed('id')} and fv.user_id = ${VIEWER}::uuid)
          or exists (select 1 from lead_view_queue fq where fq.lead_id = ${listed('id')} and fq.user_id = ${VIEWER}::uuid))`,
      },
    ]);
  }

  async detail(db: Db, companyId: string, ref: string | number, byId: boolean, viewId: string, userId: string): Promise<Json | undefined> {
    const [row] = await run(db, byId ? this.detailById : this.detailByCode, [companyId, ref, viewId, userId]);
    return row;
  }

  async detailWithoutView(db: Db, companyId: string, id: string): Promise<Json | undefined> {
    const [row] = await run(db, this.detailOf, [companyId, id]);
    return row;
  }

  checkDetail(
    db: Db,
    companyId: string,
    id: string | null,
    code: number | null,
    viewIds: string[],
    viewers: string[],
  ): Promise<DetailCheckRow[]> {
    return run<DetailCheckRow & Json>(db, this.detailCheck, [companyId, id, code, viewIds, viewers]);
  }

  async foldViews(db: Db, max: number): Promise<number> {
    const [row] = await run<{ folded: number }>(db, this.foldViewsStatement, [max]);
    return row?.folded ?? 0;
  }

  list<T>(db: Pool, actor: { companyId: string; userId: string }, q: ListLeadsQuery, toRecord: (row: Json) => T): Promise<ListPage<T>> {
    return this.listed.page(db, actor, q, toRecord);
  }
}
