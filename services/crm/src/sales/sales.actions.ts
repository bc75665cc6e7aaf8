import { invalidField, notFound } from '@svc/platform/errors';
import { salesEvent } from '@svc/platform/events/payloads';
import type { PoolClient } from 'pg';
import type { NamedItem } from '../catalog/catalog.entity.js';
import type { AnswerInput } from '../catalog/custom-field.answers.js';
import type { User } from '../companies/company.entity.js';
import type { PendingEvent, SalesChanges } from './sales.changes.js';
import { type SalesRecord, SalesStatus, type SalesTag } from './sales.entity.js';
import type { RecordKind } from './sales.kind.js';
import type { SalesRefs } from './sales.refs.js';
import { holdsAnswers, planAnswers, requireQualityReason, stageOf } from './sales.rules.js';
import type { SalesRelations } from './sales.snapshot.js';
import type { Loaded, SalesStore } from './sales.store.js';
import { namedSummary, tagSummary, type UserSummary, userSummary } from './sales.summaries.js';

export interface CloseTarget {
  companyId: string;
  id: string;
  by: User;
}

export interface Closing<R, Rel, S, X> {
  won: boolean;
  lossReasons: NamedItem[];
  lossDescription: string | null;
  /** Runs in the close's transaction (a deal created with a won lead). */
  also?: ((tx: PoolClient, record: R, before: Loaded<R, Rel>, by: User) => Promise<X>) | undefined;
  event: (closed: { snapshot: S; at: string; by: UserSummary | null }, extra: X | undefined) => PendingEvent;
}

/** Admin actions leads and deals share; each fires its events in the change's transaction. */
export class SalesActions<R extends SalesRecord, Rel extends SalesRelations, S extends { updated_at: string }> {
  constructor(
    private readonly store: SalesStore<R, Rel>,
    private readonly kind: RecordKind<R, Rel, S, never, never>,
    private readonly refs: SalesRefs,
    private readonly changes: SalesChanges<R, Rel, S>,
  ) {}

  /** Loss reasons keep the order sent. */
  async lose(companyId: string, ref: string, userId: string, reasonIds: string[], description: string | null) {
    const target = await this.target(companyId, ref, userId);
    const reasons = await this.reasons(companyId, 'loss_reason', reasonIds, 'loss_reason_ids');
    return this.close(target, {
      won: false,
      lossReasons: reasons,
      lossDescription: description,
      event: ({ snapshot, at, by }) =>
        salesEvent(this.kind.kind, 'lost', snapshot, {
          lost_date: at,
          lost_by: by,
          loss_reason: reasons[0] ? namedSummary(reasons[0]) : null,
          loss_reasons: reasons.map(namedSummary),
          loss_reason_description: description,
        }),
    });
  }

  async close<X>({ companyId, id, by }: CloseTarget, outcome: Closing<R, Rel, S, X>): Promise<Loaded<R, Rel>> {
    const now = new Date();
    let extra: X | undefined;
    return this.changes.change(
      companyId,
      id,
      async (tx, before) => {
        const record = {
          ...before.record,
          status: outcome.won ? SalesStatus.won : SalesStatus.lost,
          wonDate: outcome.won ? now : null,
          lostDate: outcome.won ? null : now,
          lostReasonDescription: outcome.lossDescription,
        };
        await this.kind.closing?.(tx, record, outcome.won);
        if (outcome.also) extra = await outcome.also(tx, record, before, by);
        await this.store.writeRecord(tx, record);
        await this.store.replaceReasons(tx, this.store.setLossReasons, companyId, id, outcome.lossReasons);
      },
      (_b, _a, snapshot) => [outcome.event({ snapshot, at: now.toISOString(), by: userSummary(by) }, extra)],
    );
  }

  async move(companyId: string, ref: string, userId: string, stageId: string) {
    const id = await this.refs.requireOf(companyId, ref);
    await this.actingUser(companyId, userId);
    const target = stageOf(await this.store.readCreation(await this.store.pool, companyId, stageId, userId, userId), stageId);
    const now = new Date();
    return this.changes.change(companyId, id, async (tx, before) => {
      if (before.record.stageId === target.stage.id) return;
      const record = { ...before.record, stageId: target.stage.id, pipelineId: target.pipeline.id };
      await this.store.writeRecord(tx, record);
      await this.store.moveToStage(tx, companyId, id, target.stage.id, now);
    });
  }

  async addTags(companyId: string, ref: string, userId: string, tagIds: string[]) {
    const id = await this.refs.requireOf(companyId, ref);
    await this.actingUser(companyId, userId);
    const references = await this.store.readReferences(await this.store.pool, companyId, { tags: tagIds });
    tagIds.forEach((t, i) => {
      if (!references.tags.some((x) => x.id === t)) throw invalidField(`tag_ids[${i}]`, 'unknown tag');
    });
    const at = new Date();
    return this.changes.change(
      companyId,
      id,
      async (tx) => {
        const rows = [...new Set(tagIds)].map((tagId): SalesTag => ({ recordId: id, tagId, companyId, createdAt: at }));
        await this.store.insert(tx, 'tags', rows, true);
      },
      (before, after, snapshot) => {
        const added = after.rel.tags.filter((t) => !before.rel.tags.some((b) => b.id === t.id));
        return added.length ? [salesEvent(this.kind.kind, 'tag_added', snapshot, { added_tags: added.map(tagSummary) })] : [];
      },
    );
  }

  async removeTag(companyId: string, ref: string, userId: string, tagId: string) {
    const id = await this.refs.requireOf(companyId, ref);
    await this.actingUser(companyId, userId);
    return this.changes.change(
      companyId,
      id,
      async (tx, before) => {
        if (!before.rel.tags.some((t) => t.id === tagId)) throw notFound(`Tag of the ${this.kind.kind}`);
        await this.store.deleteTags(tx, companyId, id, [tagId]);
      },
      (before, after, snapshot) => {
        const removed = before.rel.tags.filter((t) => !after.rel.tags.some((a) => a.id === t.id));
        return [salesEvent(this.kind.kind, 'tag_removed', snapshot, { removed_tags: removed.map(tagSummary) })];
      },
    );
  }

  async setCustomField(companyId: string, ref: string, userId: string, answer: AnswerInput) {
    const id = await this.refs.requireOf(companyId, ref);
    await this.actingUser(companyId, userId);
    const references = await this.store.readReferences(await this.store.pool, companyId, {});
    if (!references.fields.some((f) => f.field.id === answer.id))
      throw invalidField('field_id', `no ${this.kind.kind} custom field with this id`);
    return this.changes.change(companyId, id, async (tx, before) => {
      const [plan] = planAnswers(references, [answer], before.record, true, () => '');
      if (!plan) return;
      if (!plan.rows.length) throw invalidField('value', 'send value, option_id or option_ids; DELETE removes an answer');
      if (holdsAnswers(before, plan)) return;
      await this.store.deleteAnswers(tx, companyId, id, [plan.field.field.id]);
      await this.store.insert(tx, 'answers', plan.rows);
    });
  }

  async removeCustomField(companyId: string, ref: string, userId: string, fieldId: string) {
    const id = await this.refs.requireOf(companyId, ref);
    await this.actingUser(companyId, userId);
    return this.changes.change(companyId, id, async (tx, before) => {
      if (!before.rel.customFields.some((f) => f.field.id === fieldId)) throw notFound(`Custom field answer of the ${this.kind.kind}`);
      await this.store.deleteAnswers(tx, companyId, id, [fieldId]);
    });
  }

  async setQuality(companyId: string, ref: string, userId: string, rating: number, reason: string | null) {
    const id = await this.refs.requireOf(companyId, ref);
    await this.actingUser(companyId, userId);
    return this.changes.change(companyId, id, async (tx, before) => {
      requireQualityReason(before.rel.pipeline, rating, reason);
      await this.store.writeRecord(tx, { ...before.record, qualityRating: rating, qualityReason: reason });
    });
  }

  /** 404 for a foreign record, 400 for a foreign user. */
  async target(companyId: string, ref: string, userId: string): Promise<CloseTarget> {
    const id = await this.refs.requireOf(companyId, ref);
    return { companyId, id, by: await this.actingUser(companyId, userId) };
  }

  /** An unknown reason is a 400 naming `field[i]`. */
  async reasons(companyId: string, kind: 'loss_reason' | 'gain_reason', ids: string[], field: string): Promise<NamedItem[]> {
    if (!ids.length) return [];
    const found = await this.store.findNamedItems(await this.store.pool, companyId, kind, ids);
    return ids.map((id, i) => {
      const item = found.find((r) => r.id === id);
      if (!item) throw invalidField(`${field}[${i}]`, `unknown ${kind.replace('_', ' ')}`);
      return item;
    });
  }

  private async actingUser(companyId: string, userId: string): Promise<User> {
    const reads = await this.store.readCreation(await this.store.pool, companyId, null, userId, userId);
    const user = reads.users.find((u) => u.id === userId);
    if (!user) throw invalidField('user_id', 'no such user in the company');
    return user;
  }
}
