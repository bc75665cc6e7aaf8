import { nativePool, run } from '@svc/platform/db/native';
import { forbidden, invalid, isUuid, notFound } from '@svc/platform/errors';
import { outboxChannel } from '@svc/platform/events/outbox';
import type { ServiceContext } from '@svc/platform/service';
import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { type CreationAnswer, createOnce } from '../leads/idempotency.js';
import { type Actor, creationBasics, newSalesRecord, originOf } from '../leads/lead.service.js';
import { effectiveConsent, noRelations } from '../leads/lead.snapshot.js';
import type { LeadSql } from '../leads/lead.sql.js';
import { withoutSensitiveText } from '../marketing/redaction.js';
import { type PreparedMarketing, prepareMarketing } from '../marketing/tracking.js';
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
      ...noRelations(),
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
