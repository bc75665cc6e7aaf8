import { nativePool, run } from '@svc/platform/db/native';
import { invalid, isUuid, notFound } from '@svc/platform/errors';
import { outboxChannel } from '@svc/platform/events/outbox';
import type { ServiceContext } from '@svc/platform/service';
import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import type { User } from '../companies/company.entity.js';
import { acquisitionOf } from '../marketing/acquisition.service.js';
import { resolveOrigin } from '../marketing/origin.js';
import { withoutSensitiveText } from '../marketing/redaction.js';
import { originSourceName, type PreparedMarketing, prepareMarketing } from '../marketing/tracking.js';
import { type Lead, LeadStatus, type MeasurementConsent } from './lead.entity.js';
import type { CreateLeadBody } from './lead.schema.js';
import { effectiveConsent, type LeadRelations, leadSnapshot } from './lead.snapshot.js';
import { type CreateReads, LeadSql } from './lead.sql.js';
import { LeadViewFolder } from './lead.views.js';

export interface Actor {
  companyId: string;
  userId: string;
}

/** crm's lead operations: the ORM for the rare paths, named statements on its pool for the hot ones. */
export class Leads {
  readonly sql: LeadSql;
  readonly views: LeadViewFolder;
  private readonly pool: Promise<Pool>;

  constructor(readonly ctx: ServiceContext) {
    this.sql = new LeadSql(ctx.orm);
    this.pool = nativePool(ctx.orm);
    this.views = new LeadViewFolder(this.pool, this.sql, ctx.logger);
  }

  /**
   * POST /leads. The marketing object and the consent are settled first, without storage (a divergence is a
   * 400 with nothing written, before idempotency has anything to reserve). One read statement brings the stage,
   * pipeline and users; one write statement takes the next code and writes the lead, its acquisition snapshot
   * and the lead.created event (decision 0010).
   */
  async create(actor: Actor, body: CreateLeadBody) {
    const marketing = prepareMarketing(body.measurement_consent, body.marketing);
    try {
      return await this.write(actor, body, marketing);
    } catch (err) {
      throw withoutSensitiveText(err, marketing.sensitive);
    }
  }

  private async write(actor: Actor, body: CreateLeadBody, marketing: PreparedMarketing) {
    const pool = await this.pool;
    const [readRow] = await run(pool, this.sql.createReads, [
      actor.companyId,
      body.stage_id ?? null,
      body.responsible_id ?? actor.userId,
      actor.userId,
    ]);
    const reads = this.sql.createReadsFromRow(readRow ?? {});
    const { stage, pipeline } = stageOf(reads, body.stage_id);
    const responsible = responsibleOf(reads, body.responsible_id ?? actor.userId);
    const creator = reads.users.find((u) => u.id === actor.userId);
    if (!creator) throw invalid('The key creator is not a user of the company');
    const draft = marketing.acquisition;
    const origin = await resolveOrigin(this.ctx.orm.em.fork(), actor.companyId, {
      crmLeadSourceId: body.crm_lead_source_id,
      svcCode: draft?.svc_code,
      sourceName: draft && originSourceName(draft),
    });
    const now = new Date();
    const lead: Lead = {
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
      qualityReason: null,
      value: null,
      leadSourceId: origin.leadSource?.id ?? null,
      organizationId: null,
      createdAt: now,
      updatedAt: now,
      archivedAt: null,
      wonDate: null,
      lostDate: null,
      lastActivityAt: null,
      viewsCount: 0,
    };
    const acquisition = draft ? acquisitionOf(lead, draft, origin, now) : null;
    const rel: LeadRelations = {
      stage,
      pipeline,
      pipelineStages: [],
      users: new Map([
        [responsible.id, responsible],
        [creator.id, creator],
      ]),
      marketing: {
        latest: acquisition,
        latestDecision: (acquisition?.measurementConsent as MeasurementConsent | null | undefined) ?? null,
        leadSources: new Map(origin.leadSource ? [[origin.leadSource.id, origin.leadSource]] : []),
      },
    };
    const [created] = await run<{ id: string; code: number }>(pool, this.sql.create, [
      actor.companyId,
      JSON.stringify(this.sql.lead.row(lead)),
      JSON.stringify(acquisition ? [this.sql.acquisitionRow(acquisition)] : []),
      uuidv7(),
      JSON.stringify({ lead: leadSnapshot(lead, rel) }),
      outboxChannel(this.ctx.schema),
    ]);
    if (!created) throw new Error('lead insert returned no row');
    return { id: created.id, code: Number(created.code), title: lead.title, measurement_consent: effectiveConsent(lead, rel.marketing) };
  }

  /** GET /leads/{id}: the lead detail; each call records a view by the key creator and counts it. */
  async detail(actor: Actor, ref: string) {
    const st = isUuid(ref) ? this.sql.detailById : /^[1-9]\d{0,9}$/.test(ref) ? this.sql.detailByCode : null;
    const [row] = st ? await run(await this.pool, st, [actor.companyId, isUuid(ref) ? ref : Number(ref), uuidv7(), actor.userId]) : [];
    if (!row) throw notFound('Lead');
    const { lead, rel } = this.sql.fromRow(row);
    return {
      ...leadSnapshot(lead, rel),
      pipeline_stages: rel.pipelineStages.map((s) => ({ id: s.id, name: s.name, position: s.position })),
      stage_durations: [],
      views_count: row._viewsCount as number,
      associations_count: { items: 0, tasks: 0, qualifications: 0, notes: 0, files: 0, activities: 0, proposals: 0, deals: 0 },
    };
  }
}

/** The stage sent (400 when it is not the company's), else the first stage of the primary pipeline. */
function stageOf(reads: CreateReads, stageId: string | undefined) {
  const { stage, pipeline } = reads;
  if (stage && pipeline) return { stage, pipeline };
  if (stageId) throw invalid('stage_id: no such stage in the company');
  if (!reads.hasPrimary) throw invalid('stage_id: the company has no primary pipeline; send stage_id');
  throw invalid('stage_id: the primary pipeline has no stages; send stage_id');
}

/**
 * The responsible user: the one sent, else the key creator (400 when not the company's). An inactive or
 * archived user hands the lead to the account's master user.
 */
function responsibleOf(reads: CreateReads, id: string): User {
  const user = reads.users.find((u) => u.id === id);
  if (!user) throw invalid('responsible_id: no such user in the company');
  if (user.active && !user.archived) return user;
  const master = reads.users.find((u) => u.id === reads.masterUserId);
  if (!master) throw new Error(`company ${reads.masterUserId} has no master user`);
  return master;
}
