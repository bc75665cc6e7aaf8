import type { EntityManager } from '@svc/platform/db/orm';
import { invalid, isUuid, notFound } from '@svc/platform/errors';
import type { ServiceContext } from '@svc/platform/service';
import { v7 as uuidv7 } from 'uuid';
import { Company, User } from '../companies/company.entity.js';
import { nextCode } from '../companies/company.service.js';
import { recordAcquisition } from '../marketing/acquisition.service.js';
import { resolveOrigin } from '../marketing/origin.js';
import { withoutSensitiveText } from '../marketing/redaction.js';
import { originSourceName, type PreparedMarketing, prepareMarketing } from '../marketing/tracking.js';
import { Pipeline, Stage } from '../pipelines/pipeline.entity.js';
import { Lead, LeadStatus, LeadView, type MeasurementConsent } from './lead.entity.js';
import type { CreateLeadBody } from './lead.schema.js';
import { effectiveConsent, type LeadRelations, leadSnapshot, loadLeadRelations } from './lead.snapshot.js';

export interface Actor {
  companyId: string;
  userId: string;
}

async function resolveStage(em: EntityManager, companyId: string, stageId: string | undefined) {
  if (stageId) {
    const stage = await em.findOne(Stage, { id: stageId, companyId });
    if (!stage) throw invalid('stage_id: no such stage in the company');
    const pipeline = await em.findOneOrFail(Pipeline, { id: stage.pipelineId, companyId });
    return { stage, pipeline };
  }
  const pipeline = await em.findOne(Pipeline, { companyId, isPrimary: true });
  if (!pipeline) throw invalid('stage_id: the company has no primary pipeline; send stage_id');
  const stage = await em.findOne(Stage, { companyId, pipelineId: pipeline.id }, { orderBy: { position: 'asc' } });
  if (!stage) throw invalid('stage_id: the primary pipeline has no stages; send stage_id');
  return { stage, pipeline };
}

/**
 * The responsible user: the one sent, else the key creator. An inactive or archived user hands the lead
 * to the account's master user.
 */
async function resolveResponsible(em: EntityManager, actor: Actor, responsibleId: string | undefined) {
  const id = responsibleId ?? actor.userId;
  const user = await em.findOne(User, { id, companyId: actor.companyId });
  if (!user) throw invalid('responsible_id: no such user in the company');
  if (user.active && !user.archived) return user;
  const company = await em.findOneOrFail(Company, { id: actor.companyId });
  return em.findOneOrFail(User, { id: company.masterUserId, companyId: actor.companyId });
}

/**
 * POST /leads. The marketing object and the consent are settled first, without storage (a divergence is a
 * 400 with nothing written, before idempotency has anything to reserve); then one transaction resolves the
 * origin, writes the lead, its acquisition snapshot and the lead.created event.
 */
export async function createLead(ctx: ServiceContext, actor: Actor, body: CreateLeadBody) {
  const marketing = prepareMarketing(body.measurement_consent, body.marketing);
  const em = ctx.orm.em.fork();
  try {
    return await em.transactional((tx) => writeLead(ctx, tx, actor, body, marketing));
  } catch (err) {
    throw withoutSensitiveText(err, marketing.sensitive);
  }
}

async function writeLead(ctx: ServiceContext, tx: EntityManager, actor: Actor, body: CreateLeadBody, marketing: PreparedMarketing) {
  const { stage, pipeline } = await resolveStage(tx, actor.companyId, body.stage_id);
  const responsible = await resolveResponsible(tx, actor, body.responsible_id);
  const creator =
    responsible.id === actor.userId ? responsible : await tx.findOneOrFail(User, { id: actor.userId, companyId: actor.companyId });
  const draft = marketing.acquisition;
  const origin = await resolveOrigin(tx, actor.companyId, {
    crmLeadSourceId: body.crm_lead_source_id,
    svcCode: draft?.svc_code,
    sourceName: draft && originSourceName(draft),
  });
  const now = new Date();
  const lead = tx.create(Lead, {
    id: uuidv7(),
    companyId: actor.companyId,
    code: await nextCode(tx, actor.companyId, 'lead'),
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
  });
  const acquisition = draft ? recordAcquisition(tx, lead, draft, origin, now) : null;
  const rel: LeadRelations = {
    stage,
    pipeline,
    pipelineStages: [],
    users: new Map([
      [responsible.id, responsible],
      [creator.id, creator],
    ]),
    // What loadLeadMarketing would read, already in memory.
    marketing: {
      latest: acquisition,
      latestDecision: (acquisition?.measurementConsent as MeasurementConsent | null | undefined) ?? null,
      leadSources: new Map(origin.leadSource ? [[origin.leadSource.id, origin.leadSource]] : []),
    },
  };
  await ctx.recordEvents(tx, [{ companyId: actor.companyId, eventKey: 'lead.created', payload: { lead: leadSnapshot(lead, rel) } }]);
  await tx.flush();
  return { id: lead.id, code: lead.code, title: lead.title, measurement_consent: effectiveConsent(lead, rel.marketing) };
}

async function findLead(em: EntityManager, companyId: string, ref: string): Promise<Lead> {
  const where = isUuid(ref) ? { id: ref, companyId } : /^[1-9]\d{0,9}$/.test(ref) ? { code: Number(ref), companyId } : null;
  const lead = where && (await em.findOne(Lead, where));
  if (!lead) throw notFound('Lead');
  return lead;
}

/** GET /leads/{id}: the lead detail; each call records a view by the key creator. */
export async function getLeadDetail(ctx: ServiceContext, actor: Actor, ref: string) {
  const em = ctx.orm.em.fork();
  const lead = await findLead(em, actor.companyId, ref);
  em.create(LeadView, { id: uuidv7(), companyId: actor.companyId, leadId: lead.id, userId: actor.userId, viewedAt: new Date() });
  await em.flush();
  const rel = await loadLeadRelations(em, lead);
  const views = await em.count(LeadView, { companyId: actor.companyId, leadId: lead.id });
  const snapshot = leadSnapshot(lead, rel);
  return {
    ...snapshot,
    pipeline_stages: rel.pipelineStages.map((s) => ({ id: s.id, name: s.name, position: s.position })),
    stage_durations: [],
    views_count: views,
    associations_count: { items: 0, tasks: 0, qualifications: 0, notes: 0, files: 0, activities: 0, proposals: 0, deals: 0 },
  };
}
