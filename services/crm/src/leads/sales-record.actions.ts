/**
 * Changes of a sales record (a lead or a deal) and the CRM's dedicated actions on it (admin API), written once for
 * both kinds (decisions 0043 and 0056): a change reads the record's snapshot before and after `work` in one
 * transaction and writes `<entity>.updated`, plus what it derives and the action's own event, to the outbox.
 */
import { inTransaction, run, type Statement } from '@svc/platform/db/native';
import { invalid, isUuid, notFound } from '@svc/platform/errors';
import { outboxChannel } from '@svc/platform/events/outbox';
import type { Pool, PoolClient } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import type { NamedItem } from '../catalog/catalog.entity.js';
import { type AnswerInput, type AnswerPlan, type FieldDefinition, planAnswer } from '../catalog/custom-field.answers.js';
import type { User } from '../companies/company.entity.js';
import { LeadStatus } from './lead.entity.js';
import type { LeadRelations, SalesRecord } from './lead.snapshot.js';
import type { LeadSql } from './lead.sql.js';
import {
  type CustomFieldChange,
  customFieldsWithAnswers,
  namedSummary,
  type RemovedCustomField,
  stageSummary,
  tagSummary,
  type UserSummary,
  userSummary,
} from './lead.summaries.js';

type Json = Record<string, unknown>;

export interface PendingEvent {
  key: string;
  payload: Json;
}

/** A record read with its relations (`LeadSql.fromRow`, `DealSql.fromRow`). */
export interface LoadedRecord {
  rel: LeadRelations;
}

/** What the shared change machinery needs to know of one kind of sales record. */
export interface SalesRecordKind<R extends SalesRecord, L extends LoadedRecord, S extends Json> {
  entity: 'lead' | 'deal';
  /** `Lead`, `Deal`: what a 404 names. */
  label: string;
  /** $1 company, $2 id: the record and its relations, its row locked (`for update`). */
  readLocked: Statement;
  /** The same without the lock (the read after `work`). */
  read: Statement;
  /** `recordStatements` of its table. */
  touch: Statement;
  update: Statement;
  idOf: Statement;
  /** $1 company, $2 record, $3 its reason rows: replace its loss reasons. */
  setLossReasons: Statement;
  /** The same for gain reasons (deals). */
  setGainReasons: Statement | null;
  /** $1 company, $2 record, $3 stage, $4 at: close the open stage period and open one (leads; deals keep none). */
  enterStage: Statement | null;
  /** How the record's tags are stored (its tag table and rows; `removeTags`: $1 company, $2 record, $3 tag ids). */
  tags: { table: string; removeTags: Statement; row(recordId: string, tagId: string, companyId: string, at: Date): object } | null;
  load(row: Json): L;
  record(loaded: L): R;
  /** The record's row for `update`. */
  row(record: R): Json;
  /** The record's snapshot (LeadSnapshot, DealSnapshot): what events carry. */
  snapshot(loaded: L): S;
  /** Columns a loss resets besides the lead's (a deal's won_reason_description). */
  lostColumns: Partial<R>;
}

type Work<L> = (client: PoolClient, before: L) => Promise<void>;
type Events<L, S> = (before: L, after: L, snapshot: S) => PendingEvent[];

const CODE = /^[1-9]\d{0,9}$/;

/** The change machinery and the dedicated actions of one kind of sales record. */
export class SalesRecordActions<R extends SalesRecord, L extends LoadedRecord, S extends Json> {
  constructor(
    private readonly kind: SalesRecordKind<R, L, S>,
    private readonly sql: LeadSql,
    private readonly pool: Promise<Pool>,
    private readonly schema: string,
  ) {}

  /**
   * One change of a record in a transaction: its row is locked and its snapshot read, `work` writes, the snapshot
   * is read again. When it differs (updated_at aside), updated_at moves and the events are written in the same
   * transaction: the ones `events` derives, and `<entity>.updated` with the new snapshot. Unchanged: no event.
   */
  async change(companyId: string, id: string, work: Work<L>, events: Events<L, S> = this.defaultEvents): Promise<L> {
    const k = this.kind;
    return inTransaction(await this.pool, async (client) => {
      const [row] = await run(client, k.readLocked, [companyId, id]);
      if (!row) throw notFound(k.label);
      const before = k.load(row);
      await work(client, before);
      const [afterRow] = await run(client, k.read, [companyId, id]);
      const after = k.load(afterRow!);
      if (this.comparable(before) === this.comparable(after)) return after;
      const [touched] = await run<{ updated_at: string }>(client, k.touch, [companyId, id]);
      k.record(after).updatedAt = new Date(touched!.updated_at);
      const snapshot = k.snapshot(after);
      const pending = [...events(before, after, snapshot), { key: `${k.entity}.updated`, payload: snapshot }];
      await run(client, this.sql.events, [
        companyId,
        JSON.stringify(pending.map((e) => ({ id: uuidv7(), key: e.key, payload: e.payload }))),
        outboxChannel(this.schema),
      ]);
      return after;
    });
  }

  /** A snapshot as compared for "did anything change": updated_at aside. */
  private comparable(loaded: L): string {
    const { updated_at: _u, ...rest } = this.kind.snapshot(loaded);
    return JSON.stringify(rest);
  }

  /**
   * The events a change fires besides `<entity>.updated`, read off the two snapshots: stage_changed on a stage
   * move, custom_field_updated / custom_field_removed on answers created, changed or removed, quality_updated when
   * the qualification is created or changed.
   */
  readonly defaultEvents: Events<L, S> = (before, after, snapshot) => {
    const { entity } = this.kind;
    const events: PendingEvent[] = [];
    const r0 = this.kind.record(before);
    const r1 = this.kind.record(after);
    if (r0.stageId !== r1.stageId) {
      events.push({
        key: `${entity}.stage_changed`,
        payload: {
          previous_stage: stageSummary(before.rel.stage, before.rel.pipeline),
          current_stage: stageSummary(after.rel.stage, after.rel.pipeline),
          [entity]: snapshot,
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
    if (changed.length)
      events.push({ key: `${entity}.custom_field_updated`, payload: { [entity]: snapshot, custom_fields_changed: changed } });
    if (removed.length) events.push({ key: `${entity}.custom_field_removed`, payload: { [entity]: snapshot, removed_fields: removed } });
    if ((r0.qualityRating ?? null) !== (r1.qualityRating ?? null) || (r0.qualityReason ?? null) !== (r1.qualityReason ?? null)) {
      events.push({
        key: `${entity}.quality_updated`,
        payload: {
          [entity]: snapshot,
          previous_quality: r0.qualityRating ?? null,
          previous_quality_reason: r0.qualityReason ?? null,
          new_quality: r1.qualityRating ?? null,
          new_quality_reason: r1.qualityReason ?? null,
        },
      });
    }
    return events;
  };

  /** Writes the record's changeable columns. */
  async write(client: PoolClient, record: R): Promise<void> {
    await run(client, this.kind.update, [record.companyId, record.id, JSON.stringify(this.kind.row(record))]);
  }

  /** The id of the company's record `ref` (UUID or code), else null. */
  async idOf(db: Pool | PoolClient, companyId: string, ref: string): Promise<string | null> {
    const byId = isUuid(ref);
    if (!byId && !CODE.test(ref)) return null;
    const [row] = await run<{ id: string }>(db, this.kind.idOf, [companyId, byId ? ref : null, byId ? null : Number(ref)]);
    return row?.id ?? null;
  }

  /** The id of the company's record `ref`; another company's or none is a 404. */
  async requireOf(companyId: string, ref: string): Promise<string> {
    const id = await this.idOf(await this.pool, companyId, ref);
    if (!id) throw notFound(this.kind.label);
    return id;
  }

  /** The acting user of an admin action (`user_id`): a user of the company, else a 400. */
  async actingUser(companyId: string, userId: string): Promise<User> {
    const [row] = await run(await this.pool, this.sql.createReads, [companyId, null, userId, userId]);
    const user = this.sql.createReadsFromRow(row ?? {}).users.find((u) => u.id === userId);
    if (!user) throw invalid('user_id: no such user in the company');
    return user;
  }

  /** The company's reasons of `kind` named by `ids` (in that order); an unknown one is a 400 naming `field[i]`. */
  async reasons(companyId: string, kind: 'loss_reason' | 'gain_reason', ids: string[], field: string): Promise<NamedItem[]> {
    return this.sql.namedItemsIn(await this.pool, companyId, kind, ids, field);
  }

  private reasonRows(record: R, reasons: NamedItem[]) {
    const column = `${this.kind.entity}_id`;
    return JSON.stringify(reasons.map((r, i) => ({ [column]: record.id, reason_id: r.id, company_id: record.companyId, position: i + 1 })));
  }

  /** The record `ref` of the company (404 otherwise) and the acting user `userId` (400 when not the company's). */
  private async target(companyId: string, ref: string, userId: string): Promise<{ id: string; by: User }> {
    const id = await this.requireOf(companyId, ref);
    return { id, by: await this.actingUser(companyId, userId) };
  }

  /**
   * Marks the record won (won_date now; lost_date, loss reasons and their description cleared; `columns` and
   * `also` add what the kind writes besides) and fires `<entity>.won` with the payload `payload` builds.
   */
  async win<X>(
    companyId: string,
    ref: string,
    userId: string,
    opts: {
      columns?: Partial<R>;
      gainReasons?: NamedItem[];
      also?: (client: PoolClient, before: L, by: User, now: Date) => Promise<X>;
      payload: (won: { snapshot: S; won_date: string; won_by: UserSummary | null }, extra: X | undefined) => Json;
    },
  ): Promise<L> {
    return this.close(await this.target(companyId, ref, userId), {
      won: true,
      lostReasonDescription: null,
      columns: opts.columns ?? {},
      lossReasons: [],
      gainReasons: opts.gainReasons ?? [],
      also: opts.also,
      payload: ({ snapshot, at, by }, extra) => opts.payload({ snapshot, won_date: at, won_by: by }, extra),
    });
  }

  /** Marks the record lost (lost_date now; won_date and what the kind's win set cleared) and fires `<entity>.lost`. */
  async lose(companyId: string, ref: string, userId: string, reasonIds: string[], description: string | null) {
    const target = await this.target(companyId, ref, userId);
    const reasons = await this.reasons(companyId, 'loss_reason', reasonIds, 'loss_reason_ids');
    return this.close(target, {
      won: false,
      lostReasonDescription: description,
      columns: this.kind.lostColumns,
      lossReasons: reasons,
      gainReasons: [],
      payload: ({ snapshot, at, by }) => ({
        [this.kind.entity]: snapshot,
        lost_date: at,
        lost_by: by,
        loss_reason: reasons[0] ? namedSummary(reasons[0]) : null,
        loss_reasons: reasons.map(namedSummary),
        loss_reason_description: description,
      }),
    });
  }

  /** Closes the record as won or lost with its reasons and fires `<entity>.won` / `<entity>.lost` (and updated). */
  private async close<X>(
    { id, by }: { id: string; by: User },
    outcome: {
      won: boolean;
      lostReasonDescription: string | null;
      columns: Partial<R>;
      lossReasons: NamedItem[];
      gainReasons: NamedItem[];
      also?: ((client: PoolClient, before: L, by: User, now: Date) => Promise<X>) | undefined;
      payload: (closed: { snapshot: S; at: string; by: UserSummary | null }, extra: X | undefined) => Json;
    },
  ): Promise<L> {
    const now = new Date();
    let extra: X | undefined;
    return this.change(
      by.companyId,
      id,
      async (client, before) => {
        const record = {
          ...this.kind.record(before),
          status: outcome.won ? LeadStatus.won : LeadStatus.lost,
          wonDate: outcome.won ? now : null,
          lostDate: outcome.won ? null : now,
          lostReasonDescription: outcome.lostReasonDescription,
          ...outcome.columns,
        };
        await this.write(client, record);
        await run(client, this.kind.setLossReasons, [record.companyId, id, this.reasonRows(record, outcome.lossReasons)]);
        if (this.kind.setGainReasons) {
          await run(client, this.kind.setGainReasons, [record.companyId, id, this.reasonRows(record, outcome.gainReasons)]);
        }
        if (outcome.also) extra = await outcome.also(client, before, by, now);
      },
      (_b, _a, snapshot) => [
        {
          key: `${this.kind.entity}.${outcome.won ? 'won' : 'lost'}`,
          payload: outcome.payload({ snapshot, at: now.toISOString(), by: userSummary(by) }, extra),
        },
      ],
    );
  }

  /** Moves the record to a stage of any pipeline of the company (stage_changed and updated); the same stage: nothing. */
  async move(companyId: string, ref: string, userId: string, stageId: string) {
    const { id } = await this.target(companyId, ref, userId);
    const [readRow] = await run(await this.pool, this.sql.createReads, [companyId, stageId, userId, userId]);
    const { stage, pipeline } = this.sql.createReadsFromRow(readRow ?? {});
    if (!stage || !pipeline) throw invalid('stage_id: no such stage in the company');
    const now = new Date();
    return this.change(companyId, id, async (client, before) => {
      if (this.kind.record(before).stageId === stage.id) return;
      await this.write(client, { ...this.kind.record(before), stageId: stage.id, pipelineId: pipeline.id });
      if (this.kind.enterStage) await run(client, this.kind.enterStage, [companyId, id, stage.id, now]);
    });
  }

  private tagStore() {
    const tags = this.kind.tags;
    if (!tags) throw invalid(`tag_ids: ${this.kind.entity}s have no tags yet`);
    return tags;
  }

  /** Adds tags; only those not already on the record fire `<entity>.tag_added` (none new: no event). */
  async addTags(companyId: string, ref: string, userId: string, tagIds: string[]) {
    const store = this.tagStore();
    const { id } = await this.target(companyId, ref, userId);
    const [row] = await run(await this.pool, this.sql.richReads, [companyId, tagIds, [], null, [], []]);
    const known = this.sql.richReadsFromRow(row ?? {}).tags;
    tagIds.forEach((t, i) => {
      if (!known.some((x) => x.id === t)) throw invalid(`tag_ids[${i}]: unknown tag`);
    });
    const at = new Date();
    return this.change(
      companyId,
      id,
      async (client) => {
        const rows = [...new Set(tagIds)].map((tagId) => store.row(id, tagId, companyId, at));
        await this.sql.insert(client, store.table, rows, true);
      },
      (before, after, snapshot) => {
        const added = after.rel.tags.filter((t) => !before.rel.tags.some((b) => b.id === t.id));
        return added.length
          ? [{ key: `${this.kind.entity}.tag_added`, payload: { [this.kind.entity]: snapshot, added_tags: added.map(tagSummary) } }]
          : [];
      },
    );
  }

  /** Removes one tag (`<entity>.tag_removed`); a tag the record does not carry is a 404. */
  async removeTag(companyId: string, ref: string, userId: string, tagId: string) {
    const store = this.tagStore();
    const { id } = await this.target(companyId, ref, userId);
    return this.change(
      companyId,
      id,
      async (client, before) => {
        if (!before.rel.tags.some((t) => t.id === tagId)) throw notFound(`Tag of the ${this.kind.entity}`);
        await run(client, store.removeTags, [companyId, id, [tagId]]);
      },
      (before, after, snapshot) => {
        const removed = before.rel.tags.filter((t) => !after.rel.tags.some((a) => a.id === t.id));
        return [
          { key: `${this.kind.entity}.tag_removed`, payload: { [this.kind.entity]: snapshot, removed_tags: removed.map(tagSummary) } },
        ];
      },
    );
  }

  /** The plans of custom field answers to the record (`custom_fields[i]` in errors): fields of the record's entity. */
  planAnswers(fields: FieldDefinition[], answers: AnswerInput[], record: Pick<R, 'id' | 'companyId'>, allowFiles: boolean): AnswerPlan[] {
    const byId = new Map<string, FieldDefinition>(fields.map((f) => [f.field.id, f]));
    const at = new Date();
    return answers.map((a, i) =>
      planAnswer(byId, a, `custom_fields[${i}]`, { companyId: record.companyId, recordId: record.id, at, allowFiles }),
    );
  }

  /** Replaces one field's answers (custom_field_updated); answers already held change nothing and fire nothing. */
  async setCustomField(companyId: string, ref: string, userId: string, answer: AnswerInput) {
    const { id } = await this.target(companyId, ref, userId);
    const fields = await this.sql.fieldsOf(await this.pool, companyId, this.kind.entity);
    return this.change(companyId, id, async (client, before) => {
      const [plan] = this.planAnswers(fields, [answer], this.kind.record(before), true);
      if (!plan) return;
      if (!plan.rows.length) throw invalid('value: send value, option_id or option_ids; DELETE removes an answer');
      if (holdsAnswers(before, plan)) return;
      await run(client, this.sql.clearAnswers, [companyId, id, [plan.field.field.id]]);
      await this.sql.insert(client, 'custom_field_values', plan.rows);
    });
  }

  /** Removes one field's answers (custom_field_removed); a field without answers on the record is a 404. */
  async removeCustomField(companyId: string, ref: string, userId: string, fieldId: string) {
    const { id } = await this.target(companyId, ref, userId);
    return this.change(companyId, id, async (client, before) => {
      if (!before.rel.customFields.some((f) => f.field.id === fieldId)) throw notFound(`Custom field answer of the ${this.kind.entity}`);
      await run(client, this.sql.clearAnswers, [companyId, id, [fieldId]]);
    });
  }

  /** Sets the qualification (quality_updated); the pipeline's reason rule applies. */
  async setQuality(companyId: string, ref: string, userId: string, rating: number, reason: string | null) {
    const { id } = await this.target(companyId, ref, userId);
    return this.change(companyId, id, async (client, before) => {
      requireQualityReason(before.rel.pipeline, rating, reason);
      await this.write(client, { ...this.kind.record(before), qualityRating: rating, qualityReason: reason });
    });
  }
}

/** Whether the record already holds exactly the answers a plan writes (rewriting them would change only their ids). */
export function holdsAnswers(before: LoadedRecord, plan: AnswerPlan): boolean {
  const key = (optionId: string | null | undefined, value: string | null | undefined) => `${optionId ?? ''}\u0000${value ?? ''}`;
  const held = before.rel.customFields
    .filter((c) => c.field.id === plan.field.field.id)
    .map((c) => key(c.value.optionId, c.value.value))
    .sort();
  const planned = plan.rows.map((r) => key(r.optionId, r.value)).sort();
  return held.length === planned.length && held.every((k, i) => k === planned[i]);
}

/** A qualification in a funnel that demands a reason needs one (decision 0040). */
export function requireQualityReason(pipeline: LeadRelations['pipeline'], rating: number | null, reason: string | null) {
  if (pipeline?.requiresQualityReason && rating !== null && !reason?.trim()) {
    throw invalid(`quality_reason: required by the pipeline ${pipeline.name} when quality_rating is set`);
  }
}
