import { inTransaction } from '@svc/platform/db/native';
import { AppError } from '@svc/platform/errors';
import type { ServiceContext } from '@svc/platform/service';
import { currentTraceparent } from '@svc/platform/tracing';
import type { PoolClient } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import type { AnswerPlan } from '../catalog/custom-field.answers.js';
import type { ContactStore, PersonWithContacts } from '../contacts/contact.store.js';
import type { MarketingAcquisition, MeasurementConsent } from '../marketing/acquisition.entity.js';
import { acquisitionOf } from '../marketing/acquisition.service.js';
import { withoutSensitiveText } from '../marketing/redaction.js';
import { originSourceName, type PreparedMarketing, prepareMarketing } from '../marketing/tracking.js';
import { attemptOwnerOf } from './sales.attempts.store.js';
import type { SalesChanges } from './sales.changes.js';
import { ChatPrefetch } from './sales.chats.js';
import type { SalesRecord, SalesTag } from './sales.entity.js';
import { type CreationAnswer, createOnce, type SettleKey } from './sales.idempotency.js';
import { RecordInserts } from './sales.inserts.js';
import type { RecordKind } from './sales.kind.js';
import type { OriginSource } from './sales.origins.js';
import type { SalesRefs } from './sales.refs.js';
import {
  type Actor,
  checkFollowers,
  checkReferences,
  creationBasics,
  newSalesRecord,
  participantRow,
  personReceipts,
} from './sales.rules.js';
import type { CreateSalesBody } from './sales.schema.js';
import type { RichReads } from './sales.select.js';
import { effectiveConsent, noRelations, type SalesRelations } from './sales.snapshot.js';
import type { SalesStore } from './sales.store.js';
import { type CustomFieldChange, customFieldsWithAnswers } from './sales.summaries.js';

type Json = Record<string, unknown>;

const RICH_FIELDS = ['tags', 'persons_id', 'person', 'organization_id', 'organization', 'custom_fields', 'followers', 'note'] as const;

export interface CreationParts<
  R extends SalesRecord,
  Rel extends SalesRelations,
  S extends { updated_at: string },
  CB extends CreateSalesBody,
> {
  ctx: ServiceContext;
  store: SalesStore<R, Rel>;
  kind: RecordKind<R, Rel, S, CB, never>;
  refs: SalesRefs;
  changes: SalesChanges<R, Rel, S>;
  contacts: ContactStore;
  origins: OriginSource;
}

/** Creation of leads and deals (decisions 0040, 0042). */
export class SalesCreation<
  R extends SalesRecord,
  Rel extends SalesRelations,
  S extends { updated_at: string },
  CB extends CreateSalesBody,
> {
  private readonly inserts: RecordInserts<R, Rel>;

  constructor(private readonly parts: CreationParts<R, Rel, S, CB>) {
    this.inserts = new RecordInserts(parts.store);
  }

  /** Marketing and consent are settled before the idempotency key is reserved, so a divergence writes nothing. */
  async create(actor: Actor, body: CB, headerKey?: string): Promise<CreationAnswer> {
    const { ctx, store, refs } = this.parts;
    const marketing = prepareMarketing(body.measurement_consent, body.marketing);
    const key = headerKey ?? body.idempotency_key;
    try {
      if (!key) return await this.createRecord(actor, body, marketing, null);
      const owner = attemptOwnerOf(ctx);
      return await createOnce(await store.pool, store.keys, owner, actor.companyId, key, (settle) =>
        this.createRecord(actor, body, marketing, settle),
      );
    } catch (err) {
      throw withoutSensitiveText(await refs.externalIdTaken(err, actor.companyId, body.external_id), marketing.sensitive);
    }
  }

  private async createRecord(actor: Actor, body: CB, marketing: PreparedMarketing, settle: SettleKey | null): Promise<CreationAnswer> {
    const { store, kind, changes, origins } = this.parts;
    // The chats of the persons it names are asked of chat while the references are read, before the transaction.
    const prefetch =
      body.persons_id?.length || body.person ? changes.chatsBefore(actor.companyId, null, body.persons_id ?? [], body.person) : null;
    const pool = await store.pool;
    const responsibleId = body.responsible_id ?? actor.userId;
    const reads = await store.readCreation(pool, actor.companyId, body.stage_id ?? null, responsibleId, actor.userId);
    const { stage, pipeline, responsible, handedOver, creator, requested } = creationBasics(reads, actor, body, responsibleId);
    const rich = handedOver || settle !== null || RICH_FIELDS.some((f) => body[f] !== undefined && body[f] !== null);
    const followers = body.followers ?? [];
    const references = rich
      ? await store.readReferences(pool, actor.companyId, {
          tags: body.tags ?? [],
          persons: body.persons_id ?? [],
          organizationId: body.organization_id ?? null,
          users: followers.map((f) => f.user_id),
          roles: followers.flatMap((f) => (f.role_id ? [f.role_id] : [])),
        })
      : null;
    const draft = marketing.acquisition;
    const origin = await origins.resolve(actor.companyId, {
      crmLeadSourceId: body.crm_lead_source_id,
      svcCode: draft?.svc_code,
      sourceName: draft && originSourceName(draft),
    });
    if (draft?.svc_conversion_tool) await origins.conversionTool(actor.companyId, draft.svc_conversion_tool);
    const now = new Date();
    const shared = newSalesRecord(actor, body, { stage, pipeline, responsible }, marketing.consent, origin.leadSource?.id ?? null, now);
    const record = kind.newRecord(shared, body);
    const acquisition = draft ? acquisitionOf(kind.kind, record, draft, origin, now) : null;
    const rel = kind.newRelations({
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
    let changed: CustomFieldChange[] | null = null;
    const write = async (tx: PoolClient | null) => {
      const payload = {
        ...kind.createdPayload(kind.snapshot(record, rel), record, body),
        ...(changed ? { custom_fields_changed: changed } : {}),
      };
      await this.insertRecord(tx, record, acquisition, payload);
    };
    if (!references) {
      await write(null);
    } else {
      const plans = checkReferences(references, body, record);
      checkFollowers(references, followers);
      const chats = (await prefetch) ?? ChatPrefetch.none;
      await inTransaction(pool, async (tx) => {
        const created = await this.writeRelations(tx, record, rel, body, references, plans, now);
        rel.chats = await chats.of(
          tx,
          rel.participants.map((p) => p.person.id),
          created,
        );
        if (handedOver) {
          await this.insertNote(tx, record, {
            content: `Responsible user ${requested?.name ?? responsibleId} is inactive or archived; the ${kind.kind} was assigned to the account's master user.`,
            isPinned: false,
            automatic: true,
            createdById: null,
          });
        }
        if (plans.length) {
          changed = customFieldsWithAnswers(rel.customFields).map((f): CustomFieldChange => ({ ...f, previous_answers: [] }));
        }
        await write(tx);
        // Last, so the key's row is locked only until the commit: a replay meanwhile is not held up.
        await settle?.(tx, record, personReceipts(rel.participants));
      });
      if (followers.length || body.note) await this.afterCreation(actor, record, body);
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
   * One creation statement with the acquisition and `<kind>.created` (decision 0010): in `tx`, or without one on the
   * pool together with the company's other creations waiting (decision 0225).
   */
  async insertRecord(tx: PoolClient | null, record: R, acquisition: MarketingAcquisition | null, payload: Json): Promise<void> {
    const { ctx, store } = this.parts;
    record.code = await this.inserts.insert(tx, record.companyId, {
      record,
      acquisitions: acquisition ? [acquisition] : [],
      event: { id: uuidv7(), payload, traceparent: currentTraceparent() ?? null },
    });
    ctx.outbox.wake(tx ?? (await store.pool));
  }

  private async writeRelations(
    tx: PoolClient,
    record: R,
    rel: Rel,
    body: CB,
    references: RichReads,
    plans: AnswerPlan[],
    at: Date,
  ): Promise<Set<string>> {
    const { store, contacts } = this.parts;
    const people: PersonWithContacts[] = [];
    if (body.person) people.push(await contacts.resolvePerson(tx, record.companyId, body.person, 'person', at));
    for (const id of body.persons_id ?? []) {
      const found = references.persons.find((p) => p.person.id === id);
      if (found && !people.some((p) => p.person.id === id)) people.push(found);
    }
    if (body.organization) rel.organization = await contacts.createOrganization(tx, record.companyId, body.organization, at);
    else if (body.organization_id) rel.organization = references.organization;
    record.organizationId = rel.organization?.id ?? null;
    rel.participants = people.map((p, i) => ({ participant: participantRow(record, p.person.id, i === 0, at), ...p }));
    await store.insert(
      tx,
      'participants',
      rel.participants.map((p) => p.participant),
    );
    const tagIds = [...new Set(body.tags ?? [])];
    // The snapshot's order: tags of one creation share created_at, so by name (collate "C"), then id.
    const byCodePoints = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    rel.tags = references.tags
      .filter((t) => tagIds.includes(t.id))
      .sort((a, b) => byCodePoints(a.name, b.name) || byCodePoints(a.id, b.id));
    await store.insert(
      tx,
      'tags',
      tagIds.map((tagId): SalesTag => ({ recordId: record.id, tagId, companyId: record.companyId, createdAt: at })),
    );
    rel.customFields = plans.flatMap((p) =>
      p.rows.map((value) => ({ field: p.field.field, value, option: p.field.options.find((o) => o.id === value.optionId) ?? null })),
    );
    await store.insert(
      tx,
      'answers',
      plans.flatMap((p) => p.rows),
    );
    return new Set(people.filter((p) => p.created).map((p) => p.person.id));
  }

  private async insertNote(
    tx: PoolClient,
    record: Pick<R, 'id' | 'companyId'>,
    note: { content: string; isPinned: boolean; automatic: boolean; createdById: string | null },
  ) {
    await this.parts.store.insert(tx, 'notes', [
      { id: uuidv7(), companyId: record.companyId, recordId: record.id, createdAt: new Date(), ...note },
    ]);
  }

  /** Spec rule 6: a failure here still leaves the record created and the idempotency key consumed. */
  private async afterCreation(actor: Actor, record: R, body: CB) {
    const { ctx, store, kind, changes } = this.parts;
    const users = new Set<string>();
    const rows = (body.followers ?? []).flatMap((f) => {
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
    try {
      await changes.change(record.companyId, record.id, async (tx) => {
        await store.insert(tx, 'followers', rows, true);
        if (body.note) {
          await this.insertNote(tx, record, {
            content: body.note.content,
            isPinned: body.note.is_pinned ?? false,
            automatic: false,
            createdById: actor.userId,
          });
        }
      });
    } catch (err) {
      // Spec rule 6: the record stays created; the answer names it so a client need not create it again.
      ctx.logger.error({ err, kind: kind.kind, id: record.id }, 'followers and note failed after the record');
      throw new AppError(
        'internal',
        `the ${kind.kind} ${record.id} (code ${record.code}) was created, but its followers and note were not saved`,
      );
    }
  }
}
