import { invalidField, notFound } from '@svc/platform/errors';
import { salesEvent } from '@svc/platform/events/payloads';
import type { Logger } from '@svc/platform/logging';
import type { ServiceContext } from '@svc/platform/service';
import { CustomerStatus } from '../customers/customer.entity.js';
import { customerPartyOf, findOrCreateCustomer } from '../customers/customer.service.js';
import type { Leads } from '../leads/lead.service.js';
import { effectiveLeadSourceId } from '../marketing/acquisition.view.js';
import type { SalesActions } from '../sales/sales.actions.js';
import type { SalesChanges } from '../sales/sales.changes.js';
import type { SalesCreation } from '../sales/sales.creation.js';
import type { SalesDetails } from '../sales/sales.details.js';
import { type SalesDeps, type SalesService, salesParts } from '../sales/sales.parts.js';
import type { SalesRefs } from '../sales/sales.refs.js';
import { type Actor, newSalesRecord, refOf, responsibleOf } from '../sales/sales.rules.js';
import { effectiveConsent, noRelations } from '../sales/sales.snapshot.js';
import type { Loaded } from '../sales/sales.store.js';
import { namedSummary } from '../sales/sales.summaries.js';
import type { SalesUpdate } from '../sales/sales.update.js';
import { LeadVisibility } from '../sales/sales.visibility.js';
import type { Deal } from './deal.entity.js';
import { dealKind } from './deal.kind.js';
import type { CreateDealBody, UpdateDealBody, WonLeadDeal } from './deal.schema.js';
import type { DealRelations, DealSnapshot } from './deal.snapshot.js';
import { DealStore } from './deal.store.js';

export type LoadedDeal = Loaded<Deal, DealRelations>;

/** Decisions 0050–0052. */
export class Deals implements SalesService<Deal, DealRelations, DealSnapshot, CreateDealBody, UpdateDealBody> {
  readonly kind = 'deal' as const;
  readonly logger: Logger;
  readonly store: DealStore;
  readonly refs: SalesRefs;
  readonly changes: SalesChanges<Deal, DealRelations, DealSnapshot>;
  readonly creation: SalesCreation<Deal, DealRelations, DealSnapshot, CreateDealBody>;
  readonly updates: SalesUpdate<Deal, DealRelations, DealSnapshot, UpdateDealBody>;
  readonly actions: SalesActions<Deal, DealRelations, DealSnapshot>;
  readonly details: SalesDetails<Deal, DealRelations, DealSnapshot>;
  private readonly own: ReturnType<typeof dealKind>;

  constructor(
    ctx: ServiceContext,
    readonly leads: Leads,
    deps: SalesDeps,
  ) {
    this.logger = ctx.logger;
    this.store = new DealStore(ctx.orm);
    this.own = dealKind(this.store);
    const parts = salesParts(ctx, this.store.sales, this.own, deps);
    this.refs = parts.refs;
    this.changes = parts.changes;
    this.creation = parts.creation;
    this.updates = parts.updates;
    this.actions = parts.actions;
    this.details = parts.details;
  }

  snapshotOf({ record, rel }: LoadedDeal): DealSnapshot {
    return this.own.snapshot(record, rel);
  }

  create(actor: Actor, body: CreateDealBody, headerKey?: string) {
    return this.creation.create(actor, body, headerKey);
  }

  update(actor: Actor, ref: string, body: UpdateDealBody) {
    return this.updates.update(actor, ref, body);
  }

  /** Decision 0056; the customer is found or made in the win's transaction (decision 0165). */
  async win(companyId: string, ref: string, userId: string, gainReasonIds: string[], description: string | null) {
    const target = await this.actions.target(companyId, ref, userId);
    const reasons = await this.actions.reasons(companyId, 'gain_reason', gainReasonIds, 'gain_reason_ids');
    return this.actions.close(target, {
      won: true,
      lossReasons: [],
      lossDescription: null,
      also: async (tx, deal, before) => {
        deal.wonReasonDescription = description;
        await this.store.replaceGainReasons(tx, deal, reasons);
        const party = customerPartyOf(deal, before.rel);
        return party ? (await findOrCreateCustomer(tx, companyId, party, new Date(), CustomerStatus.ACTIVE)).id : null;
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

  /** Decision 0057: the lead is won and the deal created in one transaction; lead.won carries its DealSnapshot. */
  winLead(companyId: string, ref: string, userId: string, body: WonLeadDeal | undefined) {
    if (!body) return this.leads.win(companyId, ref, userId);
    return this.leads.win(companyId, ref, userId, async (tx, { record: lead, rel: leadRel }, by) => {
      const reads = await this.store.sales.readCreation(tx, companyId, null, lead.responsibleId, by.id);
      const { stage, pipeline } = reads;
      if (!stage || !pipeline) throw invalidField('deal', 'the company has no primary pipeline with a stage to put the deal in');
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
      const fields = { title: body.title, value: body.value ?? null } as CreateDealBody;
      const deal: Deal = {
        ...this.own.newRecord(shared, fields),
        organizationId: lead.organizationId ?? null,
        leadId: lead.id,
      };
      const rel: DealRelations = {
        ...this.own.newRelations({
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
      await this.creation.insertRecord(tx, deal, null, this.own.createdPayload(this.own.snapshot(deal, rel), deal, fields));
      return this.own.snapshot(deal, rel);
    });
  }

  /** No views are recorded for deals. */
  async detail(actor: Actor, given: string, canReadChats = false) {
    const ref = await this.refs.resolve(actor.companyId, given);
    const r = ref && refOf(ref);
    if (!ref || !r) throw notFound('Deal');
    const row = await this.store.detail(await this.store.sales.pool, actor.companyId, r.value, r.byId, actor.userId);
    if (!row) return this.refs.refuse(actor, ref);
    const found = this.details.of(row);
    const detail = {
      ...found,
      associations_count: {
        ...found.associations_count,
        tasks: await this.details.tasksOf(actor.companyId, (found as unknown as { id: string }).id),
      },
    };
    if (!canReadChats) return detail;
    const participants = (detail as { participants?: { person: { id: string; name: string } }[] }).participants ?? [];
    return {
      ...detail,
      ...(await this.details.chatFields(
        actor.companyId,
        participants.map((p) => p.person),
      )),
    };
  }
}
