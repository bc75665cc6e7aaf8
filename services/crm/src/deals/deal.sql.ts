import type { MikroORM } from '@mikro-orm/postgresql';
import { type Statement, statement } from '@svc/platform/db/native';
import type { SalesRelations } from '../sales/sales.snapshot.js';
import { SalesSql } from '../sales/sales.sql.js';
import { salesRecordVisibleSql } from '../sales/sales.visibility.js';
import { Deal, DealRelationEntities } from './deal.entity.js';
import type { DealRelations } from './deal.snapshot.js';

type Json = Record<string, unknown>;

/** SQL truth value: user `userParam` may see deal row `alias` (the lead rule with the deal's followers, decision 0041). */
export const dealVisibleSql = (alias: string, userParam: string) => salesRecordVisibleSql('deal', alias, userParam);

/**
 * The deal statements (decisions 0050, 0051, 0056): the ones deals share with leads (SalesSql), the lead a deal
 * came from and its gain reasons in its snapshot, and the detail.
 */
export class DealSql extends SalesSql<Deal, DealRelations> {
  /** GET deal by id ($2) or code ($2) of company $1 when user $3 may see it: the deal, its relations and detail extras. */
  readonly detailById: Statement;
  readonly detailByCode: Statement;
  /** $1 company, $2 deal, $3 rows of deal_gain_reasons: replace the deal's gain reasons (decision 0056). */
  readonly setGainReasons: Statement;

  constructor(orm: MikroORM) {
    super(orm, 'deal', Deal, DealRelationEntities);
    this.setGainReasons = this.setReasons('gain');
    const detail = (where: string) =>
      `select ${this.relationsSelect('d', { detail: true })} from deals d ${this.relationsJoin('d')}
       where d.company_id = $1 and ${where} and ${dealVisibleSql('d', '$3')}`;
    this.detailById = statement('crm_deal_detail_by_id', detail('d.id = $2'));
    this.detailByCode = statement('crm_deal_detail_by_code', detail('d.code = $2'));
  }

  protected override extraSelect(alias: string): string {
    return `,
      (select json_build_object('id', x.id, 'code', x.code, 'title', x.title) from leads x
        where x.company_id = ${alias}.company_id and x.id = ${alias}.lead_id) as "_lead",
      ${this.reasonsSelect(alias, 'gain')} as "_gainReasons"`;
  }

  protected override relationsOf(row: Json, shared: SalesRelations): DealRelations {
    return {
      ...shared,
      gainReasons: this.namedFromRows((row._gainReasons as Json[] | null) ?? []),
      lead: (row._lead as DealRelations['lead']) ?? null,
    };
  }
}
