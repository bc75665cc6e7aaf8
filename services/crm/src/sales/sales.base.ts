import { inTransaction, nativePool, run, type Statement } from '@svc/platform/db/native';
import { conflict, forbidden, invalid, isUuid, notFound } from '@svc/platform/errors';
import { salesKey } from '@svc/platform/events/catalog';
import { type ChangeRules, withChanges } from '@svc/platform/events/changes';
import { type NewEvent, salesEvent } from '@svc/platform/events/payloads';
import type { ServiceContext } from '@svc/platform/service';
import type { Pool, PoolClient } from 'pg';
import type { NamedItem } from '../catalog/catalog.entity.js';
import type { User } from '../companies/company.entity.js';
import type { PersonRequest } from '../contacts/contact.sql.js';
import { ContactSql } from '../contacts/contact.sql.js';
import { CHAT_FIELD_KEYS, ChatPrefetch, type ChatSource, detailChatFields, linkedChats } from './sales.chats.js';
import type { SalesKind, SalesRecord } from './sales.entity.js';
import type { CreateSalesBody, UpdateSalesBody } from './sales.schema.js';
import { type SalesDetailExtras, type SalesRelations, stageDurationsAt } from './sales.snapshot.js';
import type { SalesSql } from './sales.sql.js';
import { type CustomFieldChange, customFieldsWithAnswers, type RemovedCustomField, stageSummary } from './sales.summaries.js';

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

/** What a change knows of the chats of its record's persons (decision 0130). */
export interface ChangeChats {
  /** The chats asked for before the transaction (`chatsBefore`); without it, `change` asks for the record's persons. */
  prefetch?: Promise<ChatPrefetch>;
  /** The persons the change's work created: none of them can have a chat yet. */
  created: Set<string>;
}

/** An event of a change, typed by its key (the catalog's payload types). */
export type PendingEvent = NewEvent;

type Json = Record<string, unknown>;

/** A record's detail (`SalesRecords.detailParts`) less what depends on the time of the read. */
export interface DetailParts<R> {
  record: R;
  /** The snapshot and `pipeline_stages`. */
  head: Json;
  stagePeriods: SalesDetailExtras['stagePeriods'];
  /** The database's time of the statement that read it (microseconds). */
  nowUs: number;
  associations: Record<string, number>;
}

const CODE = /^[1-9]\d{0,9}$/;
/** A ref naming a record by its external id (decision 0180). */
const EXTERNAL = 'ext:';

/**
 * How a change's `changes` compares lead and deal snapshots (decision 0178): updated_at moves with every change,
 * proposals and chats are not the record's own (a change never changes them); answers per custom field id.
 */
export const SALES_CHANGE_RULES: ChangeRules = {
  ignore: ['updated_at', 'proposals', ...CHAT_FIELD_KEYS],
  byId: { custom_fields: 'field_id' },
};

/**
 * What every operation on leads and deals stands on (decisions 0040–0044, 0051): the kind's statements, its
 * snapshot, the visibility check and the detail, and `change`, the one way a record changes: its snapshots before
 * and after, `<kind>.updated` and the events derived from the two. SalesCreation, SalesUpdates and SalesRecords
 * build creation, PUT and the CRM's dedicated actions on it; Leads and Deals add what only their kind has.
 */
export abstract class SalesBase<
  R extends SalesRecord,
  Rel extends SalesRelations,
  S extends { updated_at: string },
  _CB extends CreateSalesBody = CreateSalesBody,
  UB extends UpdateSalesBody = UpdateSalesBody,
> {
  readonly kind: SalesKind;
  protected readonly contacts: ContactSql;
  protected readonly pool: Promise<Pool>;
  /** `Lead` or `Deal`, for not-found messages. */
  protected readonly label: string;
  /** Where the chats of the records' persons come from (the chat service), set once at start; null: never asked. */
  chatSource: ChatSource | null = null;

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
  /** What a PUT body changes beyond the fields leads and deals share (`record` is the copy being written). */
  protected async updateOwnFields(_client: PoolClient, _record: R, _body: UB, _before: Loaded<R, Rel>): Promise<void> {}

  snapshotOf(loaded: Loaded<R, Rel>): S {
    return this.snapshot(loaded.record, loaded.rel);
  }

  /**
   * The detail of a record read by `relationsSelect(alias, { detail: true })`, in the parts a cached lead detail keeps apart
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
        proposals: rel.proposals.length,
        deals: rel.deals.length,
      },
    };
  }

  /**
   * The chat fields of a detail (spec, Lead detail; `whatsapp_*` the alias of the summaries), asked of chat for
   * `persons` (none: no call). The caller asks only for a key with crm/chats.read.
   */
  protected async chatFieldsOfDetail(companyId: string, persons: { id: string; name: string | null }[]) {
    const ids = persons.map((p) => p.id);
    const chats = this.chatSource && ids.length ? await linkedChats(this.chatSource, await this.pool, companyId, ids) : [];
    return detailChatFields(chats, persons);
  }

  /** The detail of a record read by `relationsSelect(alias, { detail: true })`, at the time of its statement. */
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

  /**
   * `ref` with an `ext:<external_id>` form replaced by the record's UUID (decision 0180); null when no live record of
   * the company has that external id. Other refs are returned as they are.
   */
  async resolveRef(companyId: string, ref: string): Promise<string | null> {
    if (!ref.startsWith(EXTERNAL)) return ref;
    return this.externalIdOf(companyId, ref.slice(EXTERNAL.length));
  }

  /** The id of the live record of the company with this external id, or null. */
  async externalIdOf(companyId: string, externalId: string, db?: Pool | PoolClient): Promise<string | null> {
    if (!externalId) return null;
    const [row] = await run<{ id: string }>(db ?? (await this.pool), this.sql.idOfExternal, [companyId, externalId]);
    return row?.id ?? null;
  }

  /**
   * A write refused by the unique index of external ids becomes a 409 naming the record that holds the id (decision
   * 0180); any other error is returned as it is.
   */
  protected async externalIdTaken(err: unknown, companyId: string, externalId: string | null | undefined): Promise<unknown> {
    const pg = err as { code?: string; constraint?: string };
    if (!externalId || pg?.code !== '23505' || pg.constraint !== `${this.sql.table}_company_external_id_unique`) return err;
    const holder = await this.externalIdOf(companyId, externalId);
    return conflict(holder ? `external_id: already the external id of ${this.kind} ${holder}` : 'external_id: already in use');
  }

  protected async idOf(db: Pool | PoolClient, companyId: string, ref: string): Promise<string | null> {
    if (ref.startsWith(EXTERNAL)) return this.externalIdOf(companyId, ref.slice(EXTERNAL.length), db);
    const r = this.refOf(ref);
    if (!r) return null;
    const [row] = await run<{ id: string }>(db, this.sql.idOf, [companyId, r.byId ? r.value : null, r.byId ? null : r.value]);
    return row?.id ?? null;
  }

  /** A record the actor may see: its id (404 absent or another company's, 403 hidden by visibility, decision 0041). */
  async visibleId(actor: Actor, given: string): Promise<string> {
    const ref = await this.resolveRef(actor.companyId, given);
    if (!ref) throw notFound(this.label);
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
   * One change of a record in a transaction: its row is locked and its snapshot read (relationsSelect), `work`
   * writes, the snapshot is read again. When it differs (updated_at aside), updated_at moves and the events
   * are written in the same transaction: the ones `events` derives, and `<kind>.updated` with the new snapshot,
   * each with `changes`, the fields the two snapshots differ in (decision 0178).
   * The snapshot after carries the proposals (read in the transaction) and the chats of the persons (asked of chat
   * before it: `chats.prefetch`, else for the record's persons; decision 0130).
   */
  async change(
    companyId: string,
    recordId: string,
    work: (client: PoolClient, before: Loaded<R, Rel>) => Promise<void>,
    events: (before: Loaded<R, Rel>, after: Loaded<R, Rel>, snapshot: S) => PendingEvent[] = (b, a, s) => this.derivedEvents(b, a, s),
    chats: ChangeChats = { created: new Set() },
  ): Promise<Loaded<R, Rel>> {
    const pool = await this.pool;
    const prefetched = await (chats.prefetch ?? this.chatsBefore(companyId, recordId));
    return inTransaction(pool, async (client) => {
      const [row] = await run(client, this.sql.snapshotForUpdate, [companyId, recordId]);
      if (!row) throw notFound(this.label);
      const before = this.sql.fromRow(row);
      await work(client, before);
      const [afterRow] = await run(client, this.sql.snapshot, [companyId, recordId]);
      const after = this.sql.fromRow(afterRow!);
      after.rel.chats = await prefetched.of(
        client,
        after.rel.participants.map((p) => p.person.id),
        chats.created,
      );
      if (this.comparable(before) === this.comparable(after)) return after;
      const [touched] = await run<{ updated_at: string }>(client, this.sql.touch, [companyId, recordId]);
      after.record.updatedAt = new Date(touched!.updated_at);
      const snapshot = this.snapshot(after.record, after.rel);
      const pending: PendingEvent[] = withChanges(
        [...events(before, after, snapshot), { eventKey: salesKey(this.kind, 'updated'), payload: snapshot }],
        this.snapshot(before.record, before.rel),
        snapshot,
        SALES_CHANGE_RULES,
      );
      await this.ctx.outbox.write(
        client,
        pending.map((e) => ({ ...e, companyId })),
      );
      return after;
    });
  }

  /**
   * A snapshot as compared for "did anything change": updated_at aside, and without the proposals and chats (a change
   * of a record never changes them; the read before it does not hold them).
   */
  protected comparable({ record, rel }: Loaded<R, Rel>): string {
    const { updated_at: _u, ...rest } = this.snapshot(record, { ...rel, proposals: [], chats: [] });
    return JSON.stringify(rest);
  }

  /**
   * The chats of the persons a change or a creation may show, asked of chat before its transaction (decision 0130):
   * record `recordId`'s persons (one small read; null for a creation), the persons a request names (`named`, as sent)
   * and the one a deduplicating `person` would reuse (read without locks). No persons, no call; without a chat service,
   * nothing at all. Never rejects: what it could not ask, the transaction asks.
   */
  chatsBefore(companyId: string, recordId: string | null, named: string[] = [], person?: PersonRequest | null): Promise<ChatPrefetch> {
    const source = this.chatSource;
    if (!source) return Promise.resolve(ChatPrefetch.none);
    const { logger } = this.ctx;
    return (async () => {
      const pool = await this.pool;
      let ids: string[];
      try {
        const [own, candidate] = await Promise.all([
          recordId ? run<{ ids: string[] }>(pool, this.sql.personIds, [companyId, recordId]) : [],
          person ? this.contacts.candidate(pool, companyId, person) : null,
        ]);
        ids = [...(own[0]?.ids ?? []), ...named, ...(candidate ? [candidate] : [])];
      } catch (err) {
        logger.warn({ err }, 'persons of a record not read before its transaction');
        ids = [];
      }
      return ChatPrefetch.start(source, pool, companyId, ids, logger);
    })();
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
}
