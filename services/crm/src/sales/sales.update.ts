import { run } from '@svc/platform/db/native';
import { invalid } from '@svc/platform/errors';
import type { PoolClient } from 'pg';
import type { LeadSource } from '../catalog/catalog.entity.js';
import { CONTACT_TYPES } from '../contacts/contact.service.js';
import type { PersonWithContacts } from '../contacts/contact.sql.js';
import { acquisitionOf } from '../marketing/acquisition.service.js';
import { correctAcquisition } from '../marketing/correction.js';
import { findOrCreateLeadSource, resolveOrigin } from '../marketing/origin.js';
import { withoutSensitiveText } from '../marketing/redaction.js';
import { originSourceName } from '../marketing/tracking.js';
import type { Actor, ChangeChats, Loaded } from './sales.base.js';
import { SalesCreation } from './sales.creation.js';
import type { SalesRecord, SalesTag } from './sales.entity.js';
import { conversionToolOf, holdsAnswers, participantRow, requireQualityReason, responsibleOf, stageOf } from './sales.rules.js';
import type { CreateSalesBody, UpdateSalesBody } from './sales.schema.js';
import type { RichReads } from './sales.select.js';
import { effectiveConsent, type SalesRelations } from './sales.snapshot.js';

/** An update body: PUT /leads' fields, plus `tags` where the kind's PUT takes them (deals, decision 0052). */
type SalesUpdateBody = UpdateSalesBody & { tags?: string[] | undefined };

/** PUT /leads/{id} and PUT /deals/{id} (decisions 0044, 0052), through `change`. */
export abstract class SalesUpdates<
  R extends SalesRecord,
  Rel extends SalesRelations,
  S extends { updated_at: string },
  CB extends CreateSalesBody = CreateSalesBody,
  UB extends UpdateSalesBody = UpdateSalesBody,
> extends SalesCreation<R, Rel, S, CB, UB> {
  /**
   * PUT /leads/{id} and PUT /deals/{id}: every field sent replaces the current value (organization_id null
   * unlinks, persons_id with delete removes, marketing corrects the current acquisition); omitted fields are
   * kept. `<kind>.updated` (and stage_changed, custom_field_updated/removed, quality_updated) are written with
   * the change when something changed (decisions 0043, 0044).
   */
  async update(actor: Actor, ref: string, body: UB) {
    return (await this.applyUpdate(actor, ref, body)).answer;
  }

  /** `update`, and whether it changed the record (a batch upsert answers `unchanged` when not; decision 0181). */
  async applyUpdate(actor: Actor, ref: string, body: UB) {
    const id = await this.visibleId(actor, ref);
    let updatedBefore = 0;
    // The chats of its persons and of those the body links are asked of chat while the references are read.
    const named = (body.persons_id ?? []).filter((p) => !p.delete).map((p) => p.person_id);
    const chats: ChangeChats = { prefetch: this.chatsBefore(actor.companyId, id, named, body.person), created: new Set() };
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
      const after = await this.change(
        actor.companyId,
        id,
        async (client, before) => {
          updatedBefore = before.record.updatedAt.getTime();
          const record = { ...before.record };
          const plans = this.planAnswers(refs, body.custom_fields ?? [], record, false);
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
          await this.updateParticipants(client, record, before, body, refs, now, chats.created);
          await this.updated(client, record, before);
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
      throw withoutSensitiveText(await this.externalIdTaken(err, actor.companyId, body.external_id), sensitive);
    }
  }

  /** What a kind does once a PUT wrote the record and its persons (a deal won by PUT finds or makes its customer). */
  protected async updated(_client: PoolClient, _record: R, _before: Loaded<R, Rel>): Promise<void> {}

  /** The persons of a PUT: removed, linked (`created` gets those it created), and the contacts of phone and email. */
  protected async updateParticipants(
    client: PoolClient,
    record: R,
    before: Loaded<R, Rel>,
    body: UB,
    refs: RichReads,
    at: Date,
    created: Set<string>,
  ) {
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
      if (person.created) created.add(person.person.id);
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
  protected async replaceTags(client: PoolClient, before: Loaded<R, Rel>, tagIds: string[], at: Date) {
    const { id, companyId } = before.record;
    const dropped = before.rel.tags.filter((t) => !tagIds.includes(t.id)).map((t) => t.id);
    if (dropped.length) await run(client, this.sql.removeTags, [companyId, id, dropped]);
    const rows = [...new Set(tagIds)].map((tagId): SalesTag => ({ recordId: id, tagId, companyId, createdAt: at }));
    await this.sql.insert(client, 'tags', rows, true);
  }
}
