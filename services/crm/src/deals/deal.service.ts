import { nativePool, run } from '@svc/platform/db/native';
import { forbidden, invalid, isUuid, notFound } from '@svc/platform/errors';
import { outboxChannel } from '@svc/platform/events/outbox';
import type { ServiceContext } from '@svc/platform/service';
import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { type CreationAnswer, createOnce } from '../leads/idempotency.js';
import { LeadStatus } from '../leads/lead.entity.js';
import { type Actor, requireQualityReason, responsibleOf, stageOf } from '../leads/lead.service.js';
import { effectiveConsent } from '../leads/lead.snapshot.js';
import type { LeadSql } from '../leads/lead.sql.js';
import { resolveOrigin } from '../marketing/origin.js';
import { withoutSensitiveText } from '../marketing/redaction.js';
import { originSourceName, type PreparedMarketing, prepareMarketing } from '../marketing/tracking.js';
import type { Deal } from './deal.entity.js';
import type { CreateDealBody } from './deal.schema.js';
import { type DealRelations, dealSnapshot } from './deal.snapshot.js';
import { DealSql } from './deal.sql.js';

/** Fields of POST /leads that deals do not take yet (they need deal relation tables): a 400 naming them. */
const NOT_YET = ['tags', 'persons_id', 'person', 'organization_id', 'organization', 'custom_fields', 'followers', 'note'] as const;

const CODE = /^[1-9]\d{0,9}$/;

/** crm's deal operations (decision 0050): the lead rules and statements, on the deals table. */
export class Deals {
  readonly sql: DealSql;
  private readonly pool: Promise<Pool>;

  constructor(
    readonly ctx: ServiceContext,
    leadSql: LeadSql,
  ) {
    this.sql = new DealSql(ctx.orm, leadSql);
    this.pool = nativePool(ctx.orm);
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
    const responsibleId = body.responsible_id ?? actor.userId;
    const [readRow] = await run(pool, this.sql.createReads, [actor.companyId, body.stage_id ?? null, responsibleId, actor.userId]);
    const reads = this.sql.leads.createReadsFromRow(readRow ?? {});
    const { stage, pipeline } = stageOf(reads, body.stage_id);
    const { user: responsible } = responsibleOf(reads, responsibleId);
    const creator = reads.users.find((u) => u.id === actor.userId);
    if (!creator) throw invalid('The key creator is not a user of the company');
    requireQualityReason(pipeline, body.quality_rating ?? null, body.quality_reason ?? null);
    if (reads.requiredFields.length) {
      throw invalid(`custom_fields: required fields missing: ${reads.requiredFields.map((f) => `${f.name} (${f.id})`).join(', ')}`);
    }
    const draft = marketing.acquisition;
    const origin = await resolveOrigin(this.ctx.orm.em.fork(), actor.companyId, {
      crmLeadSourceId: body.crm_lead_source_id,
      svcCode: draft?.svc_code,
      sourceName: draft && originSourceName(draft),
    });
    const now = new Date();
    const deal: Deal = {
      id: uuidv7(),
      companyId: actor.companyId,
      code: 0, // taken from the company's sequence by the write statement
      title: body.title,
      pipelineId: pipeline.id,
      stageId: stage.id,
      responsibleId: responsible.id,
      createdById: actor.userId,
      status: LeadStatus.open,
      visibility: body.visibility ?? 0,
      measurementConsent: marketing.consent,
      qualityRating: body.quality_rating ?? null,
      qualityReason: body.quality_reason ?? null,
      value: body.value ?? null,
      leadSourceId: origin.leadSource?.id ?? null,
      organizationId: null,
      createdAt: now,
      updatedAt: now,
      archivedAt: null,
      wonDate: null,
      lostDate: null,
      lastActivityAt: null,
      lostReasonDescription: null,
      expectedCloseDate: body.expected_close_date ? new Date(body.expected_close_date) : null,
      temperature: body.temperature ?? null,
      wonReasonDescription: null,
      leadId: null,
    };
    const rel: DealRelations = {
      stage,
      pipeline,
      pipelineStages: [],
      users: new Map([
        [responsible.id, responsible],
        [creator.id, creator],
      ]),
      marketing: {
        latest: null,
        latestDecision: null,
        leadSources: new Map(origin.leadSource ? [[origin.leadSource.id, origin.leadSource]] : []),
      },
      tags: [],
      participants: [],
      organization: null,
      customFields: [],
      followers: [],
      lossReasons: [],
      lead: null,
    };
    const [created] = await run<{ id: string; code: number }>(pool, this.sql.create, [
      actor.companyId,
      JSON.stringify(this.sql.deal.row(deal)),
      uuidv7(),
      JSON.stringify({ deal: dealSnapshot(deal, rel) }),
      outboxChannel(this.ctx.schema),
    ]);
    if (!created) throw new Error('deal insert returned no row');
    deal.code = Number(created.code);
    return { id: deal.id, code: deal.code, title: deal.title, measurement_consent: effectiveConsent(deal, rel.marketing) };
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
