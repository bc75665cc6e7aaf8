import { nativePool, run } from '@svc/platform/db/native';
import { forbidden, invalid, isUuid, notFound } from '@svc/platform/errors';
import { outboxChannel } from '@svc/platform/events/outbox';
import type { ServiceContext } from '@svc/platform/service';
import type { Pool, PoolClient } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import type { LeadSource } from '../catalog/catalog.entity.js';
import type { User } from '../companies/company.entity.js';
import { type CreationAnswer, createOnce } from '../leads/idempotency.js';
import { type Actor, creationBasics, type Leads, newSalesRecord, originOf, responsibleOf } from '../leads/lead.service.js';
import { effectiveConsent, noRelations } from '../leads/lead.snapshot.js';
import { namedSummary } from '../leads/lead.summaries.js';
import { LeadVisibility } from '../leads/lead.visibility.js';
import { SalesRecordActions, type SalesRecordKind } from '../leads/sales-record.actions.js';
import type { WonLeadDeal } from '../leads/sales-record.http.js';
import { effectiveLeadSourceId } from '../marketing/acquisition.view.js';
import { withoutSensitiveText } from '../marketing/redaction.js';
import { type PreparedMarketing, prepareMarketing } from '../marketing/tracking.js';
import type { Pipeline, Stage } from '../pipelines/pipeline.entity.js';
import type { Deal } from './deal.entity.js';
import type { CreateDealBody } from './deal.schema.js';
import { type DealRelations, type DealSnapshot, dealSnapshot } from './deal.snapshot.js';
import { DealSql } from './deal.sql.js';

/** Fields of POST /leads that deals do not take yet (they need deal relation tables): a 400 naming them. */
const NOT_YET = ['tags', 'persons_id', 'person', 'organization_id', 'organization', 'custom_fields', 'followers', 'note'] as const;

const CODE = /^[1-9]\d{0,9}$/;

export interface LoadedDeal {
  deal: Deal;
  rel: DealRelations;
}

/** The deal as the shared change machinery sees it (sales-record.actions.ts). Deals keep no stage periods. */
const dealKind = (sql: DealSql): SalesRecordKind<Deal, LoadedDeal, DealSnapshot> => ({
  entity: 'deal',
  label: 'Deal',
  readLocked: sql.snapshotForUpdate,
  read: sql.snapshot,
  touch: sql.touch,
  update: sql.update,
  idOf: sql.idOf,
  setLossReasons: sql.setLossReasons,
  setGainReasons: sql.setGainReasons,
  enterStage: null,
  tags: null,
  load: (row) => sql.fromRow(row),
  record: (loaded) => loaded.deal,
  row: (deal) => sql.deal.row(deal),
  snapshot: ({ deal, rel }) => dealSnapshot(deal, rel),
  lostColumns: { wonReasonDescription: null },
});

/** The relations of a deal being created: what its deal.created snapshot shows. */
function newDealRelations(r: {
  stage: Stage;
  pipeline: Pipeline;
  users: User[];
  leadSource: LeadSource | null;
  lead: DealRelations['lead'];
}): DealRelations {
  return {
    stage: r.stage,
    pipeline: r.pipeline,
    pipelineStages: [],
    users: new Map(r.users.map((u) => [u.id, u])),
    marketing: { latest: null, latestDecision: null, leadSources: new Map(r.leadSource ? [[r.leadSource.id, r.leadSource]] : []) },
    ...noRelations(),
    gainReasons: [],
    lead: r.lead,
  };
}

/** crm's deal operations (decision 0050): the lead rules and statements, on the deals table. */
export class Deals {
  readonly sql: DealSql;
  /** The change machinery and the admin API's dedicated actions (decision 0056). */
  readonly actions: SalesRecordActions<Deal, LoadedDeal, DealSnapshot>;
  private readonly pool: Promise<Pool>;

  constructor(
    readonly ctx: ServiceContext,
    private readonly leads: Leads,
  ) {
    this.sql = new DealSql(ctx.orm, leads.sql);
    this.pool = nativePool(ctx.orm);
    this.actions = new SalesRecordActions(dealKind(this.sql), leads.sql, this.pool, ctx.schema);
  }

  /** POST /deals: the lead creation's validations, idempotency and hot path (one read, one autocommit write). */
  async create(actor: Actor, body: CreateDealBody, headerKey?: string): Promise<CreationAnswer> {
    for (const field of NOT_YET) {
      if (body[field] !== undefined && body[field] !== null) throw invalid(`${field}: not supported on deals yet`);
    }
    const marketing = prepareMarketing(body.measurement_consent, body.marketing);
    const key = headerKey ?? body.idempotency_key;
    try {
      if (!key) return await this.createDeal(actor, body, marketing);
      return await createOnce(await this.pool, this.sql.keys, actor.companyId, key, () => this.createDeal(actor, body, marketing));
    } catch (err) {
      throw withoutSensitiveText(err, marketing.sensitive);
    }
  }

  private async createDeal(actor: Actor, body: CreateDealBody, marketing: PreparedMarketing): Promise<CreationAnswer> {
    const pool = await this.pool;
    const { stage, pipeline, responsible, creator } = await creationBasics(pool, this.sql.createReads, this.sql.leads, actor, body);
    const origin = await originOf(this.ctx, actor, body, marketing.acquisition);
    const now = new Date();
    const deal: Deal = {
      ...newSalesRecord(actor, body, { stage, pipeline, responsible }, marketing.consent, origin.leadSource?.id ?? null, now),
      value: body.value ?? null,
      expectedCloseDate: body.expected_close_date ? new Date(body.expected_close_date) : null,
      temperature: body.temperature ?? null,
      wonReasonDescription: null,
      leadId: null,
    };
    const rel = newDealRelations({ stage, pipeline, users: [responsible, creator], leadSource: origin.leadSource, lead: null });
    await this.insert(pool, deal, rel);
    return { id: deal.id, code: deal.code, title: deal.title, measurement_consent: effectiveConsent(deal, rel.marketing) };
  }

  /**
   * Writes a new deal with its deal.created (one statement: sequence, row, outbox) and fills in its code; returns
   * the DealSnapshot the event carries.
   */
  private async insert(db: Pool | PoolClient, deal: Deal, rel: DealRelations): Promise<DealSnapshot> {
    const [created] = await run<{ id: string; code: number }>(db, this.sql.create, [
      deal.companyId,
      JSON.stringify(this.sql.deal.row(deal)),
      uuidv7(),
      JSON.stringify({ deal: dealSnapshot(deal, rel) }),
      outboxChannel(this.ctx.schema),
    ]);
    if (!created) throw new Error('deal insert returned no row');
    deal.code = Number(created.code);
    return dealSnapshot(deal, rel);
  }

  /**
   * Admin `POST /leads/{id}/win` with `deal`: the lead is won and, in the same transaction, a deal is created from
   * it (decision 0057): first stage of the primary pipeline, the lead's responsible (the master user when that one
   * is inactive or archived), the acting user as creator, the lead's visibility, effective consent, effective
   * origin and organization, the `value` sent. lead.won carries the DealSnapshot; deal.created fires.
   */
  winLead(companyId: string, ref: string, userId: string, body: WonLeadDeal) {
    return this.leads.win(companyId, ref, userId, async (client, { lead, rel: leadRel }, by) => {
      const [row] = await run(client, this.sql.createReads, [companyId, null, lead.responsibleId, by.id]);
      const reads = this.sql.leads.createReadsFromRow(row ?? {});
      const { stage, pipeline } = reads;
      if (!stage || !pipeline) throw invalid('deal: the company has no primary pipeline with a stage to put the deal in');
      const { user: responsible } = responsibleOf(reads, lead.responsibleId);
      const leadSourceId = effectiveLeadSourceId(lead.leadSourceId, leadRel.marketing.latest);
      const now = new Date();
      const deal: Deal = {
        ...newSalesRecord(
          { companyId, userId: by.id },
          { title: body.title, visibility: lead.visibility === LeadVisibility.team ? 1 : 0 },
          { stage, pipeline, responsible },
          effectiveConsent(lead, leadRel.marketing),
          leadSourceId,
          now,
        ),
        organizationId: lead.organizationId ?? null,
        value: body.value ?? null,
        expectedCloseDate: null,
        temperature: null,
        wonReasonDescription: null,
        leadId: lead.id,
      };
      const leadSource = leadSourceId ? (leadRel.marketing.leadSources.get(leadSourceId) ?? null) : null;
      const rel = newDealRelations({
        stage,
        pipeline,
        users: [responsible, by],
        leadSource,
        lead: { id: lead.id, code: lead.code, title: lead.title },
      });
      return this.insert(client, deal, rel);
    });
  }

  /** Admin `POST /deals/{id}/win`: deal.won with the gain reasons (in the order sent) and the description. */
  async win(companyId: string, ref: string, userId: string, gainReasonIds: string[], description: string | null) {
    await this.actions.requireOf(companyId, ref);
    const reasons = await this.actions.reasons(companyId, 'gain_reason', gainReasonIds, 'gain_reason_ids');
    return this.actions.win(companyId, ref, userId, {
      columns: { wonReasonDescription: description },
      gainReasons: reasons,
      payload: ({ snapshot, ...won }) => ({
        deal: snapshot,
        ...won,
        customer_id: null,
        gain_reason: reasons[0] ? namedSummary(reasons[0]) : null,
        gain_reasons: reasons.map(namedSummary),
        won_reason_description: description,
      }),
    });
  }

  /** GET /deals/{id} (UUID or code): the DealSnapshot plus the stages of its pipeline; visibility as for leads. */
  async detail(actor: Actor, ref: string) {
    const byId = isUuid(ref);
    const st = byId ? this.sql.detailById : CODE.test(ref) ? this.sql.detailByCode : null;
    if (!st) throw notFound('Deal');
    const pool = await this.pool;
    const [row] = await run(pool, st, [actor.companyId, byId ? ref : Number(ref), actor.userId]);
    if (!row) {
      await this.visibleId(actor, ref);
      throw notFound('Deal');
    }
    const { deal, rel } = this.sql.fromRow(row);
    return {
      ...dealSnapshot(deal, rel),
      pipeline_stages: rel.pipelineStages.map((s) => ({ id: s.id, name: s.name, position: s.position })),
    };
  }

  /** A deal the actor may see: its id (404 absent or another company's, 403 hidden by visibility). */
  async visibleId(actor: Actor, ref: string): Promise<string> {
    const byId = isUuid(ref);
    if (!byId && !CODE.test(ref)) throw notFound('Deal');
    const [row] = await run<{ id: string; visible: boolean }>(await this.pool, this.sql.access, [
      actor.companyId,
      byId ? ref : null,
      byId ? null : Number(ref),
      actor.userId,
    ]);
    if (!row) throw notFound('Deal');
    if (!row.visible) throw forbidden('The key creator may not see this deal');
    return row.id;
  }
}
