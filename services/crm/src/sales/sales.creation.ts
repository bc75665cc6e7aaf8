import { inTransaction, run } from '@svc/platform/db/native';
import { AppError, invalid } from '@svc/platform/errors';
import type { Pool, PoolClient } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { type AnswerInput, type AnswerPlan, type FieldDefinition, planAnswer } from '../catalog/custom-field.answers.js';
import { CONTACT_TYPES } from '../contacts/contact.entity.js';
import type { PersonWithContacts } from '../contacts/contact.sql.js';
import type { MarketingAcquisition, MeasurementConsent } from '../marketing/acquisition.entity.js';
import { acquisitionOf } from '../marketing/acquisition.service.js';
import { withoutSensitiveText } from '../marketing/redaction.js';
import { type PreparedMarketing, prepareMarketing } from '../marketing/tracking.js';
import { attemptOwnerOf } from './sales.attempts.js';
import { type Actor, SalesBase } from './sales.base.js';
import { ChatPrefetch } from './sales.chats.js';
import type { SalesRecord, SalesTag } from './sales.entity.js';
import { type CreationAnswer, createOnce, type PersonReceipt } from './sales.idempotency.js';
import { checkFollowers, creationBasics, type NewSalesRecord, newSalesRecord, originOf, participantRow } from './sales.rules.js';
import type { CreateSalesBody, UpdateSalesBody } from './sales.schema.js';
import type { RichReads } from './sales.select.js';
import { effectiveConsent, noRelations, type SalesRelations } from './sales.snapshot.js';
import { type CustomFieldChange, customFieldsWithAnswers } from './sales.summaries.js';

type Json = Record<string, unknown>;

const MATCHES: Record<number, PersonReceipt['match']> = {
  [CONTACT_TYPES.email]: 'email',
  [CONTACT_TYPES.phone]: 'phone',
  [CONTACT_TYPES.website]: 'website',
  [CONTACT_TYPES.other]: 'other',
};

/**
 * The receipts of a creation's persons (decision 0182), main person first: created, found by a contact of the
 * Person object, or named by persons_id.
 */
export function personReceipts(participants: PersonWithContacts[]): { person?: PersonReceipt; persons?: PersonReceipt[] } {
  const receipts = participants.map(
    (p): PersonReceipt => ({
      id: p.person.id,
      match: p.created ? 'created' : p.matchedType !== undefined ? (MATCHES[p.matchedType] ?? 'other') : 'id',
    }),
  );
  if (!receipts[0]) return {};
  return receipts.length > 1 ? { person: receipts[0], persons: receipts } : { person: receipts[0] };
}

/** The fields of a creation that only a richer creation (extra writes in a transaction) handles. */
const RICH_FIELDS = ['tags', 'persons_id', 'person', 'organization_id', 'organization', 'custom_fields', 'followers', 'note'] as const;

/** Creation (POST /leads, POST /deals; decisions 0040, 0042): idempotency, relations, followers and note after the record. */
export abstract class SalesCreation<
  R extends SalesRecord,
  Rel extends SalesRelations,
  S extends { updated_at: string },
  CB extends CreateSalesBody = CreateSalesBody,
  UB extends UpdateSalesBody = UpdateSalesBody,
> extends SalesBase<R, Rel, S, CB, UB> {
  /** A new record: the shared columns plus the kind's own, from the creation body. */
  protected abstract newRecord(shared: NewSalesRecord, body: CB): R;
  /** A new record's relations: the shared ones plus the kind's own. */
  protected abstract newRelations(shared: SalesRelations): Rel;
  /** The `<kind>.created` payload besides `custom_fields_changed`, which the creation adds when it has answers. */
  protected abstract createdPayload(snapshot: S, record: R, body: CB): Json;

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
      const owner = attemptOwnerOf(this.ctx);
      return await createOnce(await this.pool, this.sql.keys, owner, actor.companyId, key, () =>
        this.createRecord(actor, body, marketing, true),
      );
    } catch (err) {
      throw withoutSensitiveText(await this.externalIdTaken(err, actor.companyId, body.external_id), marketing.sensitive);
    }
  }

  protected async createRecord(actor: Actor, body: CB, marketing: PreparedMarketing, keyed: boolean): Promise<CreationAnswer> {
    // The chats of the persons it names are asked of chat while the references are read, before the transaction.
    const prefetch =
      body.persons_id?.length || body.person ? this.chatsBefore(actor.companyId, null, body.persons_id ?? [], body.person) : null;
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
      checkFollowers(refs, body.followers ?? []);
      const chats = (await prefetch) ?? ChatPrefetch.none;
      await inTransaction(pool, async (client) => {
        const created = await this.writeRelations(client, record, rel, body, refs, plans, now);
        rel.chats = await chats.of(
          client,
          rel.participants.map((p) => p.person.id),
          created,
        );
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
      if (body.followers?.length || body.note) {
        try {
          await this.afterCreation(actor, record, body);
        } catch (err) {
          // Spec rule 6: the record stays created; the answer names it so a client need not create it again.
          this.ctx.logger.error({ err, kind: this.kind, id: record.id }, 'followers and note failed after the record');
          throw new AppError(
            'internal',
            `the ${this.kind} ${record.id} (code ${record.code}) was created, but its followers and note were not saved`,
          );
        }
      }
    }
    return {
      id: record.id,
      code: record.code,
      title: record.title,
      measurement_consent: effectiveConsent(record, rel.marketing),
      ...personReceipts(rel.participants),
    };
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
  protected checkReferences(refs: RichReads, body: CB, record: R): AnswerPlan[] {
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

  /**
   * The creation's extra rows (persons, organization, participants, tags, answers), written before the record. Returns
   * the persons it created.
   */
  protected async writeRelations(
    client: PoolClient,
    record: R,
    rel: Rel,
    body: CB,
    refs: RichReads,
    plans: AnswerPlan[],
    at: Date,
  ): Promise<Set<string>> {
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
    return new Set(people.filter((p) => p.created).map((p) => p.person.id));
  }

  protected async insertNote(
    client: PoolClient,
    record: Pick<R, 'id' | 'companyId'>,
    note: { content: string; isPinned: boolean; automatic: boolean; createdById: string | null },
  ) {
    await this.sql.insert(client, 'notes', [
      { id: uuidv7(), companyId: record.companyId, recordId: record.id, createdAt: new Date(), ...note },
    ]);
  }

  /**
   * Followers and note, saved after the record (spec rule 6), checked before it (checkFollowers): what still fails
   * here is an error answer naming the record, which stays created (and the idempotency key consumed). Duplicate
   * users count once. The record's followers change its snapshot, so `<kind>.updated` is written with them.
   */
  protected async afterCreation(actor: Actor, record: R, body: CB) {
    const followers = body.followers ?? [];
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
}
