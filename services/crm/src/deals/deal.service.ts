import { run } from '@svc/platform/db/native';
import { notFound } from '@svc/platform/errors';
import type { ServiceContext } from '@svc/platform/service';
import type { PoolClient } from 'pg';
import { LeadStatus } from '../leads/lead.entity.js';
import type { LeadRelations } from '../leads/lead.snapshot.js';
import { type Actor, type Loaded, type NewSalesRecord, SalesRecords } from '../sales/sales.service.js';
import type { Deal } from './deal.entity.js';
import type { CreateDealBody, UpdateDealBody } from './deal.schema.js';
import { type DealRelations, type DealSnapshot, dealSnapshot } from './deal.snapshot.js';
import { DealSql } from './deal.sql.js';

export type LoadedDeal = Loaded<Deal, DealRelations>;

/** crm's deal operations (decisions 0050–0052): the lead rules and relations (SalesRecords), on the deal tables. */
export class Deals extends SalesRecords<Deal, DealRelations, DealSnapshot, CreateDealBody, UpdateDealBody> {
  declare readonly sql: DealSql;

  constructor(ctx: ServiceContext) {
    super(ctx, new DealSql(ctx.orm));
  }

  snapshot(deal: Deal, rel: DealRelations): DealSnapshot {
    return dealSnapshot(deal, rel);
  }

  protected newRecord(shared: NewSalesRecord, body: CreateDealBody): Deal {
    return {
      ...shared,
      value: body.value ?? null,
      expectedCloseDate: body.expected_close_date ? new Date(body.expected_close_date) : null,
      temperature: body.temperature ?? null,
      wonReasonDescription: null,
      leadId: null,
    };
  }

  protected newRelations(shared: LeadRelations): DealRelations {
    return { ...shared, lead: null };
  }

  /** DealCreatedPayload: `{deal}` (the creation adds `custom_fields_changed` when it has answers). */
  protected createdPayload(snapshot: DealSnapshot) {
    return { deal: snapshot };
  }

  /**
   * PUT's deal fields: `value`, `expected_close_date`, `temperature` (null clears) and `status` (decision 0052). A new
   * status sets its date (won_date or lost_date, now) and clears the other; the loss reasons and description are
   * cleared (a PUT names none), and the gain reasons and won description unless the deal is now won. It fires only
   * deal.updated (spec), never won or lost.
   */
  protected override async updateOwnFields(client: PoolClient, deal: Deal, body: UpdateDealBody, before: LoadedDeal) {
    if (body.value !== undefined) deal.value = body.value;
    if (body.expected_close_date !== undefined)
      deal.expectedCloseDate = body.expected_close_date ? new Date(body.expected_close_date) : null;
    if (body.temperature !== undefined) deal.temperature = body.temperature;
    if (body.status === undefined || body.status === before.record.status) return;
    const now = new Date();
    deal.status = body.status;
    deal.wonDate = body.status === LeadStatus.won ? now : null;
    deal.lostDate = body.status === LeadStatus.lost ? now : null;
    if (body.status !== LeadStatus.won) {
      deal.wonReasonDescription = null;
      await run(client, this.sql.clearGainReasons, [deal.companyId, deal.id]);
    }
    deal.lostReasonDescription = null;
    await this.setLossReasons(client, deal.companyId, deal.id, []);
  }

  /** GET /deals/{id} (UUID or code): the deal detail; visibility as for leads. No views are recorded for deals. */
  async detail(actor: Actor, ref: string) {
    const r = this.refOf(ref);
    if (!r) throw notFound('Deal');
    const [row] = await run(await this.pool, r.byId ? this.sql.detailById : this.sql.detailByCode, [
      actor.companyId,
      r.value,
      actor.userId,
    ]);
    if (!row) return this.refuse(actor, ref);
    return this.detailOf(row);
  }
}
