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
import { Lead, LeadRelationEntities, LeadView } from './lead.entity.js';

const VIEW_COLUMNS = tableOf(LeadView).columnList(['id', 'companyId', 'leadId', 'userId', 'viewedAt']);

import type { ListLeadsQuery } from './lead.schema.js';

type Json = Record<string, unknown>;

/** What a cached lead detail's check returns for one read (decision 0015). */
export interface DetailCheckRow {
  n: number;
  id: string;
  version: number;
  _catalogVersion: string;
  viewsCount: number;
  _nowUs: string;
}

/**
 * The deals that came from a lead (decision 0057), oldest first, with their stage, pipeline and responsible: read
 * through the columns leads and deals share, so leads need not know the deal entity.
 */
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

/**
 * The lead store: the statements leads share with deals (`sales`) plus the detail that records a view, the view
 * folding (decision 0012) and the list (decision 0045), as named statements (decision 0010).
 */
export class LeadStore {
  /** The statements leads share with deals, on the lead tables. */
  readonly sales: SalesStore<Lead, SalesRelations>;
  /**
   * GET lead by id ($2) or code ($2) when viewer $4 may see it (lead.visibility.ts): records the view ($3 view id),
   * returns the lead, its relations, its views (`_viewsCount`) and the versions its cached copy is checked against
   * (decision 0015). No row: absent or hidden (`access` tells which, off the hot path).
   */
  readonly detailById: Statement;
  readonly detailByCode: Statement;
  /** The detail of lead $2 of company $1 without recording a view (a cached detail found stale). */
  readonly detailOf: Statement;
  /**
   * GET of a cached detail, for the reads of one lead waiting together (decision 0015): $1 company, $2 lead id or
   * null, $3 its code when $2 is null, $4 view ids, $5 viewers (one each per read). For each read `n` (1-based)
   * whose viewer may see the lead: its view recorded, the lead's detail_version and its company's catalog version
   * (to check the cached detail), its views_count and the database's time (for stage durations).
   */
  readonly detailCheck: Statement;
  /**
   * Folds up to $1 queued views (the oldest; rows another replica is folding are skipped): moves them to lead_views
   * and adds them to their leads' views_count, in one statement, so any reader sees each view exactly once.
   */
  readonly foldViewsStatement: Statement;
  /** GET /leads (sales.list.store.ts): the shared filters, the effective origin and only_new. */
  private readonly listed: SalesList<ListLeadsQuery>;

  constructor(orm: MikroORM) {
    this.sales = new SalesStore<Lead, SalesRelations>(orm, 'lead', Lead, LeadRelationEntities, dealsOfLead(orm));
    const select = this.sales.select;

    // A read records its views in lead_views and adds them to leads.views_count in its own statement (decision 0015:
    // crm sends one statement per lead at a time, for all the reads of that lead waiting, so reads of one lead do not
    // queue on its row); views still in lead_view_queue (queued by the GETs of decision 0012) are counted too.
    const catalogVersion = (alias: string) =>
      `coalesce((select dv.version from detail_catalog_versions dv where dv.company_id = ${alias}.company_id), 0) as "_catalogVersion"`;
    const queued = (alias: string) => `(select count(*) from lead_view_queue q where q.lead_id = ${alias}.id)::int`;
    const detail = (where: string) => `
      with l as (
        select * from leads where company_id = $1 and ${where} and ${leadVisibleSql('leads', '$4')}
      ), v as (
        insert into lead_views (${VIEW_COLUMNS}) select $3, l.company_id, l.id, $4, now() from l
      ), u as (
        update leads set views_count = leads.views_count + 1 from l where leads.id = l.id returning leads.views_count
      )
      select ${select.relationsSelect('l', { detail: true })}, ${catalogVersion('l')},
        (select views_count from u) + ${queued('l')} as "_viewsCount"
      from l ${select.relationsJoin('l')}`;
    this.detailById = statement('crm_lead_detail_by_id', detail('id = $2'));
    this.detailByCode = statement('crm_lead_detail_by_code', detail('code = $2'));
    this.detailOf = statement(
      'crm_lead_detail_of',
      `select ${select.relationsSelect('l', { detail: true })}, ${catalogVersion('l')} from leads l ${select.relationsJoin('l')}
       where l.company_id = $1 and l.id = $2`,
    );
    // The reads (ordinality n) of one lead, each by its viewer: those who may see it record their views; the k views
    // of the statement answer views_count - k + 1 ... views_count, as if the reads had run one by one.
    this.detailCheck = statement(
      'crm_lead_detail_check',
      `with l as (
         select x.n, x.view_id, x.user_id, ld.id, ld.company_id, ld.detail_version
         from unnest($4::uuid[], $5::uuid[]) with ordinality as x(view_id, user_id, n)
         join leads ld on ld.company_id = $1
           and ld.id = coalesce($2::uuid, (select c.id from leads c where c.company_id = $1 and c.code = $3::int))
         where ${leadVisibleSql('ld', 'x.user_id')}
       ), v as (
         insert into lead_views (${VIEW_COLUMNS}) select view_id, company_id, id, user_id, now() from l
       ), u as (
         update leads set views_count = leads.views_count + (select count(*) from l)
         where leads.id = (select id from l limit 1) returning leads.id, leads.views_count, leads.detail_version
       )
       select l.n::int, l.id, u.detail_version as "version", ${catalogVersion('l')}, ${NOW_US} as "_nowUs",
         u.views_count - (select count(*) from l)::int + (row_number() over (order by l.n))::int + ${queued('l')} as "viewsCount"
       from l join u on u.id = l.id`,
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

  /**
   * The detail of lead `ref` (its id, or its code when `byId` is false) when `userId` may see it, its view `viewId`
   * recorded and counted; undefined when absent or hidden.
   */
  async detail(db: Db, companyId: string, ref: string | number, byId: boolean, viewId: string, userId: string): Promise<Json | undefined> {
    const [row] = await run(db, byId ? this.detailById : this.detailByCode, [companyId, ref, viewId, userId]);
    return row;
  }

  /** The detail of lead `id`, without recording a view. */
  async detailWithoutView(db: Db, companyId: string, id: string): Promise<Json | undefined> {
    const [row] = await run(db, this.detailOf, [companyId, id]);
    return row;
  }

  /** The check of a cached detail for the reads of one lead (`id`, else `code`): one row per read its viewer may see. */
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

  /** Folds up to `max` queued views; returns how many. */
  async foldViews(db: Db, max: number): Promise<number> {
    const [row] = await run<{ folded: number }>(db, this.foldViewsStatement, [max]);
    return row?.folded ?? 0;
  }

  /** One page of GET /leads for `actor`, each row made a record by `toRecord`. */
  list<T>(db: Pool, actor: { companyId: string; userId: string }, q: ListLeadsQuery, toRecord: (row: Json) => T): Promise<ListPage<T>> {
    return this.listed.page(db, actor, q, toRecord);
  }
}
