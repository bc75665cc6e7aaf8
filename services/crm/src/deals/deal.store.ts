import type { MikroORM } from '@mikro-orm/postgresql';
import { run, type Statement, statement } from '@svc/platform/db/native';
import type { Pool, PoolClient } from 'pg';
import type { NamedItem } from '../catalog/catalog.entity.js';
import { type ListPage, listed, originFilter, rangeFilters, SalesList, salesRecordFilters } from '../sales/sales.list.store.js';
import type { OwnColumns } from '../sales/sales.select.js';
import { type Db, SalesStore } from '../sales/sales.store.js';
import { dealVisibleSql } from '../sales/sales.visibility.js';
import { Deal, DealRelationEntities } from './deal.entity.js';
import type { ListDealsQuery } from './deal.schema.js';
import type { DealRelations } from './deal.snapshot.js';

type Json = Record<string, unknown>;

const leadAndGainReasons: OwnColumns<DealRelations> = {
  select: (alias, s) => `,
      (select json_build_object('id', x.id, 'code', x.code, 'title', x.title) from leads x
        where x.company_id = ${alias}.company_id and x.id = ${alias}.lead_id) as "_lead",
      ${s.reasonsSelect(alias, 'gain')} as "_gainReasons"`,
  read: (row, shared, s) => ({
    ...shared,
    gainReasons: s.namedFromRows((row._gainReasons as Json[] | null) ?? []),
    lead: (row._lead as DealRelations['lead']) ?? null,
  }),
};

/** Decisions 0046, 0050, 0051, 0056. */
export class DealStore {
  readonly sales: SalesStore<Deal, DealRelations>;
  readonly detailById: Statement;
  readonly detailByCode: Statement;
  /** Decision 0056. */
  private readonly setGainReasons: Statement;
  /** The deal's main person, else its first. */
  private readonly mainPerson: Statement;
  private readonly listed: SalesList<ListDealsQuery>;

  constructor(orm: MikroORM) {
    this.sales = new SalesStore<Deal, DealRelations>(orm, 'deal', Deal, DealRelationEntities, leadAndGainReasons);
    const select = this.sales.select;
    this.setGainReasons = this.sales.reasonsStatement('gain');
    const detail = (where: string) =>
      `select ${select.relationsSelect('d', { detail: true })} from deals d ${select.relationsJoin('d')}
       where d.company_id = $1 and ${where} and ${dealVisibleSql('d', '$3')}`;
    this.detailById = statement('crm_deal_detail_by_id', detail('d.id = $2'));
    this.detailByCode = statement('crm_deal_detail_by_code', detail('d.code = $2'));
    this.mainPerson = statement(
      'crm_deal_main_person',
      'select person_id from deal_participants where company_id = $1 and deal_id = $2 order by main desc, created_at, id limit 1',
    );
    this.listed = new SalesList<ListDealsQuery>('crm_deal_list', select, [
      ...salesRecordFilters(select),
      originFilter<ListDealsQuery>(select, (q) => q.deal_source_id),
      ...rangeFilters<ListDealsQuery>(
        listed('value'),
        'numeric',
        (q) => q.value_min,
        (q) => q.value_max,
      ),
      ...rangeFilters<ListDealsQuery>(
        listed('expected_close_date'),
        'timestamptz',
        (q) => q.expected_close_from,
        (q) => q.expected_close_to,
      ),
    ]);
  }

  async detail(db: Db, companyId: string, ref: string | number, byId: boolean, userId: string): Promise<Json | undefined> {
    const [row] = await run(db, byId ? this.detailById : this.detailByCode, [companyId, ref, userId]);
    return row;
  }

  replaceGainReasons(tx: PoolClient, deal: Pick<Deal, 'id' | 'companyId'>, reasons: NamedItem[]): Promise<void> {
    return this.sales.replaceReasons(tx, this.setGainReasons, deal.companyId, deal.id, reasons);
  }

  async mainPersonOf(db: Db, deal: Pick<Deal, 'id' | 'companyId'>): Promise<string | null> {
    const [row] = await run<{ person_id: string }>(db, this.mainPerson, [deal.companyId, deal.id]);
    return row?.person_id ?? null;
  }

  list<T>(db: Pool, actor: { companyId: string; userId: string }, q: ListDealsQuery, toRecord: (row: Json) => T): Promise<ListPage<T>> {
    return this.listed.page(db, actor, q, toRecord);
  }
}
