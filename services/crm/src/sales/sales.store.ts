import type { EntityName } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import { nativePool, run, type Statement, statement } from '@svc/platform/db/native';
import { salesKey } from '@svc/platform/events/catalog';
import { outboxInsertSql } from '@svc/platform/events/writer';
import type { Pool, PoolClient } from 'pg';
import type { NamedItem } from '../catalog/catalog.entity.js';
import { crmPlan, nextCodeSql } from '../companies/plan.js';
import type { MarketingAcquisition } from '../marketing/acquisition.entity.js';
import type { SalesKind, SalesRecord, SalesRelationEntities } from './sales.entity.js';
import { KeyStore } from './sales.keys.store.js';
import { type CreateReads, type OwnColumns, type RelationTable, type RichReads, SalesSelect } from './sales.select.js';
import type { SalesRelations } from './sales.snapshot.js';

type Json = Record<string, unknown>;

export type Db = Pool | PoolClient;

/** A record to insert with its acquisitions and its `<kind>.created` event. */
export interface NewRecord<R> {
  record: R;
  acquisitions: MarketingAcquisition[];
  event: { id: string; payload: Json; traceparent: string | null };
}

/** A record as one statement read it (`relationsSelect`): its own columns and its relations. */
export interface Loaded<R, Rel> {
  record: R;
  rel: Rel;
}

export interface RecordRef {
  byId: boolean;
  value: string | number;
}

/** Named statements of one kind of sales record (decisions 0010, 0051, 0201); each method takes the pool or the caller's transaction first. */
export class SalesStore<R extends SalesRecord, Rel extends SalesRelations> {
  readonly select: SalesSelect<R, Rel>;
  /** The pool under the ORM: the services open their transactions on it. */
  readonly pool: Promise<Pool>;
  readonly kind: SalesKind;
  readonly table: string;
  /** The column naming the record in its relation tables (`lead_id`, `deal_id`). */
  readonly fk: string;
  /** The reads of a creation: $1 company, $2 stage id or null, $3 responsible, $4 creator. */
  readonly createReads: Statement;
  /**
   * One statement, so the sequence row stays locked only until its commit; the event is written only for a valid plan
   * (decision 0090). $1 company; $2 record rows, $3 their acquisitions, $4 event ids, $5 payloads, $6 traceparents.
   */
  readonly create: Statement;
  /** $1 company, $2 tag ids, $3 person ids, $4 organization id or null, $5 user ids, $6 follower role ids (uuid[]). */
  readonly richReads: Statement;
  /** The record ($2 id) of company $1 and its relations, its row locked for the caller's transaction. */
  readonly snapshotForUpdate: Statement;
  /** The record ($2 id) of company $1 and its relations with its proposals (after a change, in the same transaction). */
  readonly snapshot: Statement;
  /** The persons of record $2 of company $1 (`ids`, uuid[]): whose chats a change asks chat for before its transaction. */
  readonly personIds: Statement;
  /** The id of record $2 (uuid or null) or code $3 (integer or null) of company $1. */
  readonly idOf: Statement;
  /** $1 company, $2 uuid or null, $3 code or null: the record's id and whether user $4 may see it. */
  readonly access: Statement;
  /** The id of the live record of company $1 whose external id is $2 (decision 0180). */
  readonly idOfExternal: Statement;
  /** The idempotency keys of the kind's creation (decision 0042). */
  readonly keys: KeyStore;
  /** $1 company, $2 record, $3 the record row: its changeable columns (EntityColumns) are written. */
  readonly updateRecord: Statement;
  /** $1 company, $2 record: updated_at becomes now(); returns it. */
  readonly touch: Statement;
  /** $1 company, $2 record, $3 stage, $4 at: closes the open stage period and opens one in the new stage. */
  readonly enterStage: Statement;
  /** $1 an acquisition row: inserted, or replacing the row of the same id. */
  readonly upsertAcquisition: Statement;
  /** $1 company, $2 acquisition, $3 lead source. */
  readonly setAcquisitionSource: Statement;
  /** $1 company, $2 record, $3 field ids: their answers are deleted. */
  readonly clearAnswers: Statement;
  /** $1 company, $2 record, $3 person ids. */
  readonly removeParticipants: Statement;
  /** $1 company, $2 record, $3 tag ids. */
  readonly removeTags: Statement;
  /** $1 company, $2 record, $3 rows of `<kind>_loss_reasons`: replace the record's loss reasons. */
  readonly setLossReasons: Statement;
  /** $1 company, $2 kind (`loss_reason`, `gain_reason`, `follower_role`), $3 ids: the company's named items among them. */
  readonly namedItems: Statement;
  private readonly inserts = new Map<string, { plain: Statement; ignoring: Statement }>();

  constructor(orm: MikroORM, kind: SalesKind, entity: EntityName<R>, relations: SalesRelationEntities, own: OwnColumns<Rel>) {
    const select = new SalesSelect<R, Rel>(orm, kind, entity, relations, own);
    this.select = select;
    this.pool = nativePool(orm);
    this.kind = kind;
    const { table, fk } = select;
    this.table = table;
    this.fk = fk;

    this.createReads = statement(`crm_${kind}_create_reads`, this.select.createReadsText());
    // $2..$6 are arrays, one element per record: several creations of one company share the sequence row's lock and
    // one commit (decision 0225). The k-th record takes the k-th of the codes taken, so codes follow the arrays' order.
    const count = 'cardinality($4::uuid[])';
    const joined = `x join r on r.id = (x.rec->>'id')::uuid`;
    this.create = statement(
      `crm_${kind}_create`,
      `with x as (
         select * from unnest($2::jsonb[], $3::jsonb[], $4::uuid[], $5::jsonb[], $6::varchar[])
           with ordinality as x(rec, acquisitions, event_id, payload, traceparent, n)
       ), seq as (${nextCodeSql('$1', kind, count)}), r as (
         insert into ${table} select (y).* from (
           select jsonb_populate_record(null::${table}, x.rec || jsonb_build_object('code', seq.value - ${count} + x.n)) y from x, seq
         ) z returning id, code, company_id, stage_id, created_at
       ), sp as (
         insert into ${kind}_stage_periods (id, company_id, ${fk}, stage_id, entered_at)
         select gen_random_uuid(), r.company_id, r.id, r.stage_id, r.created_at from r
       ), a as (
         insert into marketing_acquisitions select (jsonb_populate_record(null::marketing_acquisitions, e)).*
         from ${joined}, jsonb_array_elements(x.acquisitions) e
       ), o as (${outboxInsertSql(crmPlan, {
         id: 'x.event_id',
         company: '$1',
         key: salesKey(kind, 'created'),
         payload: `jsonb_set(x.payload, '{${kind},code}', to_jsonb(r.code))`,
         from: joined,
         traceparent: 'x.traceparent',
       })})
       select r.id, r.code from r`,
    );
    this.richReads = statement(
      `crm_${kind}_rich_reads`,
      `select
        (select json_agg(${this.select.tag.json('t')}) from tags t where t.company_id = $1 and t.id = any($2::uuid[])) as tags,
        (select json_agg(json_build_object('person', ${this.select.person.json('p')}, 'contacts', ${this.select.contactsOf('p')}))
          from persons p where p.company_id = $1 and p.id = any($3::uuid[])) as persons,
        (select ${this.select.organization.json('o')} from organizations o where o.company_id = $1 and o.id = $4::uuid) as organization,
        (select json_agg(json_build_object('field', ${this.select.field.json('f')}, 'options',
            coalesce((select json_agg(${this.select.option.json('o')} order by o.position) from custom_field_options o
              where o.company_id = f.company_id and o.field_id = f.id), '[]')) order by f.created_at, f.id)
          from custom_fields f where f.company_id = $1 and f.entity = '${kind}') as fields,
        (select json_agg(${this.select.user.json('u')}) from users u where u.company_id = $1 and u.id = any($5::uuid[])) as users,
        (select json_agg(${this.select.named.json('n')}) from named_items n
          where n.company_id = $1 and n.kind = 'follower_role' and n.id = any($6::uuid[])) as roles`,
    );
    const one = `from ${table} r ${this.select.relationsJoin('r')} where r.company_id = $1 and r.id = $2`;
    this.snapshotForUpdate = statement(
      `crm_${kind}_snapshot_for_update`,
      `select ${this.select.relationsSelect('r')} ${one} for update of r`,
    );
    this.snapshot = statement(`crm_${kind}_snapshot`, `select ${this.select.relationsSelect('r', { proposals: true })} ${one}`);
    this.personIds = statement(
      `crm_${kind}_person_ids`,
      `select coalesce(array_agg(person_id), '{}') as ids from ${kind}_participants where company_id = $1 and ${fk} = $2`,
    );
    const byRef = 'r.company_id = $1 and (r.id = $2::uuid or ($2::uuid is null and r.code = $3::int))';
    this.idOf = statement(`crm_${kind}_id_of`, `select r.id from ${table} r where ${byRef}`);
    this.idOfExternal = statement(
      `crm_${kind}_id_of_external`,
      `select r.id from ${table} r where r.company_id = $1 and r.external_id = $2 and r.archived_at is null`,
    );
    this.access = statement(
      `crm_${kind}_access`,
      `select r.id, ${this.select.visibleSql('r', '$4')} as visible from ${table} r where ${byRef}`,
    );
    this.keys = new KeyStore(
      kind,
      `${kind}_idempotency_keys`,
      table,
      fk,
      `coalesce(r.measurement_consent, (select a.measurement_consent from marketing_acquisitions a where a.company_id = r.company_id
         and a.${fk} = r.id and a.active and a.measurement_consent is not null order by a.created_at desc, a.id desc limit 1), 'UNSPECIFIED')`,
    );
    const fixed = new Set(['id', 'company_id', 'code', 'created_at', 'updated_at', 'views_count', 'detail_version', 'created_by_id']);
    const changeable = Object.keys(this.select.record.row({} as R)).filter((c) => !fixed.has(c));
    this.updateRecord = statement(
      `crm_${kind}_update`,
      `update ${table} set (${changeable.join(', ')}) = (select ${changeable.map((c) => `x.${c}`).join(', ')}
         from jsonb_populate_record(null::${table}, $3::jsonb) x) where company_id = $1 and id = $2`,
    );
    this.touch = statement(
      `crm_${kind}_touch`,
      `update ${table} set updated_at = greatest(now(), updated_at + interval '1 millisecond') where company_id = $1 and id = $2 returning updated_at`,
    );
    this.enterStage = statement(
      `crm_${kind}_enter_stage`,
      `with closed as (update ${kind}_stage_periods set left_at = $4 where company_id = $1 and ${fk} = $2 and left_at is null)
       insert into ${kind}_stage_periods (id, company_id, ${fk}, stage_id, entered_at) values (gen_random_uuid(), $1, $2, $3, $4)`,
    );
    const acquisitionColumns = Object.keys(this.select.acquisition.row({} as MarketingAcquisition)).filter((c) => c !== 'id');
    this.upsertAcquisition = statement(
      'crm_acquisition_upsert',
      `insert into marketing_acquisitions select (jsonb_populate_record(null::marketing_acquisitions, $1::jsonb)).*
       on conflict (id) do update set (${acquisitionColumns.join(', ')}) = (${acquisitionColumns.map((c) => `excluded.${c}`).join(', ')})`,
    );
    this.setAcquisitionSource = statement(
      'crm_acquisition_source',
      'update marketing_acquisitions set lead_source_id = $3 where company_id = $1 and id = $2',
    );
    this.clearAnswers = statement(
      'crm_clear_answers',
      'delete from custom_field_values where company_id = $1 and record_id = $2 and field_id = any($3::uuid[])',
    );
    this.removeParticipants = statement(
      `crm_${kind}_remove_participants`,
      `delete from ${kind}_participants where company_id = $1 and ${fk} = $2 and person_id = any($3::uuid[])`,
    );
    this.removeTags = statement(
      `crm_${kind}_remove_tags`,
      `delete from ${kind}_tags where company_id = $1 and ${fk} = $2 and tag_id = any($3::uuid[])`,
    );
    this.setLossReasons = this.reasonsStatement('loss');
    this.namedItems = statement(
      'crm_named_items',
      `select json_agg(${this.select.named.json('n')}) as items from named_items n where n.company_id = $1 and n.kind = $2 and n.id = any($3::uuid[])`,
    );
  }

  /** $1 company, $2 record, $3 rows of `<kind>_<outcome>_reasons`: replace the record's loss or gain reasons. */
  reasonsStatement(outcome: 'loss' | 'gain'): Statement {
    const table = `${this.kind}_${outcome}_reasons`;
    return statement(
      `crm_${this.kind}_set_${outcome}_reasons`,
      `with d as (delete from ${table} where company_id = $1 and ${this.fk} = $2)
       insert into ${table} select (jsonb_populate_record(null::${table}, x)).* from jsonb_array_elements($3::jsonb) x`,
    );
  }

  async insert(client: PoolClient, relation: RelationTable, rows: object[], ignoreConflicts = false): Promise<void> {
    if (!rows.length) return;
    const table = relation === 'answers' ? 'custom_field_values' : `${this.kind}_${relation}`;
    let st = this.inserts.get(table);
    if (!st) {
      const text = `insert into ${table} select (jsonb_populate_record(null::${table}, x)).* from jsonb_array_elements($1::jsonb) x`;
      st = {
        plain: statement(`crm_insert_${table}`, text),
        ignoring: statement(`crm_insert_${table}_ignoring`, `${text} on conflict do nothing`),
      };
      this.inserts.set(table, st);
    }
    const columns: Record<RelationTable, { row(entity: never): Json }> = {
      tags: this.select.recordTag,
      participants: this.select.participant,
      followers: this.select.follower,
      notes: this.select.note,
      answers: this.select.value,
    };
    await run(client, ignoreConflicts ? st.ignoring : st.plain, [
      JSON.stringify(rows.map((r) => (columns[relation] as { row(entity: object): Json }).row(r))),
    ]);
  }

  async readCreation(db: Db, companyId: string, stageId: string | null, responsibleId: string, creatorId: string): Promise<CreateReads> {
    const [row] = await run(db, this.createReads, [companyId, stageId, responsibleId, creatorId]);
    return this.select.createReadsFromRow(row ?? {});
  }

  /** The codes of the records, in their order; all of one company, in one statement. */
  async insertRecords(db: Db, companyId: string, records: NewRecord<R>[]): Promise<number[]> {
    const created = await run<{ id: string; code: number }>(db, this.create, [
      companyId,
      records.map((c) => JSON.stringify(this.select.record.row(c.record))),
      records.map((c) => JSON.stringify(c.acquisitions.map((a) => this.select.acquisition.row(a)))),
      records.map((c) => c.event.id),
      records.map((c) => JSON.stringify(c.event.payload)),
      records.map((c) => c.event.traceparent),
    ]);
    const codes = new Map(created.map((c) => [c.id, Number(c.code)]));
    return records.map((c) => {
      const code = codes.get(c.record.id);
      if (code === undefined) throw new Error(`${this.kind} insert returned no row`);
      return code;
    });
  }

  async readReferences(
    db: Db,
    companyId: string,
    named: { tags?: string[]; persons?: string[]; organizationId?: string | null; users?: string[]; roles?: string[] },
  ): Promise<RichReads> {
    const [row] = await run(db, this.richReads, [
      companyId,
      named.tags ?? [],
      named.persons ?? [],
      named.organizationId ?? null,
      named.users ?? [],
      named.roles ?? [],
    ]);
    return this.select.richReadsFromRow(row ?? {});
  }

  /** The row stays locked until the transaction of `tx` ends. */
  async lockLoaded(tx: PoolClient, companyId: string, id: string): Promise<Loaded<R, Rel> | null> {
    const [row] = await run(tx, this.snapshotForUpdate, [companyId, id]);
    return row ? this.select.fromRow(row) : null;
  }

  async loaded(tx: PoolClient, companyId: string, id: string): Promise<Loaded<R, Rel>> {
    const [row] = await run(tx, this.snapshot, [companyId, id]);
    if (!row) throw new Error(`${this.kind} ${id} not found after its change`);
    return this.select.fromRow(row);
  }

  async personIdsOf(db: Db, companyId: string, id: string): Promise<string[]> {
    const [row] = await run<{ ids: string[] }>(db, this.personIds, [companyId, id]);
    return row?.ids ?? [];
  }

  async findId(db: Db, companyId: string, ref: RecordRef): Promise<string | null> {
    const [row] = await run<{ id: string }>(db, this.idOf, [companyId, ref.byId ? ref.value : null, ref.byId ? null : ref.value]);
    return row?.id ?? null;
  }

  /** Decision 0041. */
  async findVisible(db: Db, companyId: string, ref: RecordRef, userId: string): Promise<{ id: string; visible: boolean } | null> {
    const [row] = await run<{ id: string; visible: boolean }>(db, this.access, [
      companyId,
      ref.byId ? ref.value : null,
      ref.byId ? null : ref.value,
      userId,
    ]);
    return row ?? null;
  }

  async findExternal(db: Db, companyId: string, externalId: string): Promise<string | null> {
    const [row] = await run<{ id: string }>(db, this.idOfExternal, [companyId, externalId]);
    return row?.id ?? null;
  }

  async writeRecord(tx: PoolClient, record: R): Promise<void> {
    await run(tx, this.updateRecord, [record.companyId, record.id, JSON.stringify(this.select.record.row(record))]);
  }

  /** Always forward. */
  async touchRecord(tx: PoolClient, companyId: string, id: string): Promise<Date> {
    const [row] = await run<{ updated_at: string }>(tx, this.touch, [companyId, id]);
    return new Date(row!.updated_at);
  }

  async moveToStage(tx: PoolClient, companyId: string, id: string, stageId: string, at: Date): Promise<void> {
    await run(tx, this.enterStage, [companyId, id, stageId, at]);
  }

  async saveAcquisition(tx: PoolClient, acquisition: MarketingAcquisition): Promise<void> {
    await run(tx, this.upsertAcquisition, [JSON.stringify(this.select.acquisition.row(acquisition))]);
  }

  async relinkAcquisitionSource(tx: PoolClient, companyId: string, acquisitionId: string, leadSourceId: string | null): Promise<void> {
    await run(tx, this.setAcquisitionSource, [companyId, acquisitionId, leadSourceId]);
  }

  async deleteAnswers(tx: PoolClient, companyId: string, id: string, fieldIds: string[]): Promise<void> {
    await run(tx, this.clearAnswers, [companyId, id, fieldIds]);
  }

  async deleteParticipants(tx: PoolClient, companyId: string, id: string, personIds: string[]): Promise<void> {
    await run(tx, this.removeParticipants, [companyId, id, personIds]);
  }

  async deleteTags(tx: PoolClient, companyId: string, id: string, tagIds: string[]): Promise<void> {
    await run(tx, this.removeTags, [companyId, id, tagIds]);
  }

  async replaceReasons(tx: PoolClient, st: Statement, companyId: string, id: string, reasons: NamedItem[]): Promise<void> {
    const rows = reasons.map((r, i) => ({ [this.fk]: id, reason_id: r.id, company_id: companyId, position: i + 1 }));
    await run(tx, st, [companyId, id, JSON.stringify(rows)]);
  }

  /** In no order. */
  async findNamedItems(db: Db, companyId: string, kind: 'loss_reason' | 'gain_reason', ids: string[]): Promise<NamedItem[]> {
    const [row] = await run(db, this.namedItems, [companyId, kind, ids]);
    return this.select.namedFromRows((row?.items as Json[] | null) ?? []);
  }
}
