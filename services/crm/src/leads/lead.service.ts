import { inTransaction, nativePool, run, type Statement } from '@svc/platform/db/native';
import { forbidden, invalid, isUuid, notFound } from '@svc/platform/errors';
import { outboxChannel } from '@svc/platform/events/outbox';
import type { ServiceContext } from '@svc/platform/service';
import type { Pool, PoolClient } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import type { LeadSource, NamedItem } from '../catalog/catalog.entity.js';
import { type AnswerInput, type AnswerPlan, type FieldDefinition, planAnswer } from '../catalog/custom-field.answers.js';
import type { User } from '../companies/company.entity.js';
import { CONTACT_TYPES } from '../contacts/contact.service.js';
import { ContactSql, type PersonWithContacts } from '../contacts/contact.sql.js';
import { acquisitionOf } from '../marketing/acquisition.service.js';
import { correctAcquisition } from '../marketing/correction.js';
import { findOrCreateLeadSource, resolveOrigin } from '../marketing/origin.js';
import { withoutSensitiveText } from '../marketing/redaction.js';
import { type AcquisitionDraft, originSourceName, type PreparedMarketing, prepareMarketing } from '../marketing/tracking.js';
import type { Pipeline } from '../pipelines/pipeline.entity.js';
import { type CreationAnswer, createOnce } from './idempotency.js';
import { type Lead, type LeadParticipant, LeadStatus, type LeadTag, type MeasurementConsent } from './lead.entity.js';
import type { CreateLeadBody, ListLeadsQuery, UpdateLeadBody } from './lead.schema.js';
import { effectiveConsent, type LeadRelations, type LeadSnapshot, leadSnapshot, noRelations } from './lead.snapshot.js';
import { type CreateReads, LeadSql, type RichReads } from './lead.sql.js';
import {
  type CustomFieldChange,
  customFieldsWithAnswers,
  namedSummary,
  type RemovedCustomField,
  stageDuration,
  stageSummary,
  tagSummary,
  userSummary,
} from './lead.summaries.js';
import { LeadViewFolder } from './lead.views.js';
import { leadAccess } from './lead.visibility.js';

export interface Actor {
  companyId: string;
  userId: string;
}

export interface LoadedLead {
  lead: Lead;
  rel: LeadRelations;
}

interface PendingEvent {
  key: string;
  payload: Record<string, unknown>;
}

type Json = Record<string, unknown>;

/** The fields of POST /leads that only a richer creation (extra writes in a transaction) handles. */
const RICH_FIELDS = ['tags', 'persons_id', 'person', 'organization_id', 'organization', 'custom_fields', 'followers', 'note'] as const;

/** crm's lead operations: the ORM for the rare paths, named statements on its pool for the hot ones. */
export class Leads {
  readonly sql: LeadSql;
  readonly views: LeadViewFolder;
  private readonly contacts: ContactSql;
  private readonly pool: Promise<Pool>;

  constructor(readonly ctx: ServiceContext) {
    this.sql = new LeadSql(ctx.orm);
    this.contacts = new ContactSql(ctx.orm);
    this.pool = nativePool(ctx.orm);
    this.views = new LeadViewFolder(this.pool, this.sql, ctx.logger);
  }

  /**
   * POST /leads. The marketing object and the consent are settled first, without storage (a divergence is a
   * 400 with nothing written, before idempotency has anything to reserve). Then the idempotency key (the header
   * wins over the body field) is reserved; a title-only creation is one read statement and one write statement
   * (decision 0010), a richer one runs its extra writes in a transaction ending with that same write statement.
   */
  async create(actor: Actor, body: CreateLeadBody, headerKey?: string) {
    const marketing = prepareMarketing(body.measurement_consent, body.marketing);
    const key = headerKey ?? body.idempotency_key;
    try {
      if (!key) return await this.createLead(actor, body, marketing, false);
      return await createOnce(await this.pool, this.sql.keys, actor.companyId, key, () => this.createLead(actor, body, marketing, true));
    } catch (err) {
      throw withoutSensitiveText(err, marketing.sensitive);
    }
  }

  private async createLead(actor: Actor, body: CreateLeadBody, marketing: PreparedMarketing, keyed: boolean): Promise<CreationAnswer> {
    const pool = await this.pool;
    const { stage, pipeline, responsible, handedOver, creator, requested, responsibleId } = await creationBasics(
      pool,
      this.sql.createReads,
      this.sql,
      actor,
      body,
    );

    const rich = handedOver || keyed || RICH_FIELDS.some((f) => body[f] !== undefined && body[f] !== null);
    const refs = rich ? await this.richReads(pool, actor.companyId, body) : null;
    const draft = marketing.acquisition;
    const origin = await originOf(this.ctx, actor, body, draft);
    const now = new Date();
    const lead: Lead = {
      ...newSalesRecord(actor, body, { stage, pipeline, responsible }, marketing.consent, origin.leadSource?.id ?? null, now),
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
      ...noRelations(),
    };
    const createdPayload: Json = {};
    if (body.quality_rating !== undefined) {
      Object.assign(createdPayload, {
        previous_quality: null,
        previous_quality_reason: null,
        new_quality: lead.qualityRating,
        new_quality_reason: lead.qualityReason,
      });
    }
    const write = async (db: Pool | PoolClient) => {
      const [created] = await run<{ id: string; code: number }>(db, this.sql.create, [
        actor.companyId,
        JSON.stringify(this.sql.lead.row(lead)),
        JSON.stringify(acquisition ? [this.sql.acquisitionRow(acquisition)] : []),
        uuidv7(),
        JSON.stringify({ lead: leadSnapshot(lead, rel), ...createdPayload }),
        outboxChannel(this.ctx.schema),
      ]);
      if (!created) throw new Error('lead insert returned no row');
      lead.code = Number(created.code);
    };
    if (!refs) {
      await write(pool);
    } else {
      const plans = this.checkReferences(refs, body, lead);
      await inTransaction(pool, async (client) => {
        await this.writeRelations(client, lead, rel, body, refs, plans, now);
        if (handedOver) {
          await this.insertNote(client, lead, {
            content: `Responsible user ${requested?.name ?? responsibleId} is inactive or archived; the lead was assigned to the account's master user.`,
            isPinned: false,
            automatic: true,
            createdById: null,
          });
        }
        if (plans.length) {
          createdPayload.custom_fields_changed = customFieldsWithAnswers(rel.customFields).map(
            (f): CustomFieldChange => ({ ...f, previous_answers: [] }),
          );
        }
        await write(client);
      });
      if (body.followers?.length || body.note) await this.afterCreation(actor, lead, body, refs);
    }
    return { id: lead.id, code: lead.code, title: lead.title, measurement_consent: effectiveConsent(lead, rel.marketing) };
  }

  private async richReads(
    db: Pool | PoolClient,
    companyId: string,
    body: {
      tags?: string[] | undefined;
      persons_id?: string[] | undefined;
      organization_id?: string | null | undefined;
      followers?: { user_id: string; role_id?: string | null | undefined }[] | undefined;
    },
  ): Promise<RichReads> {
    const [row] = await run(db, this.sql.richReads, [
      companyId,
      body.tags ?? [],
      body.persons_id ?? [],
      body.organization_id ?? null,
      (body.followers ?? []).map((f) => f.user_id),
      (body.followers ?? []).flatMap((f) => (f.role_id ? [f.role_id] : [])),
    ]);
    return this.sql.richReadsFromRow(row ?? {});
  }

  /** Unknown tags, persons, organization or custom fields are a 400 naming the item; returns the answers' plans. */
  private checkReferences(refs: RichReads, body: Partial<CreateLeadBody>, lead: Lead): AnswerPlan[] {
    (body.tags ?? []).forEach((id, i) => {
      if (!refs.tags.some((t) => t.id === id)) throw invalid(`tags[${i}]: unknown tag`);
    });
    (body.persons_id ?? []).forEach((id, i) => {
      if (!refs.persons.some((p) => p.person.id === id)) throw invalid(`persons_id[${i}]: unknown person`);
    });
    if (body.organization_id && !refs.organization) throw invalid('organization_id: unknown organization');
    return this.planAnswers(refs, body.custom_fields ?? [], lead, false);
  }

  private planAnswers(refs: Pick<RichReads, 'fields'>, answers: AnswerInput[], lead: Lead, allowFiles: boolean): AnswerPlan[] {
    const fields = new Map<string, FieldDefinition>(refs.fields.map((f) => [f.field.id, f]));
    const at = new Date();
    return answers.map((a, i) =>
      planAnswer(fields, a, `custom_fields[${i}]`, { companyId: lead.companyId, recordId: lead.id, at, allowFiles }),
    );
  }

  /** The creation's extra rows (persons, organization, participants, tags, answers), written before the lead. */
  private async writeRelations(
    client: PoolClient,
    lead: Lead,
    rel: LeadRelations,
    body: CreateLeadBody,
    refs: RichReads,
    plans: AnswerPlan[],
    at: Date,
  ) {
    const people: PersonWithContacts[] = [];
    if (body.person) people.push(await this.contacts.resolvePerson(client, lead.companyId, body.person, 'person', at));
    for (const id of body.persons_id ?? []) {
      const found = refs.persons.find((p) => p.person.id === id);
      if (found && !people.some((p) => p.person.id === id)) people.push(found);
    }
    if (body.organization) rel.organization = await this.contacts.createOrganization(client, lead.companyId, body.organization, at);
    else if (body.organization_id) rel.organization = refs.organization;
    lead.organizationId = rel.organization?.id ?? null;
    rel.participants = people.map((p, i) => ({ participant: participantRow(lead, p.person.id, i === 0, at), ...p }));
    await this.sql.insert(
      client,
      'lead_participants',
      rel.participants.map((p) => p.participant),
    );
    const tagIds = [...new Set(body.tags ?? [])];
    // The order relationsSelect reads them in: one creation's tags share created_at, so by name (code points,
    // collate "C" there), then id.
    const byCodePoints = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    rel.tags = refs.tags.filter((t) => tagIds.includes(t.id)).sort((a, b) => byCodePoints(a.name, b.name) || byCodePoints(a.id, b.id));
    await this.sql.insert(
      client,
      'lead_tags',
      tagIds.map((tagId): LeadTag => ({ leadId: lead.id, tagId, companyId: lead.companyId, createdAt: at })),
    );
    const values = plans.flatMap((p) => p.rows);
    rel.customFields = plans.flatMap((p) =>
      p.rows.map((value) => ({ field: p.field.field, value, option: p.field.options.find((o) => o.id === value.optionId) ?? null })),
    );
    await this.sql.insert(client, 'custom_field_values', values);
  }

  private async insertNote(
    client: PoolClient,
    lead: Pick<Lead, 'id' | 'companyId'>,
    note: { content: string; isPinned: boolean; automatic: boolean; createdById: string | null },
  ) {
    await this.sql.insert(client, 'lead_notes', [
      { id: uuidv7(), companyId: lead.companyId, leadId: lead.id, createdAt: new Date(), ...note },
    ]);
  }

  /**
   * Followers and note, saved after the record (spec rule 6): a failure is an error answer while the lead stays
   * created (and the idempotency key consumed). Duplicate users count once. The lead's followers change its
   * snapshot, so lead.updated is written with them.
   */
  private async afterCreation(actor: Actor, lead: Lead, body: CreateLeadBody, refs: RichReads) {
    const followers = body.followers ?? [];
    followers.forEach((f, i) => {
      const user = refs.users.find((u) => u.id === f.user_id);
      if (!user) throw invalid(`followers[${i}].user_id: unknown user; the lead ${lead.code} was created without followers and note`);
      if (f.role_id && !refs.roles.some((r) => r.id === f.role_id)) {
        throw invalid(`followers[${i}].role_id: unknown follower role; the lead ${lead.code} was created without followers and note`);
      }
    });
    const users = new Set<string>();
    const rows = followers.flatMap((f) => {
      if (users.has(f.user_id)) return [];
      users.add(f.user_id);
      return [
        {
          id: uuidv7(),
          companyId: lead.companyId,
          leadId: lead.id,
          userId: f.user_id,
          roleId: f.role_id ?? null,
          notes: null,
          createdAt: new Date(),
        },
      ];
    });
    await this.change(lead.companyId, lead.id, async (client) => {
      await this.sql.insert(client, 'lead_followers', rows, true);
      if (body.note) {
        await this.insertNote(client, lead, {
          content: body.note.content,
          isPinned: body.note.is_pinned ?? false,
          automatic: false,
          createdById: actor.userId,
        });
      }
    });
  }

  /** GET /leads/{id}: the lead detail; each call records a view by the key creator and counts it. */
  async detail(actor: Actor, ref: string) {
    const byId = isUuid(ref);
    const st = byId ? this.sql.detailById : /^[1-9]\d{0,9}$/.test(ref) ? this.sql.detailByCode : null;
    if (!st) throw notFound('Lead');
    const pool = await this.pool;
    const [row] = await run(pool, st, [actor.companyId, byId ? ref : Number(ref), uuidv7(), actor.userId]);
    if (!row) {
      const id = await this.idOf(pool, actor.companyId, ref);
      throw id ? forbidden('The key creator may not see this lead') : notFound('Lead');
    }
    const { lead, rel } = this.sql.fromRow(row);
    const extras = this.sql.detailExtrasFromRow(row);
    return {
      ...leadSnapshot(lead, rel),
      pipeline_stages: rel.pipelineStages.map((s) => ({ id: s.id, name: s.name, position: s.position })),
      stage_durations: extras.stagePeriods.map((p) => stageDuration(p.stage, p.seconds)),
      views_count: row._viewsCount as number,
      associations_count: {
        items: 0,
        tasks: 0,
        qualifications: 0,
        notes: extras.notesCount,
        files: 0,
        activities: 0,
        proposals: 0,
        deals: 0,
      },
    };
  }

  private async idOf(db: Pool | PoolClient, companyId: string, ref: string | number): Promise<string | null> {
    const text = String(ref);
    const byId = isUuid(text);
    if (!byId && !/^[1-9]\d{0,9}$/.test(text)) return null;
    const [row] = await run<{ id: string }>(db, this.sql.idOf, [companyId, byId ? text : null, byId ? null : Number(text)]);
    return row?.id ?? null;
  }

  /** A lead the actor may see (404 absent or another company's, 403 hidden by visibility): its id. */
  private async visibleId(actor: Actor, ref: string): Promise<string> {
    const pool = await this.pool;
    const id = await this.idOf(pool, actor.companyId, ref);
    if (!id) throw notFound('Lead');
    const access = await leadAccess(pool, actor.companyId, id, actor.userId);
    if (access === 'absent') throw notFound('Lead');
    if (access === 'hidden') throw forbidden('The key creator may not see this lead');
    return id;
  }

  /**
   * PUT /leads/{id}: every field sent replaces the current value (organization_id null unlinks, persons_id with
   * delete removes, marketing corrects the current acquisition). lead.updated (and stage_changed,
   * custom_field_updated/removed, quality_updated) are written with the change when something changed.
   */
  async update(actor: Actor, ref: string, body: UpdateLeadBody) {
    const id = await this.visibleId(actor, ref);
    const pool = await this.pool;
    const [readRow] = await run(pool, this.sql.createReads, [
      actor.companyId,
      body.stage_id ?? null,
      body.responsible_id ?? actor.userId,
      actor.userId,
    ]);
    const reads = this.sql.createReadsFromRow(readRow ?? {});
    const target = body.stage_id ? stageOf(reads, body.stage_id) : null;
    const responsible = body.responsible_id ? responsibleOf(reads, body.responsible_id) : null;
    const refs = await this.richReads(pool, actor.companyId, {
      persons_id: (body.persons_id ?? []).filter((p) => !p.delete).map((p) => p.person_id),
      organization_id: body.organization_id ?? undefined,
    });
    (body.persons_id ?? []).forEach((p, i) => {
      if (!p.delete && !refs.persons.some((x) => x.person.id === p.person_id)) throw invalid(`persons_id[${i}].person_id: unknown person`);
    });
    if (body.organization_id && !refs.organization) throw invalid('organization_id: unknown organization');
    let manualSource: LeadSource | null | undefined;
    if (body.crm_lead_source_id) {
      manualSource = (await resolveOrigin(this.ctx.orm.em.fork(), actor.companyId, { crmLeadSourceId: body.crm_lead_source_id }))
        .leadSource;
    } else if (body.lead_source) {
      manualSource = await findOrCreateLeadSource(this.ctx.orm.em.fork(), actor.companyId, body.lead_source.name);
    } else if (body.crm_lead_source_id === null || body.lead_source === null) {
      manualSource = null;
    }
    let sensitive: string[] = [];
    try {
      const after = await this.change(actor.companyId, id, async (client, before) => {
        const lead = { ...before.lead };
        const plans = this.planAnswers(refs, body.custom_fields ?? [], lead, false);
        lead.title = body.title;
        if (target) {
          lead.stageId = target.stage.id;
          lead.pipelineId = target.pipeline.id;
        }
        if (responsible) lead.responsibleId = responsible.user.id;
        if (body.visibility !== undefined) lead.visibility = body.visibility;
        if (body.quality_rating !== undefined) lead.qualityRating = body.quality_rating;
        if (body.quality_reason !== undefined) lead.qualityReason = body.quality_reason;
        const qualityChanged = body.quality_rating !== undefined || body.quality_reason !== undefined;
        if (qualityChanged)
          requireQualityReason(target?.pipeline ?? before.rel.pipeline, lead.qualityRating ?? null, lead.qualityReason ?? null);
        const now = new Date();
        if (body.organization)
          lead.organizationId = (await this.contacts.createOrganization(client, lead.companyId, body.organization, now)).id;
        else if (body.organization_id !== undefined) lead.organizationId = body.organization_id;
        const correction = correctAcquisition(
          body.marketing,
          before.rel.marketing.latest,
          effectiveConsent(before.lead, before.rel.marketing),
        );
        sensitive = correction.sensitive;
        if (correction.decision) lead.measurementConsent = correction.decision;
        let origin = manualSource;
        if (correction.draft && correction.originTouched && origin === undefined) {
          origin = (
            await resolveOrigin(this.ctx.orm.em.fork(), actor.companyId, {
              svcCode: correction.draft.svc_code,
              sourceName: originSourceName(correction.draft),
            })
          ).leadSource;
        }
        if (manualSource !== undefined) lead.leadSourceId = manualSource?.id ?? null;
        if (correction.draft) {
          const current = before.rel.marketing.latest;
          const next = acquisitionOf(lead, correction.draft, { leadSource: null, tracker: null }, now);
          next.leadSourceId = origin !== undefined ? (origin?.id ?? null) : (current?.leadSourceId ?? null);
          next.trackerId = current?.trackerId ?? null;
          if (current) {
            next.id = current.id;
            next.createdAt = current.createdAt;
          }
          await run(client, this.sql.upsertAcquisition, [JSON.stringify(this.sql.acquisitionRow(next))]);
        } else if (manualSource !== undefined && before.rel.marketing.latest) {
          await run(client, this.sql.setAcquisitionSource, [lead.companyId, before.rel.marketing.latest.id, manualSource?.id ?? null]);
        }
        await run(client, this.sql.updateLead, [lead.companyId, lead.id, JSON.stringify(this.sql.lead.row(lead))]);
        if (lead.stageId !== before.lead.stageId) await run(client, this.sql.enterStage, [lead.companyId, lead.id, lead.stageId, now]);
        await this.updateParticipants(client, lead, before, body, refs, now);
        const changedPlans = plans.filter((p) => !holdsAnswers(before, p));
        if (changedPlans.length) {
          await run(client, this.sql.clearAnswers, [lead.companyId, lead.id, changedPlans.map((p) => p.field.field.id)]);
          await this.sql.insert(
            client,
            'custom_field_values',
            changedPlans.flatMap((p) => p.rows),
          );
        }
      });
      return {
        id: after.lead.id,
        code: after.lead.code,
        title: after.lead.title,
        status: after.lead.status,
        quality_rating: after.lead.qualityRating ?? null,
        quality_reason: after.lead.qualityReason ?? null,
        lost_reason_description: after.lead.lostReasonDescription ?? null,
      };
    } catch (err) {
      throw withoutSensitiveText(err, sensitive);
    }
  }

  private async updateParticipants(client: PoolClient, lead: Lead, before: LoadedLead, body: UpdateLeadBody, refs: RichReads, at: Date) {
    const removed = (body.persons_id ?? []).filter((p) => p.delete).map((p) => p.person_id);
    if (removed.length) await run(client, this.sql.removeParticipants, [lead.companyId, lead.id, removed]);
    const kept = before.rel.participants.filter((p) => !removed.includes(p.person.id));
    const added: PersonWithContacts[] = [];
    for (const p of body.persons_id ?? []) {
      const found = !p.delete && refs.persons.find((x) => x.person.id === p.person_id);
      if (found && !kept.some((k) => k.person.id === p.person_id)) added.push(found);
    }
    if (body.person) {
      const person = await this.contacts.resolvePerson(client, lead.companyId, body.person, 'person', at);
      if (!kept.some((k) => k.person.id === person.person.id) && !added.some((a) => a.person.id === person.person.id)) added.push(person);
    }
    const hasMain = kept.some((k) => k.participant.main);
    const rows = added.map((p, i) => participantRow(lead, p.person.id, !hasMain && i === 0, at));
    await this.sql.insert(client, 'lead_participants', rows, true);
    if (body.phone || body.email) {
      const main = kept.find((k) => k.participant.main) ?? kept[0] ?? added[0];
      if (!main) throw invalid(`${body.phone ? 'phone' : 'email'}: the lead has no person to hold the contact; send person or persons_id`);
      let holder: PersonWithContacts = main;
      if (body.email) holder = await this.contacts.addContact(client, holder, CONTACT_TYPES.email, body.email);
      if (body.phone) await this.contacts.addContact(client, holder, CONTACT_TYPES.phone, body.phone);
    }
  }

  /**
   * One change of a lead in a transaction: its row is locked and its snapshot read (relationsSelect), `work`
   * writes, the snapshot is read again. When it differs (updated_at aside), updated_at moves and the events
   * are written in the same transaction: the ones `events` derives, and lead.updated with the new snapshot.
   */
  async change(
    companyId: string,
    leadId: string,
    work: (client: PoolClient, before: LoadedLead) => Promise<void>,
    events: (before: LoadedLead, after: LoadedLead, snapshot: LeadSnapshot) => PendingEvent[] = defaultEvents,
  ): Promise<LoadedLead> {
    const pool = await this.pool;
    return inTransaction(pool, async (client) => {
      const [row] = await run(client, this.sql.snapshotForUpdate, [companyId, leadId]);
      if (!row) throw notFound('Lead');
      const before = this.sql.fromRow(row);
      await work(client, before);
      const [afterRow] = await run(client, this.sql.snapshot, [companyId, leadId]);
      const after = this.sql.fromRow(afterRow!);
      if (comparable(before) === comparable(after)) return after;
      const [touched] = await run<{ updated_at: string }>(client, this.sql.touch, [companyId, leadId]);
      after.lead.updatedAt = new Date(touched!.updated_at);
      const snapshot = leadSnapshot(after.lead, after.rel);
      const pending = [...events(before, after, snapshot), { key: 'lead.updated', payload: snapshot }];
      await run(client, this.sql.events, [
        companyId,
        JSON.stringify(pending.map((e) => ({ id: uuidv7(), key: e.key, payload: e.payload }))),
        outboxChannel(this.ctx.schema),
      ]);
      return after;
    });
  }

  /** GET /leads: the leads the key creator may see, newest first, with filters and paging (decision 0045). */
  async list(actor: Actor, q: ListLeadsQuery) {
    return this.sql.list.page(await this.pool, actor, q, (row) => {
      const { lead, rel } = this.sql.fromRow(row);
      return leadSnapshot(lead, rel);
    });
  }

  // The CRM's dedicated actions (admin API): each fires its event (and lead.updated) in the change's transaction.

  async requireLeadOf(companyId: string, ref: string): Promise<string> {
    const id = await this.idOf(await this.pool, companyId, ref);
    if (!id) throw notFound('Lead');
    return id;
  }

  private async actingUser(companyId: string, userId: string): Promise<User> {
    const [row] = await run(await this.pool, this.sql.createReads, [companyId, null, userId, userId]);
    const user = this.sql.createReadsFromRow(row ?? {}).users.find((u) => u.id === userId);
    if (!user) throw invalid('user_id: no such user in the company');
    return user;
  }

  async win(companyId: string, ref: string, userId: string) {
    const id = await this.requireLeadOf(companyId, ref);
    const by = await this.actingUser(companyId, userId);
    const now = new Date();
    return this.change(
      companyId,
      id,
      async (client, before) => {
        const lead = { ...before.lead, status: LeadStatus.won, wonDate: now, lostDate: null, lostReasonDescription: null };
        await run(client, this.sql.updateLead, [companyId, id, JSON.stringify(this.sql.lead.row(lead))]);
        await run(client, this.sql.setLossReasons, [companyId, id, '[]']);
      },
      (_b, _a, snapshot) => [
        { key: 'lead.won', payload: { lead: snapshot, won_date: now.toISOString(), won_by: userSummary(by), deal: null } },
      ],
    );
  }

  async lose(companyId: string, ref: string, userId: string, reasonIds: string[], description: string | null) {
    const id = await this.requireLeadOf(companyId, ref);
    const by = await this.actingUser(companyId, userId);
    const [row] = await run(await this.pool, this.sql.lossReasons, [companyId, reasonIds]);
    const reasons = this.sql.namedFromRows((row?.reasons as Json[] | null) ?? []);
    reasonIds.forEach((rid, i) => {
      if (!reasons.some((r) => r.id === rid)) throw invalid(`loss_reason_ids[${i}]: unknown loss reason`);
    });
    const ordered = reasonIds.map((rid) => reasons.find((r) => r.id === rid)!) as NamedItem[];
    const now = new Date();
    return this.change(
      companyId,
      id,
      async (client, before) => {
        const lead = { ...before.lead, status: LeadStatus.lost, lostDate: now, wonDate: null, lostReasonDescription: description };
        await run(client, this.sql.updateLead, [companyId, id, JSON.stringify(this.sql.lead.row(lead))]);
        await run(client, this.sql.setLossReasons, [
          companyId,
          id,
          JSON.stringify(ordered.map((r, i) => ({ lead_id: id, reason_id: r.id, company_id: companyId, position: i + 1 }))),
        ]);
      },
      (_b, _a, snapshot) => [
        {
          key: 'lead.lost',
          payload: {
            lead: snapshot,
            lost_date: now.toISOString(),
            lost_by: userSummary(by),
            loss_reason: ordered[0] ? namedSummary(ordered[0]) : null,
            loss_reasons: ordered.map(namedSummary),
            loss_reason_description: description,
          },
        },
      ],
    );
  }

  async move(companyId: string, ref: string, userId: string, stageId: string) {
    const id = await this.requireLeadOf(companyId, ref);
    await this.actingUser(companyId, userId);
    const [readRow] = await run(await this.pool, this.sql.createReads, [companyId, stageId, userId, userId]);
    const target = stageOf(this.sql.createReadsFromRow(readRow ?? {}), stageId);
    const now = new Date();
    return this.change(companyId, id, async (client, before) => {
      if (before.lead.stageId === target.stage.id) return;
      const lead = { ...before.lead, stageId: target.stage.id, pipelineId: target.pipeline.id };
      await run(client, this.sql.updateLead, [companyId, id, JSON.stringify(this.sql.lead.row(lead))]);
      await run(client, this.sql.enterStage, [companyId, id, target.stage.id, now]);
    });
  }

  async addTags(companyId: string, ref: string, userId: string, tagIds: string[]) {
    const id = await this.requireLeadOf(companyId, ref);
    await this.actingUser(companyId, userId);
    const refs = await this.richReads(await this.pool, companyId, { tags: tagIds });
    tagIds.forEach((t, i) => {
      if (!refs.tags.some((x) => x.id === t)) throw invalid(`tag_ids[${i}]: unknown tag`);
    });
    const at = new Date();
    return this.change(
      companyId,
      id,
      async (client) => {
        const rows = [...new Set(tagIds)].map((tagId): LeadTag => ({ leadId: id, tagId, companyId, createdAt: at }));
        await this.sql.insert(client, 'lead_tags', rows, true);
      },
      (before, after, snapshot) => {
        const added = after.rel.tags.filter((t) => !before.rel.tags.some((b) => b.id === t.id));
        return added.length ? [{ key: 'lead.tag_added', payload: { lead: snapshot, added_tags: added.map(tagSummary) } }] : [];
      },
    );
  }

  async removeTag(companyId: string, ref: string, userId: string, tagId: string) {
    const id = await this.requireLeadOf(companyId, ref);
    await this.actingUser(companyId, userId);
    return this.change(
      companyId,
      id,
      async (client, before) => {
        if (!before.rel.tags.some((t) => t.id === tagId)) throw notFound('Tag of the lead');
        await run(client, this.sql.removeTags, [companyId, id, [tagId]]);
      },
      (before, after, snapshot) => {
        const removed = before.rel.tags.filter((t) => !after.rel.tags.some((a) => a.id === t.id));
        return [{ key: 'lead.tag_removed', payload: { lead: snapshot, removed_tags: removed.map(tagSummary) } }];
      },
    );
  }

  async setCustomField(companyId: string, ref: string, userId: string, answer: AnswerInput) {
    const id = await this.requireLeadOf(companyId, ref);
    await this.actingUser(companyId, userId);
    const refs = await this.richReads(await this.pool, companyId, {});
    return this.change(
      companyId,
      id,
      async (client, before) => {
        const [plan] = this.planAnswers(refs, [answer], before.lead, true);
        if (!plan) return;
        if (!plan.rows.length) throw invalid('value: send value, option_id or option_ids; DELETE removes an answer');
        if (holdsAnswers(before, plan)) return;
        await run(client, this.sql.clearAnswers, [companyId, id, [plan.field.field.id]]);
        await this.sql.insert(client, 'custom_field_values', plan.rows);
      },
      defaultEvents,
    );
  }

  async removeCustomField(companyId: string, ref: string, userId: string, fieldId: string) {
    const id = await this.requireLeadOf(companyId, ref);
    await this.actingUser(companyId, userId);
    return this.change(companyId, id, async (client, before) => {
      if (!before.rel.customFields.some((f) => f.field.id === fieldId)) throw notFound('Custom field answer of the lead');
      await run(client, this.sql.clearAnswers, [companyId, id, [fieldId]]);
    });
  }

  async setQuality(companyId: string, ref: string, userId: string, rating: number, reason: string | null) {
    const id = await this.requireLeadOf(companyId, ref);
    await this.actingUser(companyId, userId);
    return this.change(companyId, id, async (client, before) => {
      requireQualityReason(before.rel.pipeline, rating, reason);
      const lead = { ...before.lead, qualityRating: rating, qualityReason: reason };
      await run(client, this.sql.updateLead, [companyId, id, JSON.stringify(this.sql.lead.row(lead))]);
    });
  }
}

/**
 * The events a change fires besides lead.updated, read off the two snapshots: stage_changed on a stage move,
 * custom_field_updated / custom_field_removed on answers created, changed or removed, quality_updated when the
 * qualification is created or changed.
 */
function defaultEvents(before: LoadedLead, after: LoadedLead, snapshot: LeadSnapshot): PendingEvent[] {
  const events: PendingEvent[] = [];
  if (before.lead.stageId !== after.lead.stageId) {
    events.push({
      key: 'lead.stage_changed',
      payload: {
        previous_stage: stageSummary(before.rel.stage, before.rel.pipeline),
        current_stage: stageSummary(after.rel.stage, after.rel.pipeline),
        lead: snapshot,
      },
    });
  }
  const was = new Map(customFieldsWithAnswers(before.rel.customFields).map((f) => [f.field_id, f]));
  const now = new Map(customFieldsWithAnswers(after.rel.customFields).map((f) => [f.field_id, f]));
  const same = (a: { answers: { option_id: string | null; value: string | null }[] }, b: typeof a) =>
    JSON.stringify(a.answers.map((x) => [x.option_id, x.value])) === JSON.stringify(b.answers.map((x) => [x.option_id, x.value]));
  const changed: CustomFieldChange[] = [];
  for (const [fieldId, field] of now) {
    const previous = was.get(fieldId);
    if (!previous || !same(previous, field)) changed.push({ ...field, previous_answers: previous?.answers ?? [] });
  }
  const removed: RemovedCustomField[] = [...was.values()]
    .filter((f) => !now.has(f.field_id))
    .map((f) => ({ field_id: f.field_id, field_name: f.field_name, field_type: f.field_type, previous_answers: f.answers }));
  if (changed.length) events.push({ key: 'lead.custom_field_updated', payload: { lead: snapshot, custom_fields_changed: changed } });
  if (removed.length) events.push({ key: 'lead.custom_field_removed', payload: { lead: snapshot, removed_fields: removed } });
  const q0 = before.lead;
  const q1 = after.lead;
  if ((q0.qualityRating ?? null) !== (q1.qualityRating ?? null) || (q0.qualityReason ?? null) !== (q1.qualityReason ?? null)) {
    events.push({
      key: 'lead.quality_updated',
      payload: {
        lead: snapshot,
        previous_quality: q0.qualityRating ?? null,
        previous_quality_reason: q0.qualityReason ?? null,
        new_quality: q1.qualityRating ?? null,
        new_quality_reason: q1.qualityReason ?? null,
      },
    });
  }
  return events;
}

/** Whether the lead already holds exactly the answers a plan writes (rewriting them would change only their ids). */
function holdsAnswers(before: LoadedLead, plan: AnswerPlan): boolean {
  const key = (optionId: string | null | undefined, value: string | null | undefined) => `${optionId ?? ''}\u0000${value ?? ''}`;
  const held = before.rel.customFields
    .filter((c) => c.field.id === plan.field.field.id)
    .map((c) => key(c.value.optionId, c.value.value))
    .sort();
  const planned = plan.rows.map((r) => key(r.optionId, r.value)).sort();
  return held.length === planned.length && held.every((k, i) => k === planned[i]);
}

/** A snapshot as compared for "did anything change": updated_at and views aside. */
function comparable({ lead, rel }: LoadedLead): string {
  const { updated_at: _u, ...rest } = leadSnapshot(lead, rel);
  return JSON.stringify(rest);
}

const hasAnswer = (a: AnswerInput) =>
  (a.value !== null && a.value !== undefined && String(a.value).trim() !== '') || !!a.option_id || !!a.option_ids?.length;

function participantRow(lead: Pick<Lead, 'id' | 'companyId'>, personId: string, main: boolean, at: Date): LeadParticipant {
  return { id: uuidv7(), companyId: lead.companyId, leadId: lead.id, personId, main, role: null, notes: null, createdAt: at };
}

/** A qualification in a funnel that demands a reason needs one (decision 0040). */
export function requireQualityReason(pipeline: Pipeline | undefined, rating: number | null, reason: string | null) {
  if (pipeline?.requiresQualityReason && rating !== null && !reason?.trim()) {
    throw invalid(`quality_reason: required by the pipeline ${pipeline.name} when quality_rating is set`);
  }
}

/**
 * The columns a new lead and a new deal share (salesRecordProperties): open, in the checked stage, with the checked
 * responsible; its code comes from the company's sequence in the write statement.
 */
export function newSalesRecord(
  actor: Actor,
  body: Pick<CreateLeadBody, 'title' | 'visibility' | 'quality_rating' | 'quality_reason'>,
  basics: { stage: { id: string }; pipeline: { id: string }; responsible: { id: string } },
  consent: MeasurementConsent,
  leadSourceId: string | null,
  now: Date,
) {
  return {
    id: uuidv7(),
    companyId: actor.companyId,
    code: 0,
    title: body.title,
    pipelineId: basics.pipeline.id,
    stageId: basics.stage.id,
    responsibleId: basics.responsible.id,
    createdById: actor.userId,
    status: LeadStatus.open,
    visibility: body.visibility ?? 0,
    measurementConsent: consent,
    qualityRating: body.quality_rating ?? null,
    qualityReason: body.quality_reason ?? null,
    value: null as number | null,
    leadSourceId,
    organizationId: null,
    createdAt: now,
    updatedAt: now,
    archivedAt: null,
    wonDate: null,
    lostDate: null,
    lastActivityAt: null,
    lostReasonDescription: null,
  };
}

/** What a creation (lead or deal) sends for its checks: the fields its reads depend on. */
type CreationFields = Pick<CreateLeadBody, 'stage_id' | 'responsible_id' | 'quality_rating' | 'quality_reason' | 'custom_fields'>;

/**
 * The reads and checks every creation makes before it writes (leads and deals alike): `reads` (a createReads
 * statement: $1 company, $2 stage or null, $3 responsible, $4 creator) gives the stage, the users and the required
 * custom fields; each rule that fails is a 400 naming its field.
 */
export async function creationBasics(pool: Pool, reads: Statement, sql: LeadSql, actor: Actor, body: CreationFields) {
  const responsibleId = body.responsible_id ?? actor.userId;
  const [row] = await run(pool, reads, [actor.companyId, body.stage_id ?? null, responsibleId, actor.userId]);
  const found = sql.createReadsFromRow(row ?? {});
  const { stage, pipeline } = stageOf(found, body.stage_id);
  const { user: responsible, handedOver } = responsibleOf(found, responsibleId);
  const creator = found.users.find((u) => u.id === actor.userId);
  if (!creator) throw invalid('The key creator is not a user of the company');
  requireQualityReason(pipeline, body.quality_rating ?? null, body.quality_reason ?? null);
  const answered = new Set((body.custom_fields ?? []).filter(hasAnswer).map((a) => a.id));
  const missing = found.requiredFields.filter((f) => !answered.has(f.id));
  if (missing.length) throw invalid(`custom_fields: required fields missing: ${missing.map((f) => `${f.name} (${f.id})`).join(', ')}`);
  return { stage, pipeline, responsible, handedOver, creator, requested: found.users.find((u) => u.id === responsibleId), responsibleId };
}

/** The origin of a creation (POST /leads rule 2): the manual one, the tracker's, or one found or made by name. */
export const originOf = (
  ctx: ServiceContext,
  actor: Actor,
  body: Pick<CreateLeadBody, 'crm_lead_source_id'>,
  draft: AcquisitionDraft | null,
) =>
  resolveOrigin(ctx.orm.em.fork(), actor.companyId, {
    crmLeadSourceId: body.crm_lead_source_id,
    svcCode: draft?.svc_code,
    sourceName: draft && originSourceName(draft),
  });

/** The stage sent (400 when it is not the company's), else the first stage of the primary pipeline. */
export function stageOf(reads: CreateReads, stageId: string | undefined) {
  const { stage, pipeline } = reads;
  if (stage && pipeline) return { stage, pipeline };
  if (stageId) throw invalid('stage_id: no such stage in the company');
  if (!reads.hasPrimary) throw invalid('stage_id: the company has no primary pipeline; send stage_id');
  throw invalid('stage_id: the primary pipeline has no stages; send stage_id');
}

/**
 * The responsible user: the one sent, else the key creator (400 when not the company's). An inactive or
 * archived user hands the lead to the account's master user (`handedOver`: an automatic note says so).
 */
export function responsibleOf(reads: CreateReads, id: string): { user: User; handedOver: boolean } {
  const user = reads.users.find((u) => u.id === id);
  if (!user) throw invalid('responsible_id: no such user in the company');
  if (user.active && !user.archived) return { user, handedOver: false };
  const master = reads.users.find((u) => u.id === reads.masterUserId);
  if (!master) throw new Error(`company ${reads.masterUserId} has no master user`);
  return { user: master, handedOver: true };
}
