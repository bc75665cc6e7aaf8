import type { MikroORM } from '@mikro-orm/postgresql';
import { EntityColumns, type Statement, statement } from '@svc/platform/db/native';
import { nextCodeSql, planOpenSql } from '../companies/plan.js';
import { type IdempotencySql, idempotencySql } from '../leads/idempotency.js';
import { noRelations } from '../leads/lead.snapshot.js';
import { type LeadSql, recordStatements, setReasonsStatement } from '../leads/lead.sql.js';
import { salesRecordVisibleSql } from '../leads/lead.visibility.js';
import { Deal } from './deal.entity.js';
import type { DealRelations } from './deal.snapshot.js';

type Json = Record<string, unknown>;

/** SQL truth value: user `userParam` may see deal row `alias` (the lead rule, decision 0041; deals have no followers yet). */
export const dealVisibleSql = (alias: string, userParam: string) => salesRecordVisibleSql(alias, userParam, null);

/**
 * The deal statements (decision 0050), built like the lead ones (decision 0010) and sharing their pieces: the
 * creation reads, the stages-and-users select and the idempotency statements come from LeadSql / idempotency.ts.
 */
export class DealSql {
  readonly deal: EntityColumns<Deal>;
  /** $1 company, $2 stage id or null, $3 responsible, $4 creator; required fields are the deal fields. */
  readonly createReads: Statement;
  /**
   * A creation in one autocommit statement: $1 company, $2 the deal row (code from the sequence), $3 outbox event
   * id, $4 the deal.created payload (its deal.code filled in), $5 the outbox channel.
   */
  readonly create: Statement;
  /** GET deal by id ($2) or code ($2) of company $1 when user $3 may see it. */
  readonly detailById: Statement;
  readonly detailByCode: Statement;
  /** $1 company, $2 uuid or null, $3 code or null: the deal's id and whether user $4 may see it. */
  readonly access: Statement;
  readonly keys: IdempotencySql;
  /** The deal ($2 id) of company $1 and what its snapshot shows, its row locked for the caller's transaction. */
  readonly snapshotForUpdate: Statement;
  /** The same without the lock. */
  readonly snapshot: Statement;
  /** `recordStatements` of the deals table. */
  readonly update: Statement;
  readonly touch: Statement;
  readonly idOf: Statement;
  /** $1 company, $2 deal, $3 reason rows: the deal's loss / gain reasons become those. */
  readonly setLossReasons: Statement;
  readonly setGainReasons: Statement;

  constructor(
    orm: MikroORM,
    readonly leads: LeadSql,
  ) {
    this.deal = new EntityColumns(orm, Deal);
    this.createReads = statement('crm_deal_create_reads', leads.createReadsText('deal'));
    this.create = statement(
      'crm_deal_create',
      `with seq as (${nextCodeSql('$1', 'deal')}), d as (
         insert into deals select (r).* from (
           select jsonb_populate_record(null::deals, $2::jsonb || jsonb_build_object('code', seq.value)) r from seq
         ) x returning id, code
       ), o as (
         insert into outbox (id, company_id, event_key, payload, occurred_at)
         select $3, $1, 'deal.created', jsonb_set($4::jsonb, '{deal,code}', to_jsonb(d.code)), now() from d
         where ${planOpenSql('$1', 'now()')}
       )
       select d.id, d.code, pg_notify($5, '') from d`,
    );
    const detail = (where: string) =>
      `select ${this.relationsSelect('d')} from deals d where d.company_id = $1 and ${where} and ${dealVisibleSql('d', '$3')}`;
    this.detailById = statement('crm_deal_detail_by_id', detail('d.id = $2'));
    this.detailByCode = statement('crm_deal_detail_by_code', detail('d.code = $2'));
    this.access = statement(
      'crm_deal_access',
      `select d.id, ${dealVisibleSql('d', '$4')} as visible from deals d
       where d.company_id = $1 and (d.id = $2::uuid or ($2::uuid is null and d.code = $3::int))`,
    );
    this.keys = idempotencySql('deal', 'deal_idempotency_keys', 'deals', 'deal_id', `coalesce(r.measurement_consent, 'UNSPECIFIED')`);
    const one = `select ${this.relationsSelect('d')} from deals d where d.company_id = $1 and d.id = $2`;
    this.snapshotForUpdate = statement('crm_deal_snapshot_for_update', `${one} for update of d`);
    this.snapshot = statement('crm_deal_snapshot', one);
    ({ update: this.update, touch: this.touch, idOf: this.idOf } = recordStatements('deal', 'deals', this.deal, ['lead_id']));
    this.setLossReasons = setReasonsStatement('crm_deal_set_loss_reasons', 'deal_loss_reasons', 'deal_id');
    this.setGainReasons = setReasonsStatement('crm_deal_set_gain_reasons', 'deal_gain_reasons', 'deal_id');
  }

  /** The deal (alias `alias`) and what its snapshot shows: stages, pipeline, users, origin, reasons and its lead. */
  relationsSelect(alias: string): string {
    return `${this.deal.select(alias)}, ${this.leads.stagesAndUsersSelect(alias)},
      ${this.leads.leadSourcesSelect(alias, [`${alias}.lead_source_id`])} as "_leadSources",
      ${this.leads.reasonsSelect(alias, 'deal_loss_reasons', 'deal_id')} as "_lossReasons",
      ${this.leads.reasonsSelect(alias, 'deal_gain_reasons', 'deal_id')} as "_gainReasons",
      (select json_build_object('id', x.id, 'code', x.code, 'title', x.title) from leads x
        where x.company_id = ${alias}.company_id and x.id = ${alias}.lead_id) as "_lead"`;
  }

  fromRow(row: Json): { deal: Deal; rel: DealRelations } {
    const deal = this.deal.hydrate(row);
    return {
      deal,
      rel: {
        ...this.leads.stagesAndUsersFromRow(row, deal.stageId),
        marketing: { latest: null, latestDecision: null, leadSources: this.leads.leadSourcesFromRow(row._leadSources) },
        ...noRelations(),
        lossReasons: this.leads.namedFromRows((row._lossReasons as Json[] | null) ?? []),
        gainReasons: this.leads.namedFromRows((row._gainReasons as Json[] | null) ?? []),
        lead: (row._lead as DealRelations['lead']) ?? null,
      },
    };
  }
}
