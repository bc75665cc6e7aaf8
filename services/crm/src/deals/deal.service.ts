import { run, statement } from '@svc/platform/db/native';
import { invalid, notFound } from '@svc/platform/errors';
import { salesEvent } from '@svc/platform/events/payloads';
import type { ServiceContext } from '@svc/platform/service';
import type { PoolClient } from 'pg';
import type { NamedItem } from '../catalog/catalog.entity.js';
import { CustomerStatus } from '../customers/customer.entity.js';
import { customerPartyOf, findOrCreateCustomer } from '../customers/customer.service.js';
import type { Leads } from '../leads/lead.service.js';
import { effectiveLeadSourceId } from '../marketing/acquisition.view.js';
import type { Actor, Loaded } from '../sales/sales.base.js';
import { SalesStatus } from '../sales/sales.entity.js';
import { type NewSalesRecord, newSalesRecord, responsibleOf } from '../sales/sales.rules.js';
import { SalesRecords } from '../sales/sales.service.js';
import { effectiveConsent, noRelations, type SalesRelations } from '../sales/sales.snapshot.js';
import { namedSummary } from '../sales/sales.summaries.js';
import { LeadVisibility } from '../sales/sales.visibility.js';
import type { Deal } from './deal.entity.js';
import type { CreateDealBody, UpdateDealBody, WonLeadDeal } from './deal.schema.js';
import { type DealRelations, type DealSnapshot, dealSnapshot } from './deal.snapshot.js';
import { DealSql } from './deal.sql.js';

export type LoadedDeal = Loaded<Deal, DealRelations>;

// The deal's main person, else its first.
const MAIN_PERSON = statement(
  'crm_deal_main_person',
  'select person_id from deal_participants where company_id = $1 and deal_id = $2 order by main desc, created_at, id limit 1',
);

/** crm's deal operations (decisions 0050–0052): the lead rules and relations (SalesRecords), on the deal tables. */
export class Deals extends SalesRecords<Deal, DealRelations, DealSnapshot, CreateDealBody, UpdateDealBody> {
  declare readonly sql: DealSql;

  constructor(
    ctx: ServiceContext,
    readonly leads: Leads,
  ) {
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

  protected newRelations(shared: SalesRelations): DealRelations {
    return { ...shared, gainReasons: [], lead: null };
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
    deal.wonDate = body.status === SalesStatus.won ? now : null;
    deal.lostDate = body.status === SalesStatus.lost ? now : null;
    if (body.status !== SalesStatus.won) {
      deal.wonReasonDescription = null;
      await this.setGainReasons(client, deal, []);
    }
    deal.lostReasonDescription = null;
    await this.setLossReasons(client, deal.companyId, deal.id, []);
  }

  /** A deal won by PUT (status 2) makes its customer as the admin API's win does, from the persons the PUT left it. */
  protected override async updated(client: PoolClient, deal: Deal, before: LoadedDeal) {
    if (deal.status !== SalesStatus.won || before.record.status === SalesStatus.won) return;
    const [main] = await run<{ person_id: string }>(client, MAIN_PERSON, [deal.companyId, deal.id]);
    const party = customerPartyOf(deal, { participants: main ? [{ participant: { main: true }, person: { id: main.person_id } }] : [] });
    if (party) await findOrCreateCustomer(client, deal.companyId, party, new Date(), CustomerStatus.ACTIVE);
  }

  /**
   * The admin API's win (decision 0056): deal.won with the gain reasons in the order sent (the first is
   * `gain_reason`), the description (`won_reason_description`) and `customer_id`: the customer the deal's
   * organization, else its main person, is, found or made in the win's transaction (decision 0165); null when the
   * deal has neither.
   */
  async win(companyId: string, ref: string, userId: string, gainReasonIds: string[], description: string | null) {
    const target = await this.target(companyId, ref, userId);
    const reasons = await this.reasons(companyId, 'gain_reason', gainReasonIds, 'gain_reason_ids');
    return this.close(target, {
      won: true,
      lossReasons: [],
      lossDescription: null,
      also: async (client, deal, before) => {
        deal.wonReasonDescription = description;
        await this.setGainReasons(client, deal, reasons);
        const party = customerPartyOf(deal, before.rel);
        return party ? (await findOrCreateCustomer(client, companyId, party, new Date(), CustomerStatus.ACTIVE)).id : null;
      },
      event: ({ snapshot, at, by }, customerId) =>
        salesEvent('deal', 'won', snapshot, {
          won_date: at,
          won_by: by,
          customer_id: customerId ?? null,
          gain_reason: reasons[0] ? namedSummary(reasons[0]) : null,
          gain_reasons: reasons.map(namedSummary),
          won_reason_description: description,
        }),
    });
  }

  /** A deal lost (or won, where `win` sets them) keeps no gain reasons or won description. */
  protected override async closing(client: PoolClient, deal: Deal, won: boolean) {
    if (won) return;
    deal.wonReasonDescription = null;
    await this.setGainReasons(client, deal, []);
  }

  private async setGainReasons(client: PoolClient, deal: Pick<Deal, 'id' | 'companyId'>, reasons: NamedItem[]) {
    await this.setReasons(client, this.sql.setGainReasons, deal.companyId, deal.id, reasons);
  }

  /**
   * The admin API's lead win with `deal` (decision 0057): the lead is won and, in the same transaction, a deal is
   * created from it: first stage of the primary pipeline, the lead's responsible (the master user when that one is
   * inactive or archived), the acting user as creator, the lead's visibility, effective consent, effective origin
   * and organization, the `value` sent. deal.created fires with it; lead.won carries its DealSnapshot. Without
   * `deal`, the lead's plain win.
   */
  winLead(companyId: string, ref: string, userId: string, body: WonLeadDeal | undefined) {
    if (!body) return this.leads.win(companyId, ref, userId);
    return this.leads.win(companyId, ref, userId, async (client, { record: lead, rel: leadRel }, by) => {
      const [row] = await run(client, this.sql.createReads, [companyId, null, lead.responsibleId, by.id]);
      const reads = this.sql.createReadsFromRow(row ?? {});
      const { stage, pipeline } = reads;
      if (!stage || !pipeline) throw invalid('deal: the company has no primary pipeline with a stage to put the deal in');
      const { user: responsible } = responsibleOf(reads, lead.responsibleId);
      const leadSourceId = effectiveLeadSourceId(lead.leadSourceId, leadRel.marketing.latest);
      const leadSource = leadSourceId ? leadRel.marketing.leadSources.get(leadSourceId) : undefined;
      const shared = newSalesRecord(
        { companyId, userId: by.id },
        { title: body.title, visibility: lead.visibility === LeadVisibility.team ? 1 : 0 },
        { stage, pipeline, responsible },
        effectiveConsent(lead, leadRel.marketing),
        leadSourceId,
        new Date(),
      );
      const deal: Deal = {
        ...this.newRecord(shared, { title: body.title, value: body.value ?? null }),
        organizationId: lead.organizationId ?? null,
        leadId: lead.id,
      };
      const rel: DealRelations = {
        ...this.newRelations({
          stage,
          pipeline,
          pipelineStages: [],
          users: new Map([responsible, by].map((u) => [u.id, u])),
          marketing: { latest: null, latestDecision: null, leadSources: new Map(leadSource ? [[leadSource.id, leadSource]] : []) },
          ...noRelations(),
          organization: leadRel.organization,
        }),
        lead: { id: lead.id, code: lead.code, title: lead.title },
      };
      await this.insertRecord(client, deal, null, this.createdPayload(this.snapshot(deal, rel)));
      return this.snapshot(deal, rel);
    });
  }

  /**
   * GET /deals/{id} (UUID or code): the deal detail; visibility as for leads. No views are recorded for deals. The chat
   * fields are asked of chat for its persons when the key has crm/chats.read (`canReadChats`), as the lead detail's.
   */
  async detail(actor: Actor, given: string, canReadChats = false) {
    const ref = await this.resolveRef(actor.companyId, given);
    const r = ref && this.refOf(ref);
    if (!ref || !r) throw notFound('Deal');
    const [row] = await run(await this.pool, r.byId ? this.sql.detailById : this.sql.detailByCode, [
      actor.companyId,
      r.value,
      actor.userId,
    ]);
    if (!row) return this.refuse(actor, ref);
    const detail = this.detailOf(row);
    if (!canReadChats) return detail;
    const participants = (detail as { participants?: { person: { id: string; name: string } }[] }).participants ?? [];
    return {
      ...detail,
      ...(await this.chatFieldsOfDetail(
        actor.companyId,
        participants.map((p) => p.person),
      )),
    };
  }
}
