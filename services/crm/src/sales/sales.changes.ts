import { inTransaction } from '@svc/platform/db/native';
import { notFound } from '@svc/platform/errors';
import { salesKey } from '@svc/platform/events/catalog';
import { type ChangeRules, withChanges } from '@svc/platform/events/changes';
import { type NewEvent, salesEvent } from '@svc/platform/events/payloads';
import type { ServiceContext } from '@svc/platform/service';
import type { PoolClient } from 'pg';
import type { ContactStore, PersonRequest } from '../contacts/contact.store.js';
import { CHAT_FIELD_KEYS, ChatPrefetch } from './sales.chats.js';
import type { SalesKind, SalesRecord } from './sales.entity.js';
import type { RecordKind, SalesSources } from './sales.kind.js';
import type { SalesRelations } from './sales.snapshot.js';
import type { Loaded, SalesStore } from './sales.store.js';
import { type CustomFieldChange, customFieldsWithAnswers, type RemovedCustomField, stageSummary } from './sales.summaries.js';

/** What a change knows of the chats of its record's persons (decision 0130). */
export interface ChangeChats {
  /** The chats asked for before the transaction (`chatsBefore`); without it, `change` asks for the record's persons. */
  prefetch?: Promise<ChatPrefetch>;
  /** The persons the change's work created: none of them can have a chat yet. */
  created: Set<string>;
}

/** An event of a change, typed by its key (the catalog's payload types). */
export type PendingEvent = NewEvent;

/**
 * How a change's `changes` compares lead and deal snapshots (decision 0178): updated_at moves with every change,
 * proposals and chats are not the record's own (a change never changes them); answers per custom field id.
 */
export const SALES_CHANGE_RULES: ChangeRules = {
  ignore: ['updated_at', 'proposals', ...CHAT_FIELD_KEYS],
  byId: { custom_fields: 'field_id' },
};

/**
 * The one way a lead or deal changes (decisions 0043, 0044): its snapshots before and after, `<kind>.updated` and the
 * events derived from the two. PUT, the admin actions and the followers of a creation all go through `change`.
 */
export class SalesChanges<R extends SalesRecord, Rel extends SalesRelations, S extends { updated_at: string }> {
  constructor(
    private readonly ctx: Pick<ServiceContext, 'outbox' | 'logger'>,
    private readonly store: SalesStore<R, Rel>,
    private readonly kind: RecordKind<R, Rel, S, never, never>,
    private readonly contacts: ContactStore,
    private readonly sources: SalesSources,
  ) {}

  /**
   * One change of a record in a transaction: its row is locked and its snapshot read, `work` writes, the snapshot is
   * read again. When it differs (updated_at aside), updated_at moves and the events are written in the same
   * transaction: the ones `events` derives, and `<kind>.updated` with the new snapshot, each with `changes`, the
   * fields the two snapshots differ in (decision 0178). The snapshot after carries the proposals (read in the
   * transaction) and the chats of the persons (asked of chat before it: `chats.prefetch`, else for the record's
   * persons; decision 0130).
   */
  async change(
    companyId: string,
    recordId: string,
    work: (tx: PoolClient, before: Loaded<R, Rel>) => Promise<void>,
    events: (before: Loaded<R, Rel>, after: Loaded<R, Rel>, snapshot: S) => PendingEvent[] = (b, a, s) =>
      derivedEvents(this.kind.kind, b, a, s),
    chats: ChangeChats = { created: new Set() },
  ): Promise<Loaded<R, Rel>> {
    const pool = await this.store.pool;
    const prefetched = await (chats.prefetch ?? this.chatsBefore(companyId, recordId));
    return inTransaction(pool, async (tx) => {
      const before = await this.store.lockLoaded(tx, companyId, recordId);
      if (!before) throw notFound(this.kind.label);
      await work(tx, before);
      const after = await this.store.loaded(tx, companyId, recordId);
      after.rel.chats = await prefetched.of(
        tx,
        after.rel.participants.map((p) => p.person.id),
        chats.created,
      );
      if (this.comparable(before) === this.comparable(after)) return after;
      after.record.updatedAt = await this.store.touchRecord(tx, companyId, recordId);
      const snapshot = this.kind.snapshot(after.record, after.rel);
      const pending: PendingEvent[] = withChanges(
        [...events(before, after, snapshot), { eventKey: salesKey(this.kind.kind, 'updated'), payload: snapshot }],
        this.kind.snapshot(before.record, before.rel),
        snapshot,
        SALES_CHANGE_RULES,
      );
      await this.ctx.outbox.write(
        tx,
        pending.map((e) => ({ ...e, companyId })),
      );
      return after;
    });
  }

  /**
   * A snapshot as compared for "did anything change": updated_at aside, and without the proposals and chats (a change
   * of a record never changes them; the read before it does not hold them).
   */
  private comparable({ record, rel }: Loaded<R, Rel>): string {
    const { updated_at: _u, ...rest } = this.kind.snapshot(record, { ...rel, proposals: [], chats: [] });
    return JSON.stringify(rest);
  }

  /**
   * The chats of the persons a change or a creation may show, asked of chat before its transaction (decision 0130):
   * record `recordId`'s persons (one small read; null for a creation), the persons a request names (`named`, as sent)
   * and the one a deduplicating `person` would reuse (read without locks). No persons, no call; without a chat service,
   * nothing at all. Never rejects: what it could not ask, the transaction asks.
   */
  chatsBefore(companyId: string, recordId: string | null, named: string[] = [], person?: PersonRequest | null): Promise<ChatPrefetch> {
    const source = this.sources.chats;
    if (!source) return Promise.resolve(ChatPrefetch.none);
    const { logger } = this.ctx;
    return (async () => {
      const pool = await this.store.pool;
      let ids: string[];
      try {
        const [own, candidate] = await Promise.all([
          recordId ? this.store.personIdsOf(pool, companyId, recordId) : [],
          person ? this.contacts.candidate(pool, companyId, person) : null,
        ]);
        ids = [...own, ...named, ...(candidate ? [candidate] : [])];
      } catch (err) {
        logger.warn({ err }, 'persons of a record not read before its transaction');
        ids = [];
      }
      return ChatPrefetch.start(source, pool, companyId, ids, logger);
    })();
  }
}

/**
 * The events a change fires besides `<kind>.updated`, read off the two snapshots: stage_changed on a stage move,
 * custom_field_updated / custom_field_removed on answers created, changed or removed, quality_updated when the
 * qualification is created or changed.
 */
export function derivedEvents(
  kind: SalesKind,
  before: Loaded<SalesRecord, SalesRelations>,
  after: Loaded<SalesRecord, SalesRelations>,
  snapshot: object,
): PendingEvent[] {
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
