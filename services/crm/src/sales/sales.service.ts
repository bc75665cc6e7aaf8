import { run } from '@svc/platform/db/native';
import { invalidField, notFound } from '@svc/platform/errors';
import { salesEvent } from '@svc/platform/events/payloads';
import type { PoolClient } from 'pg';
import type { NamedItem } from '../catalog/catalog.entity.js';
import type { AnswerInput } from '../catalog/custom-field.answers.js';
import type { User } from '../companies/company.entity.js';
import type { CloseTarget, Loaded, PendingEvent } from './sales.base.js';
import type { SalesTag } from './sales.entity.js';
import { type SalesRecord, SalesStatus } from './sales.entity.js';
import { holdsAnswers, requireQualityReason, stageOf } from './sales.rules.js';
import type { CreateSalesBody, UpdateSalesBody } from './sales.schema.js';
import type { SalesRelations } from './sales.snapshot.js';
import { namedSummary, tagSummary, type UserSummary, userSummary } from './sales.summaries.js';
import { SalesUpdates } from './sales.update.js';

/**
 * What leads and deals share (decisions 0040–0044, 0051): creation with its relations, idempotency, followers
 * and note after the record, the visibility check, PUT, the change machinery that writes `<kind>.updated` and the
 * events derived from two snapshots, and the CRM's dedicated actions that both kinds have. Leads and Deals add
 * what only their kind has: the record's own columns, its snapshot, its detail and its created payload.
 */
export abstract class SalesRecords<
  R extends SalesRecord,
  Rel extends SalesRelations,
  S extends { updated_at: string },
  CB extends CreateSalesBody = CreateSalesBody,
  UB extends UpdateSalesBody = UpdateSalesBody,
> extends SalesUpdates<R, Rel, S, CB, UB> {
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
          status: outcome.won ? SalesStatus.won : SalesStatus.lost,
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
      if (!refs.tags.some((x) => x.id === t)) throw invalidField(`tag_ids[${i}]`, 'unknown tag');
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
    if (!refs.fields.some((f) => f.field.id === answer.id)) throw invalidField('field_id', `no ${this.kind} custom field with this id`);
    return this.change(companyId, id, async (client, before) => {
      const [plan] = this.planAnswers(refs, [answer], before.record, true, () => '');
      if (!plan) return;
      if (!plan.rows.length) throw invalidField('value', 'send value, option_id or option_ids; DELETE removes an answer');
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
