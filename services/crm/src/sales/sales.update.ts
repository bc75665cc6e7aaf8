import { invalidField } from '@svc/platform/errors';
import type { PoolClient } from 'pg';
import type { LeadSource } from '../catalog/catalog.entity.js';
import { CONTACT_TYPES } from '../contacts/contact.entity.js';
import type { ContactStore, PersonWithContacts } from '../contacts/contact.store.js';
import { acquisitionOf } from '../marketing/acquisition.service.js';
import { correctAcquisition } from '../marketing/correction.js';
import { withoutSensitiveText } from '../marketing/redaction.js';
import { originSourceName } from '../marketing/tracking.js';
import type { ChangeChats, SalesChanges } from './sales.changes.js';
import type { SalesRecord, SalesTag } from './sales.entity.js';
import type { RecordKind } from './sales.kind.js';
import type { OriginSource } from './sales.origins.js';
import type { SalesRefs } from './sales.refs.js';
import { type Actor, holdsAnswers, participantRow, planAnswers, requireQualityReason, responsibleOf, stageOf } from './sales.rules.js';
import type { UpdateSalesBody } from './sales.schema.js';
import type { RichReads } from './sales.select.js';
import { effectiveConsent, type SalesRelations } from './sales.snapshot.js';
import type { Loaded, SalesStore } from './sales.store.js';

type SalesUpdateBody = UpdateSalesBody & { tags?: string[] | undefined };

export interface UpdateParts<
  R extends SalesRecord,
  Rel extends SalesRelations,
  S extends { updated_at: string },
  UB extends UpdateSalesBody,
> {
  store: SalesStore<R, Rel>;
  kind: RecordKind<R, Rel, S, never, UB>;
  refs: SalesRefs;
  changes: SalesChanges<R, Rel, S>;
  contacts: ContactStore;
  origins: OriginSource;
}

/** Decisions 0044, 0052. */
export class SalesUpdate<R extends SalesRecord, Rel extends SalesRelations, S extends { updated_at: string }, UB extends UpdateSalesBody> {
  constructor(private readonly parts: UpdateParts<R, Rel, S, UB>) {}

  /** Sent fields replace, omitted ones are kept; events are written with the change (decisions 0043, 0044). */
  async update(actor: Actor, ref: string, body: UB) {
    return (await this.apply(actor, ref, body)).answer;
  }

  /** A batch upsert answers `unchanged` when not (decision 0181). */
  async apply(actor: Actor, ref: string, body: UB) {
    const { store, kind, refs, changes, origins } = this.parts;
    const id = await refs.visibleId(actor, ref);
    let updatedBefore = 0;
    // The chats of its persons and of those the body links are asked of chat while the references are read.
    const named = (body.persons_id ?? []).filter((p) => !p.delete).map((p) => p.person_id);
    const chats: ChangeChats = { prefetch: changes.chatsBefore(actor.companyId, id, named, body.person), created: new Set() };
    const pool = await store.pool;
    const reads = await store.readCreation(pool, actor.companyId, body.stage_id ?? null, body.responsible_id ?? actor.userId, actor.userId);
    const target = body.stage_id ? stageOf(reads, body.stage_id) : null;
    const responsible = body.responsible_id ? responsibleOf(reads, body.responsible_id) : null;
    const { tags } = body as SalesUpdateBody;
    const references = await store.readReferences(pool, actor.companyId, {
      tags: tags ?? [],
      persons: named,
      organizationId: body.organization_id ?? null,
    });
    (tags ?? []).forEach((tagId, i) => {
      if (!references.tags.some((t) => t.id === tagId)) throw invalidField(`tags[${i}]`, 'unknown tag');
    });
    (body.persons_id ?? []).forEach((p, i) => {
      if (!p.delete && !references.persons.some((x) => x.person.id === p.person_id))
        throw invalidField(`persons_id[${i}].person_id`, 'unknown person');
    });
    if (body.organization_id && !references.organization) throw invalidField('organization_id', 'unknown organization');
    let manualSource: LeadSource | null | undefined;
    if (body.crm_lead_source_id) {
      manualSource = (await origins.resolve(actor.companyId, { crmLeadSourceId: body.crm_lead_source_id })).leadSource;
    } else if (body.lead_source) {
      manualSource = await origins.leadSource(actor.companyId, body.lead_source.name);
    } else if (body.crm_lead_source_id === null || body.lead_source === null) {
      manualSource = null;
    }
    let sensitive: string[] = [];
    try {
      const after = await changes.change(
        actor.companyId,
        id,
        async (tx, before) => {
          updatedBefore = before.record.updatedAt.getTime();
          const record = { ...before.record };
          const plans = planAnswers(references, body.custom_fields ?? [], record, false);
          record.title = body.title;
          if (target) {
            record.stageId = target.stage.id;
            record.pipelineId = target.pipeline.id;
          }
          if (responsible) record.responsibleId = responsible.user.id;
          if (body.visibility !== undefined) record.visibility = body.visibility;
          if (body.external_id !== undefined) record.externalId = body.external_id;
          if (body.quality_rating !== undefined) record.qualityRating = body.quality_rating;
          if (body.quality_reason !== undefined) record.qualityReason = body.quality_reason;
          if (body.quality_rating !== undefined || body.quality_reason !== undefined) {
            requireQualityReason(target?.pipeline ?? before.rel.pipeline, record.qualityRating ?? null, record.qualityReason ?? null);
          }
          const now = new Date();
          if (body.organization) {
            record.organizationId = (await this.parts.contacts.createOrganization(tx, record.companyId, body.organization, now)).id;
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
              await origins.resolve(actor.companyId, {
                svcCode: correction.draft.svc_code,
                sourceName: originSourceName(correction.draft),
              })
            ).leadSource;
          }
          if (manualSource !== undefined) record.leadSourceId = manualSource?.id ?? null;
          if (correction.draft?.svc_conversion_tool) await origins.conversionTool(actor.companyId, correction.draft.svc_conversion_tool);
          if (correction.draft) {
            const current = before.rel.marketing.latest;
            const next = acquisitionOf(kind.kind, record, correction.draft, { leadSource: null, tracker: null }, now);
            next.leadSourceId = origin !== undefined ? (origin?.id ?? null) : (current?.leadSourceId ?? null);
            next.trackerId = current?.trackerId ?? null;
            if (current) {
              next.id = current.id;
              next.createdAt = current.createdAt;
            }
            await store.saveAcquisition(tx, next);
          } else if (manualSource !== undefined && before.rel.marketing.latest) {
            await store.relinkAcquisitionSource(tx, record.companyId, before.rel.marketing.latest.id, manualSource?.id ?? null);
          }
          await kind.updateOwnFields?.(tx, record, body, before);
          await store.writeRecord(tx, record);
          if (record.stageId !== before.record.stageId) await store.moveToStage(tx, record.companyId, record.id, record.stageId, now);
          await this.updateParticipants(tx, record, before, body, references, now, chats.created);
          await kind.updated?.(tx, record, before);
          if (tags) await this.replaceTags(tx, before, tags, now);
          const changedPlans = plans.filter((p) => !holdsAnswers(before, p));
          if (changedPlans.length) {
            await store.deleteAnswers(
              tx,
              record.companyId,
              record.id,
              changedPlans.map((p) => p.field.field.id),
            );
            await store.insert(
              tx,
              'answers',
              changedPlans.flatMap((p) => p.rows),
            );
          }
        },
        undefined,
        chats,
      );
      const answer = {
        id: after.record.id,
        code: after.record.code,
        title: after.record.title,
        status: after.record.status,
        quality_rating: after.record.qualityRating ?? null,
        quality_reason: after.record.qualityReason ?? null,
        lost_reason_description: after.record.lostReasonDescription ?? null,
      };
      // `change` moves updated_at exactly when the snapshot changed.
      return { answer, changed: after.record.updatedAt.getTime() !== updatedBefore };
    } catch (err) {
      throw withoutSensitiveText(await refs.externalIdTaken(err, actor.companyId, body.external_id), sensitive);
    }
  }

  private async updateParticipants(
    tx: PoolClient,
    record: R,
    before: Loaded<R, Rel>,
    body: UB,
    references: RichReads,
    at: Date,
    created: Set<string>,
  ) {
    const { store, kind, contacts } = this.parts;
    const removed = (body.persons_id ?? []).filter((p) => p.delete).map((p) => p.person_id);
    if (removed.length) await store.deleteParticipants(tx, record.companyId, record.id, removed);
    const kept = before.rel.participants.filter((p) => !removed.includes(p.person.id));
    const added: PersonWithContacts[] = [];
    for (const p of body.persons_id ?? []) {
      const found = !p.delete && references.persons.find((x) => x.person.id === p.person_id);
      if (found && !kept.some((k) => k.person.id === p.person_id)) added.push(found);
    }
    if (body.person) {
      const person = await contacts.resolvePerson(tx, record.companyId, body.person, 'person', at);
      if (person.created) created.add(person.person.id);
      if (!kept.some((k) => k.person.id === person.person.id) && !added.some((a) => a.person.id === person.person.id)) added.push(person);
    }
    const hasMain = kept.some((k) => k.participant.main);
    const rows = added.map((p, i) => participantRow(record, p.person.id, !hasMain && i === 0, at));
    await store.insert(tx, 'participants', rows, true);
    if (body.phone || body.email) {
      const main = kept.find((k) => k.participant.main) ?? kept[0] ?? added[0];
      if (!main) {
        throw invalidField(body.phone ? 'phone' : 'email', `the ${kind.kind} has no person to hold the contact; send person or persons_id`);
      }
      let holder: PersonWithContacts = main;
      if (body.email) holder = await contacts.addContact(tx, holder, CONTACT_TYPES.email, body.email);
      if (body.phone) await contacts.addContact(tx, holder, CONTACT_TYPES.phone, body.phone);
    }
  }

  /** No tag events (spec). */
  private async replaceTags(tx: PoolClient, before: Loaded<R, Rel>, tagIds: string[], at: Date) {
    const { store } = this.parts;
    const { id, companyId } = before.record;
    const dropped = before.rel.tags.filter((t) => !tagIds.includes(t.id)).map((t) => t.id);
    if (dropped.length) await store.deleteTags(tx, companyId, id, dropped);
    const rows = [...new Set(tagIds)].map((tagId): SalesTag => ({ recordId: id, tagId, companyId, createdAt: at }));
    await store.insert(tx, 'tags', rows, true);
  }
}
