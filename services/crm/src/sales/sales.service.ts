import { inTransaction, nativePool, run, type Statement } from '@svc/platform/db/native';
import { forbidden, invalid, isUuid, notFound } from '@svc/platform/errors';
import { salesKey } from '@svc/platform/events/catalog';
import { type NewEvent, salesEvent } from '@svc/platform/events/payloads';
import type { ServiceContext } from '@svc/platform/service';
import type { Pool, PoolClient } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import type { LeadSource, NamedItem } from '../catalog/catalog.entity.js';
import { type AnswerInput, type AnswerPlan, type FieldDefinition, planAnswer } from '../catalog/custom-field.answers.js';
import type { User } from '../companies/company.entity.js';
import { CONTACT_TYPES } from '../contacts/contact.service.js';
import { ContactSql, type PersonWithContacts } from '../contacts/contact.sql.js';
import { type CreationAnswer, createOnce } from '../leads/idempotency.js';
import { LeadStatus, type MeasurementConsent } from '../leads/lead.entity.js';
import type { CreateLeadBody, UpdateLeadBody } from '../leads/lead.schema.js';
import {
  effectiveConsent,
  type LeadDetailExtras,
  type LeadRelations,
  noRelations,
  type SalesRecord,
  stageDurationsAt,
} from '../leads/lead.snapshot.js';
import {
  type CustomFieldChange,
  customFieldsWithAnswers,
  namedSummary,
  type RemovedCustomField,
  stageSummary,
  tagSummary,
  type UserSummary,
  userSummary,
} from '../leads/lead.summaries.js';
import type { MarketingAcquisition } from '../marketing/acquisition.entity.js';
import { acquisitionOf } from '../marketing/acquisition.service.js';
import { correctAcquisition } from '../marketing/correction.js';
import { findOrCreateConversionTool, findOrCreateLeadSource, resolveOrigin } from '../marketing/origin.js';
import { withoutSensitiveText } from '../marketing/redaction.js';
import { type AcquisitionDraft, originSourceName, type PreparedMarketing, prepareMarketing } from '../marketing/tracking.js';
import type { Pipeline } from '../pipelines/pipeline.entity.js';
import type { SalesKind, SalesParticipant, SalesTag } from './sales.entity.js';
import type { CreateReads, RichReads, SalesSql } from './sales.sql.js';

export interface Actor {
  companyId: string;
  userId: string;
}

/** A record as one statement read it (relationsSelect): its own columns and its relations. */
export interface Loaded<R, Rel> {
  record: R;
  rel: Rel;
}

/** The record an admin action closes, of company `companyId`, and the acting user. */
export interface CloseTarget {
  companyId: string;
  id: string;
  by: User;
}

/** An event of a change, typed by its key (the catalog's payload types). */
export type PendingEvent = NewEvent;

type Json = Record<string, unknown>;

/** A record's detail (`SalesRecords.detailParts`) less what depends on the time of the read. */
export interface DetailParts<R> {
  record: R;
  /** The snapshot and `pipeline_stages`. */
  head: Json;
  stagePeriods: LeadDetailExtras['stagePeriods'];
  /** The database's time of the statement that read it (microseconds). */
  nowUs: number;
  associations: Record<string, number>;
}

/** An update body: PUT /leads' fields, plus `tags` where the kind's PUT takes them (deals, decision 0052). */
type SalesUpdateBody = UpdateLeadBody & { tags?: string[] | undefined };

/** The fields of a creation that only a richer creation (extra writes in a transaction) handles. */
const RICH_FIELDS = ['tags', 'persons_id', 'person', 'organization_id', 'organization', 'custom_fields', 'followers', 'note'] as const;

const CODE = /^[1-9]\d{0,9}$/;

/**
 * What leads and deals share (decisions 0040–0044, 0051): creation with its relations, idempotency, followers
 * and note after the record, the visibility check, PUT, the change machinery that writes `<kind>.updated` and the
 * events derived from two snapshots, and the CRM's dedicated actions that both kinds have. Leads and Deals add
 * what only their kind has: the record's own columns, its snapshot, its detail and its created payload.
 */
export abstract class SalesRecords<
  R extends SalesRecord,
  Rel extends LeadRelations,
  S extends { updated_at: string },
  CB extends CreateLeadBody = CreateLeadBody,
  UB extends UpdateLeadBody = UpdateLeadBody,
> {
  readonly kind: SalesKind;
  protected readonly contacts: ContactSql;
  protected readonly pool: Promise<Pool>;
  /** `Lead` or `Deal`, for not-found messages. */
  private readonly label: string;

  constructor(
    readonly ctx: ServiceContext,
    readonly sql: SalesSql<R, Rel>,
  ) {
    this.kind = sql.kind;
    this.label = sql.kind === 'lead' ? 'Lead' : 'Deal';
    this.contacts = new ContactSql(ctx.orm);
    this.pool = nativePool(ctx.orm);
  }

  /** The kind's snapshot (LeadSnapshot, DealSnapshot): what its events carry and the base of its detail. */
  abstract snapshot(record: R, rel: Rel): S;
  /** A new record: the shared columns plus the kind's own, from the creation body. */
  protected abstract newRecord(shared: NewSalesRecord, body: CB): R;
  /** A new record's relations: the shared ones plus the kind's own. */
  protected abstract newRelations(shared: LeadRelations): Rel;
  /** The `<kind>.created` payload besides `custom_fields_changed`, which the creation adds when it has answers. */
  protected abstract createdPayload(snapshot: S, record: R, body: CB): Json;
  /** What a PUT body changes beyond the fields leads and deals share (`record` is the copy being written). */
  protected async updateOwnFields(_client: PoolClient, _record: R, _body: UB, _before: Loaded<R, Rel>): Promise<void> {}

  snapshotOf(loaded: Loaded<R, Rel>): S {
    return this.snapshot(loaded.record, loaded.rel);
  }

  /**
   * POST /leads and POST /deals. The marketing object and the consent are settled first, without storage (a
   * divergence is a 400 with nothing written, before idempotency has anything to reserve). Then the idempotency
   * key (the header wins over the body field) is reserved; a title-only creation is one read statement and one
   * write statement (decision 0010), a richer one runs its extra writes in a transaction ending with that same
   * write statement (decision 0040).
   */
  async create(actor: Actor, body: CB, headerKey?: string): Promise<CreationAnswer> {
    const marketing = prepareMarketing(body.measurement_consent, body.marketing);
    const key = headerKey ?? body.idempotency_key;
    try {
      if (!key) return await this.createRecord(actor, body, marketing, false);
      return await createOnce(await this.pool, this.sql.keys, actor.companyId, key, () => this.createRecord(actor, body, marketing, true));
    } catch (err) {
      throw withoutSensitiveText(err, marketing.sensitive);
    }
  }

  private async createRecord(actor: Actor, body: CB, marketing: PreparedMarketing, keyed: boolean): Promise<CreationAnswer> {
    const pool = await this.pool;
    const { stage, pipeline, responsible, handedOver, creator, requested, responsibleId } = await creationBasics(
      pool,
      this.sql,
      actor,
      body,
    );
    const rich = handedOver || keyed || RICH_FIELDS.some((f) => body[f] !== undefined && body[f] !== null);
    const refs = rich ? await this.richReads(pool, actor.companyId, body) : null;
    const draft = marketing.acquisition;
    const origin = await originOf(this.ctx, actor, body, draft);
    const now = new Date();
    const shared = newSalesRecord(actor, body, { stage, pipeline, responsible }, marketing.consent, origin.leadSource?.id ?? null, now);
    const record = this.newRecord(shared, body);
    const acquisition = draft ? acquisitionOf(this.kind, record, draft, origin, now) : null;
    const rel = this.newRelations({
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
    });
    let changes: CustomFieldChange[] | null = null;
    const write = async (db: Pool | PoolClient) => {
      const payload = {
        ...this.createdPayload(this.snapshot(record, rel), record, body),
        ...(changes ? { custom_fields_changed: changes } : {}),
      };
      await this.insertRecord(db, record, acquisition, payload);
    };
    if (!refs) {
      await write(pool);
    } else {
      const plans = this.checkReferences(refs, body, record);
      await inTransaction(pool, async (client) => {
        await this.writeRelations(client, record, rel, body, refs, plans, now);
        if (handedOver) {
          await this.insertNote(client, record, {
            content: `Responsible user ${requested?.name ?? responsibleId} is inactive or archived; the ${this.kind} was assigned to the account's master user.`,
            isPinned: false,
            automatic: true,
            createdById: null,
          });
        }
        if (plans.length) {
          changes = customFieldsWithAnswers(rel.customFields).map((f): CustomFieldChange => ({ ...f, previous_answers: [] }));
        }
        await write(client);
      });
      if (body.followers?.length || body.note) await this.afterCreation(actor, record, body, refs);
    }
    return { id: record.id, code: record.code, title: record.title, measurement_consent: effectiveConsent(record, rel.marketing) };
  }

  /**
   * Writes a new record with its acquisition and its `<kind>.created` (`payload`, whose record code the statement
   * fills in) in the one creation statement (decision 0010), and sets the record's code.
   */
  protected async insertRecord(db: Pool | PoolClient, record: R, acquisition: MarketingAcquisition | null, payload: Json) {
    const [created] = await run<{ id: string; code: number }>(db, this.sql.create, [
      record.companyId,
      JSON.stringify(this.sql.record.row(record)),
      JSON.stringify(acquisition ? [this.sql.acquisitionRow(acquisition)] : []),
      uuidv7(),
      JSON.stringify(payload),
    ]);
    if (!created) throw new Error(`${this.kind} insert returned no row`);
    this.ctx.outbox.wake(db);
    record.code = Number(created.code);
  }

  /** The tags, persons, organization, custom fields (of the kind), users and follower roles a request names. */
  protected async richReads(
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
  private checkReferences(refs: RichReads, body: CB, record: R): AnswerPlan[] {
    (body.tags ?? []).forEach((id, i) => {
      if (!refs.tags.some((t) => t.id === id)) throw invalid(`tags[${i}]: unknown tag`);
    });
    (body.persons_id ?? []).forEach((id, i) => {
      if (!refs.persons.some((p) => p.person.id === id)) throw invalid(`persons_id[${i}]: unknown person`);
    });
    if (body.organization_id && !refs.organization) throw invalid('organization_id: unknown organization');
    return this.planAnswers(refs, body.custom_fields ?? [], record, false);
  }

  /** The plans of `answers` (named `custom_fields[i]` in errors, or by their own fields when `path` is ''). */
  protected planAnswers(
    refs: Pick<RichReads, 'fields'>,
    answers: AnswerInput[],
    record: R,
    allowFiles: boolean,
    path = (i: number) => `custom_fields[${i}]`,
  ): AnswerPlan[] {
    const fields = new Map<string, FieldDefinition>(refs.fields.map((f) => [f.field.id, f]));
    const at = new Date();
    return answers.map((a, i) => planAnswer(fields, a, path(i), { companyId: record.companyId, recordId: record.id, at, allowFiles }));
  }

  /** The creation's extra rows (persons, organization, participants, tags, answers), written before the record. */
  private async writeRelations(client: PoolClient, record: R, rel: Rel, body: CB, refs: RichReads, plans: AnswerPlan[], at: Date) {
    const people: PersonWithContacts[] = [];
    if (body.person) people.push(await this.contacts.resolvePerson(client, record.companyId, body.person, 'person', at));
    for (const id of body.persons_id ?? []) {
      const found = refs.persons.find((p) => p.person.id === id);
      if (found && !people.some((p) => p.person.id === id)) people.push(found);
    }
    if (body.organization) rel.organization = await this.contacts.createOrganization(client, record.companyId, body.organization, at);
    else if (body.organization_id) rel.organization = refs.organization;
    record.organizationId = rel.organization?.id ?? null;
    rel.participants = people.map((p, i) => ({ participant: participantRow(record, p.person.id, i === 0, at), ...p }));
    await this.sql.insert(
      client,
      'participants',
      rel.participants.map((p) => p.participant),
    );
    const tagIds = [...new Set(body.tags ?? [])];
    // The order relationsSelect reads them in: one creation's tags share created_at, so by name (code points,
    // collate "C" there), then id.
    const byCodePoints = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    rel.tags = refs.tags.filter((t) => tagIds.includes(t.id)).sort((a, b) => byCodePoints(a.name, b.name) || byCodePoints(a.id, b.id));
    await this.sql.insert(
      client,
      'tags',
      tagIds.map((tagId): SalesTag => ({ recordId: record.id, tagId, companyId: record.companyId, createdAt: at })),
    );
    rel.customFields = plans.flatMap((p) =>
      p.rows.map((value) => ({ field: p.field.field, value, option: p.field.options.find((o) => o.id === value.optionId) ?? null })),
    );
    await this.sql.insert(
      client,
      'answers',
      plans.flatMap((p) => p.rows),
    );
  }

  private async insertNote(
    client: PoolClient,
    record: Pick<R, 'id' | 'companyId'>,
    note: { content: string; isPinned: boolean; automatic: boolean; createdById: string | null },
  ) {
    await this.sql.insert(client, 'notes', [
      { id: uuidv7(), companyId: record.companyId, recordId: record.id, createdAt: new Date(), ...note },
    ]);
  }

  /**
   * Followers and note, saved after the record (spec rule 6): a failure is an error answer while the record stays
   * created (and the idempotency key consumed). Duplicate users count once. The record's followers change its
   * snapshot, so `<kind>.updated` is written with them.
   */
  private async afterCreation(actor: Actor, record: R, body: CB, refs: RichReads) {
    const followers = body.followers ?? [];
    const failure = `the ${this.kind} ${record.code} was created without followers and note`;
    followers.forEach((f, i) => {
      if (!refs.users.some((u) => u.id === f.user_id)) throw invalid(`followers[${i}].user_id: unknown user; ${failure}`);
      if (f.role_id && !refs.roles.some((r) => r.id === f.role_id))
        throw invalid(`followers[${i}].role_id: unknown follower role; ${failure}`);
    });
    const users = new Set<string>();
    const rows = followers.flatMap((f) => {
      if (users.has(f.user_id)) return [];
      users.add(f.user_id);
      const at = new Date();
      return [
        {
          id: uuidv7(),
          companyId: record.companyId,
          recordId: record.id,
          userId: f.user_id,
          roleId: f.role_id ?? null,
          notes: null,
          createdAt: at,
        },
      ];
    });
    await this.change(record.companyId, record.id, async (client) => {
      await this.sql.insert(client, 'followers', rows, true);
      if (body.note) {
        await this.insertNote(client, record, {
          content: body.note.content,
          isPinned: body.note.is_pinned ?? false,
          automatic: false,
          createdById: actor.userId,
        });
      }
    });
  }

  /**
   * The detail of a record read by `relationsSelect(alias, true)`, in the parts a cached lead detail keeps apart
   * (decision 0015): `head`, the snapshot plus `pipeline_stages`; the stage periods `stage_durations` is computed
   * from at the time of a read; `associations_count` (only notes and a lead's deals have a source in crm yet).
   */
  detailParts(row: Json): DetailParts<R> {
    const { record, rel } = this.sql.fromRow(row);
    const extras = this.sql.detailExtrasFromRow(row);
    return {
      record,
      head: {
        ...this.snapshot(record, rel),
        proposals: extras.proposals,
        pipeline_stages: rel.pipelineStages.map((s) => ({ id: s.id, name: s.name, position: s.position })),
      },
      stagePeriods: extras.stagePeriods,
      nowUs: extras.nowUs,
      associations: {
        items: 0,
        tasks: 0,
        qualifications: 0,
        notes: extras.notesCount,
        files: extras.filesCount,
        activities: 0,
        proposals: extras.proposals.length,
        deals: rel.deals.length,
      },
    };
  }

  /** The detail of a record read by `relationsSelect(alias, true)`, at the time of its statement. */
  protected detailOf(row: Json) {
    const { head, stagePeriods, nowUs, associations } = this.detailParts(row);
    return { ...head, stage_durations: stageDurationsAt(stagePeriods, nowUs), associations_count: associations };
  }

  /** The answer to a detail statement that returned nothing: 404 (absent, another company's) or 403 (hidden). */
  protected async refuse(actor: Actor, ref: string): Promise<never> {
    await this.visibleId(actor, ref);
    throw notFound(this.label);
  }

  /** `ref` as the parameters of a by-id or by-code statement, or null when it can name no record. */
  protected refOf(ref: string): { byId: boolean; value: string | number } | null {
    if (isUuid(ref)) return { byId: true, value: ref };
    return CODE.test(ref) ? { byId: false, value: Number(ref) } : null;
  }

  protected async idOf(db: Pool | PoolClient, companyId: string, ref: string): Promise<string | null> {
    const r = this.refOf(ref);
    if (!r) return null;
    const [row] = await run<{ id: string }>(db, this.sql.idOf, [companyId, r.byId ? r.value : null, r.byId ? null : r.value]);
    return row?.id ?? null;
  }

  /** A record the actor may see: its id (404 absent or another company's, 403 hidden by visibility, decision 0041). */
  async visibleId(actor: Actor, ref: string): Promise<string> {
    const r = this.refOf(ref);
    if (!r) throw notFound(this.label);
    const [row] = await run<{ id: string; visible: boolean }>(await this.pool, this.sql.access, [
      actor.companyId,
      r.byId ? r.value : null,
      r.byId ? null : r.value,
      actor.userId,
    ]);
    if (!row) throw notFound(this.label);
    if (!row.visible) throw forbidden(`The key creator may not see this ${this.kind}`);
    return row.id;
  }

  /**
   * PUT /leads/{id} and PUT /deals/{id}: every field sent replaces the current value (organization_id null
   * unlinks, persons_id with delete removes, marketing corrects the current acquisition); omitted fields are
   * kept. `<kind>.updated` (and stage_changed, custom_field_updated/removed, quality_updated) are written with
   * the change when something changed (decisions 0043, 0044).
   */
  async update(actor: Actor, ref: string, body: UB) {
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
    const { tags } = body as SalesUpdateBody;
    const refs = await this.richReads(pool, actor.companyId, {
      tags,
      persons_id: (body.persons_id ?? []).filter((p) => !p.delete).map((p) => p.person_id),
      organization_id: body.organization_id ?? undefined,
    });
    (tags ?? []).forEach((tagId, i) => {
      if (!refs.tags.some((t) => t.id === tagId)) throw invalid(`tags[${i}]: unknown tag`);
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
        const record = { ...before.record };
        const plans = this.planAnswers(refs, body.custom_fields ?? [], record, false);
        record.title = body.title;
        if (target) {
          record.stageId = target.stage.id;
          record.pipelineId = target.pipeline.id;
        }
        if (responsible) record.responsibleId = responsible.user.id;
        if (body.visibility !== undefined) record.visibility = body.visibility;
        if (body.quality_rating !== undefined) record.qualityRating = body.quality_rating;
        if (body.quality_reason !== undefined) record.qualityReason = body.quality_reason;
        if (body.quality_rating !== undefined || body.quality_reason !== undefined) {
          requireQualityReason(target?.pipeline ?? before.rel.pipeline, record.qualityRating ?? null, record.qualityReason ?? null);
        }
        const now = new Date();
        if (body.organization) {
          record.organizationId = (await this.contacts.createOrganization(client, record.companyId, body.organization, now)).id;
        } else if (body.organization_id !== undefined) record.organizationId = body.organization_id;
        const correction = correctAcquisition(
          body.marketing,
          before.rel.marketing.latest,
          effectiveConsent(before.record, before.rel.marketing),
        );
        sensitive = correction.sensitive;
        if (correction.decision) record.measurementConsent = correction.decision;
        let origin = manualSource;
        if (correction.draft && correction.originTouched && origin === undefined) {
          origin = (
            await resolveOrigin(this.ctx.orm.em.fork(), actor.companyId, {
              svcCode: correction.draft.svc_code,
              sourceName: originSourceName(correction.draft),
            })
          ).leadSource;
        }
        if (manualSource !== undefined) record.leadSourceId = manualSource?.id ?? null;
        if (correction.draft) await conversionToolOf(this.ctx, actor, correction.draft);
        if (correction.draft) {
          const current = before.rel.marketing.latest;
          const next = acquisitionOf(this.kind, record, correction.draft, { leadSource: null, tracker: null }, now);
          next.leadSourceId = origin !== undefined ? (origin?.id ?? null) : (current?.leadSourceId ?? null);
          next.trackerId = current?.trackerId ?? null;
          if (current) {
            next.id = current.id;
            next.createdAt = current.createdAt;
          }
          await run(client, this.sql.upsertAcquisition, [JSON.stringify(this.sql.acquisitionRow(next))]);
        } else if (manualSource !== undefined && before.rel.marketing.latest) {
          await run(client, this.sql.setAcquisitionSource, [record.companyId, before.rel.marketing.latest.id, manualSource?.id ?? null]);
        }
        await this.updateOwnFields(client, record, body, before);
        await this.writeRecord(client, record);
        if (record.stageId !== before.record.stageId)
          await run(client, this.sql.enterStage, [record.companyId, record.id, record.stageId, now]);
        await this.updateParticipants(client, record, before, body, refs, now);
        if (tags) await this.replaceTags(client, before, tags, now);
        const changedPlans = plans.filter((p) => !holdsAnswers(before, p));
        if (changedPlans.length) {
          await run(client, this.sql.clearAnswers, [record.companyId, record.id, changedPlans.map((p) => p.field.field.id)]);
          await this.sql.insert(
            client,
            'answers',
            changedPlans.flatMap((p) => p.rows),
          );
        }
      });
      return {
        id: after.record.id,
        code: after.record.code,
        title: after.record.title,
        status: after.record.status,
        quality_rating: after.record.qualityRating ?? null,
        quality_reason: after.record.qualityReason ?? null,
        lost_reason_description: after.record.lostReasonDescription ?? null,
      };
    } catch (err) {
      throw withoutSensitiveText(err, sensitive);
    }
  }

  private async updateParticipants(client: PoolClient, record: R, before: Loaded<R, Rel>, body: UB, refs: RichReads, at: Date) {
    const removed = (body.persons_id ?? []).filter((p) => p.delete).map((p) => p.person_id);
    if (removed.length) await run(client, this.sql.removeParticipants, [record.companyId, record.id, removed]);
    const kept = before.rel.participants.filter((p) => !removed.includes(p.person.id));
    const added: PersonWithContacts[] = [];
    for (const p of body.persons_id ?? []) {
      const found = !p.delete && refs.persons.find((x) => x.person.id === p.person_id);
      if (found && !kept.some((k) => k.person.id === p.person_id)) added.push(found);
    }
    if (body.person) {
      const person = await this.contacts.resolvePerson(client, record.companyId, body.person, 'person', at);
      if (!kept.some((k) => k.person.id === person.person.id) && !added.some((a) => a.person.id === person.person.id)) added.push(person);
    }
    const hasMain = kept.some((k) => k.participant.main);
    const rows = added.map((p, i) => participantRow(record, p.person.id, !hasMain && i === 0, at));
    await this.sql.insert(client, 'participants', rows, true);
    if (body.phone || body.email) {
      const main = kept.find((k) => k.participant.main) ?? kept[0] ?? added[0];
      if (!main) {
        throw invalid(`${body.phone ? 'phone' : 'email'}: the ${this.kind} has no person to hold the contact; send person or persons_id`);
      }
      let holder: PersonWithContacts = main;
      if (body.email) holder = await this.contacts.addContact(client, holder, CONTACT_TYPES.email, body.email);
      if (body.phone) await this.contacts.addContact(client, holder, CONTACT_TYPES.phone, body.phone);
    }
  }

  /** The record's tags become exactly `tagIds` (an update body's tags: no tag events, spec). */
  private async replaceTags(client: PoolClient, before: Loaded<R, Rel>, tagIds: string[], at: Date) {
    const { id, companyId } = before.record;
    const dropped = before.rel.tags.filter((t) => !tagIds.includes(t.id)).map((t) => t.id);
    if (dropped.length) await run(client, this.sql.removeTags, [companyId, id, dropped]);
    const rows = [...new Set(tagIds)].map((tagId): SalesTag => ({ recordId: id, tagId, companyId, createdAt: at }));
    await this.sql.insert(client, 'tags', rows, true);
  }

  /**
   * One change of a record in a transaction: its row is locked and its snapshot read (relationsSelect), `work`
   * writes, the snapshot is read again. When it differs (updated_at aside), updated_at moves and the events
   * are written in the same transaction: the ones `events` derives, and `<kind>.updated` with the new snapshot.
   */
  async change(
    companyId: string,
    recordId: string,
    work: (client: PoolClient, before: Loaded<R, Rel>) => Promise<void>,
    events: (before: Loaded<R, Rel>, after: Loaded<R, Rel>, snapshot: S) => PendingEvent[] = (b, a, s) => this.derivedEvents(b, a, s),
  ): Promise<Loaded<R, Rel>> {
    const pool = await this.pool;
    return inTransaction(pool, async (client) => {
      const [row] = await run(client, this.sql.snapshotForUpdate, [companyId, recordId]);
      if (!row) throw notFound(this.label);
      const before = this.sql.fromRow(row);
      await work(client, before);
      const [afterRow] = await run(client, this.sql.snapshot, [companyId, recordId]);
      const after = this.sql.fromRow(afterRow!);
      if (this.comparable(before) === this.comparable(after)) return after;
      const [touched] = await run<{ updated_at: string }>(client, this.sql.touch, [companyId, recordId]);
      after.record.updatedAt = new Date(touched!.updated_at);
      const snapshot = this.snapshot(after.record, after.rel);
      const pending: PendingEvent[] = [...events(before, after, snapshot), { eventKey: salesKey(this.kind, 'updated'), payload: snapshot }];
      await this.ctx.outbox.write(
        client,
        pending.map((e) => ({ ...e, companyId })),
      );
      return after;
    });
  }

  /** A snapshot as compared for "did anything change": updated_at aside. */
  private comparable({ record, rel }: Loaded<R, Rel>): string {
    const { updated_at: _u, ...rest } = this.snapshot(record, rel);
    return JSON.stringify(rest);
  }

  /**
   * The events a change fires besides `<kind>.updated`, read off the two snapshots: stage_changed on a stage move,
   * custom_field_updated / custom_field_removed on answers created, changed or removed, quality_updated when the
   * qualification is created or changed.
   */
  protected derivedEvents(before: Loaded<R, Rel>, after: Loaded<R, Rel>, snapshot: S): PendingEvent[] {
    const { kind } = this;
    const events: PendingEvent[] = [];
    if (before.record.stageId !== after.record.stageId) {
      events.push(
        salesEvent(kind, 'stage_changed', snapshot, {
          previous_stage: stageSummary(before.rel.stage, before.rel.pipeline),
          current_stage: stageSummary(after.rel.stage, after.rel.pipeline),
        }),
      );
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
    if (changed.length) events.push(salesEvent(kind, 'custom_field_updated', snapshot, { custom_fields_changed: changed }));
    if (removed.length) events.push(salesEvent(kind, 'custom_field_removed', snapshot, { removed_fields: removed }));
    const q0 = before.record;
    const q1 = after.record;
    if ((q0.qualityRating ?? null) !== (q1.qualityRating ?? null) || (q0.qualityReason ?? null) !== (q1.qualityReason ?? null)) {
      events.push(
        salesEvent(kind, 'quality_updated', snapshot, {
          previous_quality: q0.qualityRating ?? null,
          previous_quality_reason: q0.qualityReason ?? null,
          new_quality: q1.qualityRating ?? null,
          new_quality_reason: q1.qualityReason ?? null,
        }),
      );
    }
    return events;
  }

  // The CRM's dedicated actions (admin API) both kinds have: each fires its event (and `<kind>.updated`) in the
  // change's transaction.

  /** The id of a record of the company (404 when there is none). */
  async requireOf(companyId: string, ref: string): Promise<string> {
    const id = await this.idOf(await this.pool, companyId, ref);
    if (!id) throw notFound(this.label);
    return id;
  }

  /** The user acting through the admin API: a user of the company, else a 400 on `user_id`. */
  protected async actingUser(companyId: string, userId: string): Promise<User> {
    const [row] = await run(await this.pool, this.sql.createReads, [companyId, null, userId, userId]);
    const user = this.sql.createReadsFromRow(row ?? {}).users.find((u) => u.id === userId);
    if (!user) throw invalid('user_id: no such user in the company');
    return user;
  }

  /** The record `ref` of the company (404 otherwise) and the acting user `userId` (400 when not the company's). */
  protected async target(companyId: string, ref: string, userId: string): Promise<CloseTarget> {
    const id = await this.requireOf(companyId, ref);
    return { companyId, id, by: await this.actingUser(companyId, userId) };
  }

  /** The company's reasons of `kind` named by `ids`, in that order; an unknown one is a 400 naming `field[i]`. */
  protected async reasons(companyId: string, kind: 'loss_reason' | 'gain_reason', ids: string[], field: string): Promise<NamedItem[]> {
    if (!ids.length) return [];
    const [row] = await run(await this.pool, this.sql.namedItems, [companyId, kind, ids]);
    const found = this.sql.namedFromRows((row?.items as Json[] | null) ?? []);
    return ids.map((id, i) => {
      const item = found.find((r) => r.id === id);
      if (!item) throw invalid(`${field}[${i}]: unknown ${kind.replace('_', ' ')}`);
      return item;
    });
  }

  /** The admin API's lose: `<kind>.lost` (and `<kind>.updated`) with the loss reasons in the order sent. */
  async lose(companyId: string, ref: string, userId: string, reasonIds: string[], description: string | null) {
    const target = await this.target(companyId, ref, userId);
    const reasons = await this.reasons(companyId, 'loss_reason', reasonIds, 'loss_reason_ids');
    return this.close(target, {
      won: false,
      lossReasons: reasons,
      lossDescription: description,
      event: ({ snapshot, at, by }) =>
        salesEvent(this.kind, 'lost', snapshot, {
          lost_date: at,
          lost_by: by,
          loss_reason: reasons[0] ? namedSummary(reasons[0]) : null,
          loss_reasons: reasons.map(namedSummary),
          loss_reason_description: description,
        }),
    });
  }

  /**
   * Closes a record as won (won_date now, lost_date, loss reasons and their description cleared) or lost (lost_date
   * now, won_date cleared, the loss reasons and description given), and fires `<kind>.won` / `<kind>.lost` with the
   * payload `payload` builds. `closing` adds what the kind's record holds besides; `also` runs in the same
   * transaction (a deal created with a won lead) and its result reaches `payload`.
   */
  protected async close<X>(
    { companyId, id, by }: CloseTarget,
    outcome: {
      won: boolean;
      lossReasons: NamedItem[];
      lossDescription: string | null;
      also?: ((client: PoolClient, record: R, before: Loaded<R, Rel>, by: User) => Promise<X>) | undefined;
      /** The `<kind>.won` or `<kind>.lost` it fires. */
      event: (closed: { snapshot: S; at: string; by: UserSummary | null }, extra: X | undefined) => PendingEvent;
    },
  ): Promise<Loaded<R, Rel>> {
    const now = new Date();
    let extra: X | undefined;
    return this.change(
      companyId,
      id,
      async (client, before) => {
        const record = {
          ...before.record,
          status: outcome.won ? LeadStatus.won : LeadStatus.lost,
          wonDate: outcome.won ? now : null,
          lostDate: outcome.won ? null : now,
          lostReasonDescription: outcome.lossDescription,
        };
        await this.closing(client, record, outcome.won);
        if (outcome.also) extra = await outcome.also(client, record, before, by);
        await this.writeRecord(client, record);
        await this.setLossReasons(client, companyId, id, outcome.lossReasons);
      },
      (_b, _a, snapshot) => [outcome.event({ snapshot, at: now.toISOString(), by: userSummary(by) }, extra)],
    );
  }

  /** What closing a record as won or lost changes in the kind's own columns and relations (`record` is being written). */
  protected async closing(_client: PoolClient, _record: R, _won: boolean): Promise<void> {}

  /** Writes the record's changeable columns. */
  protected async writeRecord(client: PoolClient, record: R) {
    await run(client, this.sql.updateRecord, [record.companyId, record.id, JSON.stringify(this.sql.record.row(record))]);
  }

  /** Replaces the record's loss reasons with `reasons`, in their order. */
  protected async setLossReasons(client: PoolClient, companyId: string, id: string, reasons: NamedItem[]) {
    await this.setReasons(client, this.sql.setLossReasons, companyId, id, reasons);
  }

  /** Replaces the record's reasons in the table of `st` (a `SalesSql.setReasons` statement) with `reasons`, in order. */
  protected async setReasons(client: PoolClient, st: Statement, companyId: string, id: string, reasons: NamedItem[]) {
    const rows = reasons.map((r, i) => ({ [this.sql.fk]: id, reason_id: r.id, company_id: companyId, position: i + 1 }));
    await run(client, st, [companyId, id, JSON.stringify(rows)]);
  }

  async move(companyId: string, ref: string, userId: string, stageId: string) {
    const id = await this.requireOf(companyId, ref);
    await this.actingUser(companyId, userId);
    const [readRow] = await run(await this.pool, this.sql.createReads, [companyId, stageId, userId, userId]);
    const target = stageOf(this.sql.createReadsFromRow(readRow ?? {}), stageId);
    const now = new Date();
    return this.change(companyId, id, async (client, before) => {
      if (before.record.stageId === target.stage.id) return;
      const record = { ...before.record, stageId: target.stage.id, pipelineId: target.pipeline.id };
      await this.writeRecord(client, record);
      await run(client, this.sql.enterStage, [companyId, id, target.stage.id, now]);
    });
  }

  async addTags(companyId: string, ref: string, userId: string, tagIds: string[]) {
    const id = await this.requireOf(companyId, ref);
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
        const rows = [...new Set(tagIds)].map((tagId): SalesTag => ({ recordId: id, tagId, companyId, createdAt: at }));
        await this.sql.insert(client, 'tags', rows, true);
      },
      (before, after, snapshot) => {
        const added = after.rel.tags.filter((t) => !before.rel.tags.some((b) => b.id === t.id));
        return added.length ? [salesEvent(this.kind, 'tag_added', snapshot, { added_tags: added.map(tagSummary) })] : [];
      },
    );
  }

  async removeTag(companyId: string, ref: string, userId: string, tagId: string) {
    const id = await this.requireOf(companyId, ref);
    await this.actingUser(companyId, userId);
    return this.change(
      companyId,
      id,
      async (client, before) => {
        if (!before.rel.tags.some((t) => t.id === tagId)) throw notFound(`Tag of the ${this.kind}`);
        await run(client, this.sql.removeTags, [companyId, id, [tagId]]);
      },
      (before, after, snapshot) => {
        const removed = before.rel.tags.filter((t) => !after.rel.tags.some((a) => a.id === t.id));
        return [salesEvent(this.kind, 'tag_removed', snapshot, { removed_tags: removed.map(tagSummary) })];
      },
    );
  }

  async setCustomField(companyId: string, ref: string, userId: string, answer: AnswerInput) {
    const id = await this.requireOf(companyId, ref);
    await this.actingUser(companyId, userId);
    const refs = await this.richReads(await this.pool, companyId, {});
    if (!refs.fields.some((f) => f.field.id === answer.id)) throw invalid(`field_id: no ${this.kind} custom field with this id`);
    return this.change(companyId, id, async (client, before) => {
      const [plan] = this.planAnswers(refs, [answer], before.record, true, () => '');
      if (!plan) return;
      if (!plan.rows.length) throw invalid('value: send value, option_id or option_ids; DELETE removes an answer');
      if (holdsAnswers(before, plan)) return;
      await run(client, this.sql.clearAnswers, [companyId, id, [plan.field.field.id]]);
      await this.sql.insert(client, 'answers', plan.rows);
    });
  }

  async removeCustomField(companyId: string, ref: string, userId: string, fieldId: string) {
    const id = await this.requireOf(companyId, ref);
    await this.actingUser(companyId, userId);
    return this.change(companyId, id, async (client, before) => {
      if (!before.rel.customFields.some((f) => f.field.id === fieldId)) throw notFound(`Custom field answer of the ${this.kind}`);
      await run(client, this.sql.clearAnswers, [companyId, id, [fieldId]]);
    });
  }

  async setQuality(companyId: string, ref: string, userId: string, rating: number, reason: string | null) {
    const id = await this.requireOf(companyId, ref);
    await this.actingUser(companyId, userId);
    return this.change(companyId, id, async (client, before) => {
      requireQualityReason(before.rel.pipeline, rating, reason);
      const record = { ...before.record, qualityRating: rating, qualityReason: reason };
      await this.writeRecord(client, record);
    });
  }
}

/** Whether the record already holds exactly the answers a plan writes (rewriting them would change only their ids). */
function holdsAnswers(before: Loaded<SalesRecord, LeadRelations>, plan: AnswerPlan): boolean {
  const key = (optionId: string | null | undefined, value: string | null | undefined) => `${optionId ?? ''}\u0000${value ?? ''}`;
  const held = before.rel.customFields
    .filter((c) => c.field.id === plan.field.field.id)
    .map((c) => key(c.value.optionId, c.value.value))
    .sort();
  const planned = plan.rows.map((r) => key(r.optionId, r.value)).sort();
  return held.length === planned.length && held.every((k, i) => k === planned[i]);
}

const hasAnswer = (a: AnswerInput) =>
  (a.value !== null && a.value !== undefined && String(a.value).trim() !== '') || !!a.option_id || !!a.option_ids?.length;

function participantRow(record: Pick<SalesRecord, 'id' | 'companyId'>, personId: string, main: boolean, at: Date): SalesParticipant {
  return { id: uuidv7(), companyId: record.companyId, recordId: record.id, personId, main, role: null, notes: null, createdAt: at };
}

/** A qualification in a funnel that demands a reason needs one (decision 0040). */
export function requireQualityReason(pipeline: Pipeline | undefined, rating: number | null, reason: string | null) {
  if (pipeline?.requiresQualityReason && rating !== null && !reason?.trim()) {
    throw invalid(`quality_reason: required by the pipeline ${pipeline.name} when quality_rating is set`);
  }
}

/** The columns a new lead or deal shares (salesRecordProperties). */
export type NewSalesRecord = ReturnType<typeof newSalesRecord>;

/**
 * The shared columns of a new record: open, in the checked stage, with the checked responsible; its code comes
 * from the company's sequence in the write statement.
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
    status: LeadStatus.open as number,
    visibility: body.visibility ?? 0,
    measurementConsent: consent,
    qualityRating: body.quality_rating ?? null,
    qualityReason: body.quality_reason ?? null,
    value: null as number | null,
    leadSourceId,
    organizationId: null as string | null,
    createdAt: now,
    updatedAt: now,
    archivedAt: null,
    wonDate: null as Date | null,
    lostDate: null as Date | null,
    lastActivityAt: null,
    lostReasonDescription: null as string | null,
  };
}

/** What a creation sends for its checks: the fields its reads depend on. */
type CreationFields = Pick<CreateLeadBody, 'stage_id' | 'responsible_id' | 'quality_rating' | 'quality_reason' | 'custom_fields'>;

/**
 * The reads and checks every creation makes before it writes: the kind's `createReads` statement gives the stage,
 * the users and the required custom fields; each rule that fails is a 400 naming its field.
 */
async function creationBasics(pool: Pool, sql: SalesSql<SalesRecord, LeadRelations>, actor: Actor, body: CreationFields) {
  const responsibleId = body.responsible_id ?? actor.userId;
  const [row] = await run(pool, sql.createReads, [actor.companyId, body.stage_id ?? null, responsibleId, actor.userId]);
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

/**
 * The origin of a creation (POST /leads rule 2): the manual one, the tracker's, or one found or made by name; and
 * the acquisition's conversion tool, made when the company has none of that name yet.
 */
async function originOf(
  ctx: ServiceContext,
  actor: Actor,
  body: Pick<CreateLeadBody, 'crm_lead_source_id'>,
  draft: AcquisitionDraft | null,
) {
  const origin = await resolveOrigin(ctx.orm.em.fork(), actor.companyId, {
    crmLeadSourceId: body.crm_lead_source_id,
    svcCode: draft?.svc_code,
    sourceName: draft && originSourceName(draft),
  });
  await conversionToolOf(ctx, actor, draft);
  return origin;
}

/** The conversion tool an acquisition names is one of the company's (found by name without case, or made). */
async function conversionToolOf(ctx: ServiceContext, actor: Actor, draft: AcquisitionDraft | null | undefined): Promise<void> {
  if (draft?.svc_conversion_tool) await findOrCreateConversionTool(ctx.orm.em.fork(), actor.companyId, draft.svc_conversion_tool);
}

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
 * archived user hands the record to the account's master user (`handedOver`: an automatic note says so).
 */
export function responsibleOf(reads: CreateReads, id: string): { user: User; handedOver: boolean } {
  const user = reads.users.find((u) => u.id === id);
  if (!user) throw invalid('responsible_id: no such user in the company');
  if (user.active && !user.archived) return { user, handedOver: false };
  const master = reads.users.find((u) => u.id === reads.masterUserId);
  if (!master) throw new Error(`company ${reads.masterUserId} has no master user`);
  return { user: master, handedOver: true };
}
