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

/** Decision 0130. */
export interface ChangeChats {
  prefetch?: Promise<ChatPrefetch>;
  /** Persons the change created: none can have a chat yet. */
  created: Set<string>;
}

export type PendingEvent = NewEvent;

/** Decision 0178: updated_at, proposals and chats are ignored; answers compared per custom field id. */
export const SALES_CHANGE_RULES: ChangeRules = {
  ignore: ['updated_at', 'proposals', ...CHAT_FIELD_KEYS],
  byId: { custom_fields: 'field_id' },
};

/** The one way a lead or deal changes (decisions 0043, 0044): PUT, admin actions and creation followers all go through it. */
export class SalesChanges<R extends SalesRecord, Rel extends SalesRelations, S extends { updated_at: string }> {
  constructor(
    private readonly ctx: Pick<ServiceContext, 'outbox' | 'logger'>,
    private readonly store: SalesStore<R, Rel>,
    private readonly kind: RecordKind<R, Rel, S, never, never>,
    private readonly contacts: ContactStore,
    private readonly sources: SalesSources,
  ) {}

  /** Locks the row; when the snapshot differs (updated_at aside), moves updated_at and writes the events in the same transaction. */
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

  private comparable({ record, rel }: Loaded<R, Rel>): string {
    const { updated_at: _u, ...rest } = this.kind.snapshot(record, { ...rel, proposals: [], chats: [] });
    return JSON.stringify(rest);
  }

  /** Asked of chat before the transaction (decision 0130). Never rejects: what it could not ask, the transaction asks. */
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
