import type { MikroORM } from '@mikro-orm/postgresql';
import { EntityColumns, run, type Statement, statement } from '@svc/platform/db/native';
import type { PoolClient } from 'pg';
import { CustomField, CustomFieldOption, CustomFieldValue, LeadSource, NamedItem, Tag } from '../catalog/catalog.entity.js';
import { User } from '../companies/company.entity.js';
import { nextCodeSql, planOpenSql } from '../companies/plan.js';
import { Organization, Person, PersonContact } from '../contacts/contact.entity.js';
import { MarketingAcquisition } from '../marketing/acquisition.entity.js';
import { Pipeline, Stage } from '../pipelines/pipeline.entity.js';
import { type IdempotencySql, idempotencySql } from './idempotency.js';
import { Lead, LeadFollower, LeadNote, LeadParticipant, LeadTag, type MeasurementConsent } from './lead.entity.js';
import type { ListLeadsQuery } from './lead.schema.js';
import type { LeadDetailExtras, LeadRelations } from './lead.snapshot.js';
import { leadVisibleSql } from './lead.visibility.js';
import { SalesList, salesRecordFilters, searchFilter, VIEWER } from './sales-list.js';

/** What the create statement's reads return: the stage and pipeline to use, and the users involved. */
export interface CreateReads {
  stage: Stage | null;
  pipeline: Pipeline | null;
  hasPrimary: boolean;
  users: User[];
  masterUserId: string | null;
  /** The company's required lead custom fields (a creation without answers to them is a 400). */
  requiredFields: { id: string; name: string }[];
}

/** The references a richer creation or an update names, read in one statement (RichReads). */
export interface RichReads {
  tags: Tag[];
  persons: { person: Person; contacts: PersonContact[] }[];
  organization: Organization | null;
  fields: { field: CustomField; options: CustomFieldOption[] }[];
  users: User[];
  roles: NamedItem[];
}

type Json = Record<string, unknown>;

/**
 * The lead hot paths as a few named statements, bound and prepared once per connection (decision 0010). Column
 * lists come from the entity definitions (EntityColumns), so a new column needs no change here.
 */
export class LeadSql {
  readonly lead: EntityColumns<Lead>;
  private readonly stage: EntityColumns<Stage>;
  private readonly pipeline: EntityColumns<Pipeline>;
  private readonly user: EntityColumns<User>;
  private readonly acquisition: EntityColumns<MarketingAcquisition>;
  private readonly leadSource: EntityColumns<LeadSource>;
  private readonly tag: EntityColumns<Tag>;
  private readonly participant: EntityColumns<LeadParticipant>;
  private readonly person: EntityColumns<Person>;
  private readonly contact: EntityColumns<PersonContact>;
  private readonly organization: EntityColumns<Organization>;
  private readonly field: EntityColumns<CustomField>;
  private readonly option: EntityColumns<CustomFieldOption>;
  private readonly value: EntityColumns<CustomFieldValue>;
  private readonly follower: EntityColumns<LeadFollower>;
  private readonly named: EntityColumns<NamedItem>;
  private readonly leadTag: EntityColumns<LeadTag>;
  private readonly note: EntityColumns<LeadNote>;

  /**
   * GET lead by id ($2) or code ($2) when viewer $4 may see it (lead.visibility.ts): queues the view ($3 view id),
   * returns the lead, its relations and its views (`_viewsCount`, decision 0012). No row: absent or hidden
   * (leadAccess tells which, off the hot path).
   */
  readonly detailById: Statement;
  readonly detailByCode: Statement;
  /** The reads of a creation: $1 company, $2 stage id or null, $3 responsible, $4 creator. */
  readonly createReads: Statement;
  /**
   * A creation in one statement, so the company's sequence row is locked for that statement and its commit only:
   * $1 company, $2 the lead row (code filled in from the sequence), $3 acquisition rows, $4 outbox event id,
   * $5 the event payload (its lead.code filled in), $6 the outbox channel. The event is written only when the
   * company's plan is valid.
   */
  readonly create: Statement;
  /**
   * Folds up to $1 queued views (the oldest; rows another replica is folding are skipped): moves them to lead_views
   * and adds them to their leads' views_count, in one statement, so any reader sees each view exactly once.
   */
  readonly foldViews: Statement;
  /** $1 company, $2 tag ids, $3 person ids, $4 organization id or null, $5 user ids, $6 follower role ids (uuid[]). */
  readonly richReads: Statement;
  /** The lead ($2 id) of company $1 and its relations, its row locked for the caller's transaction. */
  readonly snapshotForUpdate: Statement;
  /** The lead ($2 id) of company $1 and its relations (after a change, in the same transaction). */
  readonly snapshot: Statement;
  /** The id of lead $2 (uuid or null) or code $3 (integer or null) of company $1. */
  readonly idOf: Statement;
  /**
   * Events of one change: $1 company, $2 `[{id, key, payload}]`, $3 the outbox channel; written only when the
   * company's plan is valid.
   */
  readonly events: Statement;
  /** GET /leads (sales-list.ts): stage, pipeline, responsible, status, ranges, tag, effective origin, only_new, search. */
  readonly list: SalesList<ListLeadsQuery>;
  /** The idempotency keys of POST /leads (decision 0042). */
  readonly keys: IdempotencySql;
  /** $1 company, $2 lead, $3 the lead row: its changeable columns (EntityColumns) are written. */
  readonly updateLead: Statement;
  /** $1 company, $2 lead: updated_at becomes now(); returns it. */
  readonly touch: Statement;
  /** $1 company, $2 lead, $3 stage, $4 at: closes the open stage period and opens one in the new stage. */
  readonly enterStage: Statement;
  /** $1 an acquisition row: inserted, or replacing the row of the same id. */
  readonly upsertAcquisition: Statement;
  /** $1 company, $2 acquisition, $3 lead source. */
  readonly setAcquisitionSource: Statement;
  /** $1 company, $2 lead, $3 field ids: their answers are deleted. */
  readonly clearAnswers: Statement;
  /** $1 company, $2 lead, $3 person ids. */
  readonly removeParticipants: Statement;
  /** $1 company, $2 lead, $3 tag ids. */
  readonly removeTags: Statement;
  /** $1 company, $2 lead, $3 rows of lead_loss_reasons: replace the lead's loss reasons. */
  readonly setLossReasons: Statement;
  /** $1 company, $2 ids: the company's loss reasons among them. */
  readonly lossReasons: Statement;
  private readonly inserts = new Map<string, { plain: Statement; ignoring: Statement }>();

  constructor(orm: MikroORM) {
    this.lead = new EntityColumns(orm, Lead);
    this.stage = new EntityColumns(orm, Stage);
    this.pipeline = new EntityColumns(orm, Pipeline);
    this.user = new EntityColumns(orm, User);
    this.acquisition = new EntityColumns(orm, MarketingAcquisition);
    this.leadSource = new EntityColumns(orm, LeadSource);
    this.tag = new EntityColumns(orm, Tag);
    this.participant = new EntityColumns(orm, LeadParticipant);
    this.person = new EntityColumns(orm, Person);
    this.contact = new EntityColumns(orm, PersonContact);
    this.organization = new EntityColumns(orm, Organization);
    this.field = new EntityColumns(orm, CustomField);
    this.option = new EntityColumns(orm, CustomFieldOption);
    this.value = new EntityColumns(orm, CustomFieldValue);
    this.follower = new EntityColumns(orm, LeadFollower);
    this.named = new EntityColumns(orm, NamedItem);
    this.leadTag = new EntityColumns(orm, LeadTag);
    this.note = new EntityColumns(orm, LeadNote);

    // The view goes to lead_view_queue (insert-only: concurrent GETs of one lead never wait for each other); the
    // count is the folded counter plus the queued views, plus this one (not visible to its own statement).
    const detail = (where: string) => `
      with l as (
        select * from leads where company_id = $1 and ${where} and ${leadVisibleSql('leads', '$4')}
      ), v as (
        insert into lead_view_queue (id, company_id, lead_id, user_id, viewed_at) select $3, l.company_id, l.id, $4, now() from l
      )
      select ${this.relationsSelect('l', true)},
        l.views_count + 1 + (select count(*) from lead_view_queue q where q.lead_id = l.id)::int as "_viewsCount"
      from l ${this.relationsJoin('l')}`;
    this.detailById = statement('crm_lead_detail_by_id', detail('id = $2'));
    this.detailByCode = statement('crm_lead_detail_by_code', detail('code = $2'));
    this.foldViews = statement(
      'crm_lead_fold_views',
      `with d as (
         delete from lead_view_queue where id in (select id from lead_view_queue order by id limit $1 for update skip locked)
         returning *
       ), h as (
         insert into lead_views (id, company_id, lead_id, user_id, viewed_at) select id, company_id, lead_id, user_id, viewed_at from d
       ), c as (
         select lead_id, count(*)::int n from d group by lead_id
       ), u as (
         update leads l set views_count = l.views_count + c.n from c where l.id = c.lead_id returning l.id
       )
       select (select count(*) from d)::int as folded`,
    );

    this.createReads = statement('crm_lead_create_reads', this.createReadsText('lead'));

    this.create = statement(
      'crm_lead_create',
      `with seq as (${nextCodeSql('$1', 'lead')}), l as (
         insert into leads select (r).* from (
           select jsonb_populate_record(null::leads, $2::jsonb || jsonb_build_object('code', seq.value)) r from seq
         ) x returning id, code, company_id, stage_id, created_at
       ), sp as (
         insert into lead_stage_periods (id, company_id, lead_id, stage_id, entered_at)
         select gen_random_uuid(), l.company_id, l.id, l.stage_id, l.created_at from l
       ), a as (
         insert into marketing_acquisitions select (jsonb_populate_record(null::marketing_acquisitions, x)).*
         from jsonb_array_elements($3::jsonb) x, l
       ), o as (
         insert into outbox (id, company_id, event_key, payload, occurred_at)
         select $4, $1, 'lead.created', jsonb_set($5::jsonb, '{lead,code}', to_jsonb(l.code)), now() from l
         where ${planOpenSql('$1', 'now()')}
       )
       select l.id, l.code, pg_notify($6, '') from l`,
    );

    this.richReads = statement(
      'crm_lead_rich_reads',
      `select
        (select json_agg(${this.tag.json('t')}) from tags t where t.company_id = $1 and t.id = any($2::uuid[])) as tags,
        (select json_agg(json_build_object('person', ${this.person.json('p')}, 'contacts', ${this.contactsOf('p')}))
          from persons p where p.company_id = $1 and p.id = any($3::uuid[])) as persons,
        (select ${this.organization.json('o')} from organizations o where o.company_id = $1 and o.id = $4::uuid) as organization,
        (select json_agg(json_build_object('field', ${this.field.json('f')}, 'options',
            coalesce((select json_agg(${this.option.json('o')} order by o.position) from custom_field_options o
              where o.company_id = f.company_id and o.field_id = f.id), '[]')) order by f.created_at, f.id)
          from custom_fields f where f.company_id = $1 and f.entity = 'lead') as fields,
        (select json_agg(${this.user.json('u')}) from users u where u.company_id = $1 and u.id = any($5::uuid[])) as users,
        (select json_agg(${this.named.json('n')}) from named_items n
          where n.company_id = $1 and n.kind = 'follower_role' and n.id = any($6::uuid[])) as roles`,
    );

    const one = `from leads l ${this.relationsJoin('l')} where l.company_id = $1 and l.id = $2`;
    this.snapshotForUpdate = statement('crm_lead_snapshot_for_update', `select ${this.relationsSelect('l')} ${one} for update of l`);
    this.snapshot = statement('crm_lead_snapshot', `select ${this.relationsSelect('l')} ${one}`);
    this.idOf = statement(
      'crm_lead_id_of',
      'select id from leads where company_id = $1 and (id = $2::uuid or ($2::uuid is null and code = $3::int))',
    );
    this.events = statement(
      'crm_lead_events',
      `with o as (
         insert into outbox (id, company_id, event_key, payload, occurred_at)
         select e.id, $1, e.key, e.payload, now() from jsonb_to_recordset($2::jsonb) as e(id uuid, key text, payload jsonb)
         where ${planOpenSql('$1', 'now()')}
         returning 1
       )
       select count(*)::int as written, pg_notify($3, '') from o`,
    );

    this.list = new SalesList<ListLeadsQuery>(
      'crm_lead_list',
      {
        table: 'leads',
        alias: 'l',
        select: this.relationsSelect('l'),
        join: this.relationsJoin('l'),
        visible: leadVisibleSql('l', VIEWER),
      },
      [
        ...salesRecordFilters('l'),
        {
          type: 'uuid',
          value: (q) => q.tag_id,
          where: (p) => `exists (select 1 from lead_tags ft where ft.lead_id = l.id and ft.tag_id = ${p})`,
        },
        {
          type: 'uuid',
          value: (q) => q.lead_source_id,
          where: (p) => `coalesce((select fa.lead_source_id from marketing_acquisitions fa
            where fa.company_id = l.company_id and fa.lead_id = l.id and fa.active order by fa.created_at desc, fa.id desc limit 1),
            l.lead_source_id) = ${p}`,
        },
        {
          type: 'boolean',
          value: (q) => q.only_new || null,
          where: () => `not (exists (select 1 from lead_views fv where fv.lead_id = l.id and fv.user_id = ${VIEWER})
            or exists (select 1 from lead_view_queue fq where fq.lead_id = l.id and fq.user_id = ${VIEWER}))`,
        },
        searchFilter('l', { table: 'lead_participants', column: 'lead_id' }),
      ],
    );

    this.keys = idempotencySql(
      'lead',
      'lead_idempotency_keys',
      'leads',
      'lead_id',
      `coalesce(r.measurement_consent, (select a.measurement_consent from marketing_acquisitions a where a.company_id = r.company_id
         and a.lead_id = r.id and a.active and a.measurement_consent is not null order by a.created_at desc, a.id desc limit 1), 'UNSPECIFIED')`,
    );
    const fixed = new Set(['id', 'company_id', 'code', 'created_at', 'updated_at', 'views_count', 'created_by_id']);
    const changeable = Object.keys(this.lead.row({} as Lead)).filter((c) => !fixed.has(c));
    this.updateLead = statement(
      'crm_lead_update',
      `update leads set (${changeable.join(', ')}) = (select ${changeable.map((c) => `r.${c}`).join(', ')}
         from jsonb_populate_record(null::leads, $3::jsonb) r) where company_id = $1 and id = $2`,
    );
    this.touch = statement(
      'crm_lead_touch',
      `update leads set updated_at = greatest(now(), updated_at + interval '1 millisecond') where company_id = $1 and id = $2 returning updated_at`,
    );
    this.enterStage = statement(
      'crm_lead_enter_stage',
      `with closed as (update lead_stage_periods set left_at = $4 where company_id = $1 and lead_id = $2 and left_at is null)
       insert into lead_stage_periods (id, company_id, lead_id, stage_id, entered_at) values (gen_random_uuid(), $1, $2, $3, $4)`,
    );
    const acquisitionColumns = Object.keys(this.acquisition.row({} as MarketingAcquisition)).filter((c) => c !== 'id');
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
      'crm_lead_clear_answers',
      'delete from custom_field_values where company_id = $1 and record_id = $2 and field_id = any($3::uuid[])',
    );
    this.removeParticipants = statement(
      'crm_lead_remove_participants',
      'delete from lead_participants where company_id = $1 and lead_id = $2 and person_id = any($3::uuid[])',
    );
    this.removeTags = statement(
      'crm_lead_remove_tags',
      'delete from lead_tags where company_id = $1 and lead_id = $2 and tag_id = any($3::uuid[])',
    );
    this.setLossReasons = statement(
      'crm_lead_set_loss_reasons',
      `with d as (delete from lead_loss_reasons where company_id = $1 and lead_id = $2)
       insert into lead_loss_reasons select (jsonb_populate_record(null::lead_loss_reasons, x)).* from jsonb_array_elements($3::jsonb) x`,
    );
    this.lossReasons = statement(
      'crm_loss_reasons',
      `select json_agg(${this.named.json('n')}) as reasons from named_items n where n.company_id = $1 and n.kind = 'loss_reason' and n.id = any($2::uuid[])`,
    );
  }

  /** Inserts entity rows (keyed by property names) into `table`; `ignoreConflicts` skips rows already there. */
  async insert(client: PoolClient, table: string, rows: object[], ignoreConflicts = false): Promise<void> {
    if (!rows.length) return;
    let st = this.inserts.get(table);
    if (!st) {
      const text = `insert into ${table} select (jsonb_populate_record(null::${table}, x)).* from jsonb_array_elements($1::jsonb) x`;
      st = {
        plain: statement(`crm_insert_${table}`, text),
        ignoring: statement(`crm_insert_${table}_ignoring`, `${text} on conflict do nothing`),
      };
      this.inserts.set(table, st);
    }
    const columns = this.columnsOf(table);
    await run(client, ignoreConflicts ? st.ignoring : st.plain, [JSON.stringify(rows.map((r) => columns.row(r)))]);
  }

  namedFromRows(rows: Json[]): NamedItem[] {
    return rows.map((r) => this.named.hydrate(r));
  }

  private columnsOf(table: string): { row(entity: object): Json } {
    const byTable: Record<string, { row(entity: never): Json }> = {
      lead_tags: this.leadTag,
      lead_participants: this.participant,
      lead_followers: this.follower,
      lead_notes: this.note,
      custom_field_values: this.value,
    };
    const columns = byTable[table];
    if (!columns) throw new Error(`no columns for ${table}`);
    return columns as { row(entity: object): Json };
  }

  private contactsOf(personAlias: string): string {
    return `coalesce((select json_agg(${this.contact.json('c')} order by c.type, c.primary desc, c.id) from person_contacts c
      where c.company_id = ${personAlias}.company_id and c.person_id = ${personAlias}.id), '[]')`;
  }

  /**
   * The select list of a lead (alias `alias`) with everything its snapshot shows: the stages of its pipeline,
   * the pipeline, its users, the latest active acquisition and the latest decision, and the lead sources.
   */
  relationsSelect(alias: string, detail = false): string {
    const same = `company_id = ${alias}.company_id`;
    const activeOfLead = `a.${same} and a.lead_id = ${alias}.id and a.active`;
    const extras = detail
      ? `,
      (select json_agg(json_build_object('stage', ${this.stage.json('s')}, 'seconds', x.seconds) order by x.first, s.id) from (
        select sp.stage_id, min(sp.entered_at) as first, sum(extract(epoch from coalesce(sp.left_at, now()) - sp.entered_at))::float8 as seconds
        from lead_stage_periods sp where sp.${same} and sp.lead_id = ${alias}.id group by sp.stage_id) x
        join stages s on s.${same} and s.id = x.stage_id) as "_stagePeriods",
      (select count(*)::int from lead_notes n where n.${same} and n.lead_id = ${alias}.id) as "_notesCount"`
      : '';
    return `${this.lead.select(alias)}, ${this.stagesAndUsersSelect(alias)},
      case when la.id is null then null else ${this.acquisition.json('la')} end as "_latest",
      (select a.measurement_consent from marketing_acquisitions a where ${activeOfLead} and a.measurement_consent is not null
        order by a.created_at desc, a.id desc limit 1) as "_latestDecision",
      ${this.leadSourcesSelect(alias, [`${alias}.lead_source_id`, 'la.lead_source_id'])} as "_leadSources",
      (select json_agg(${this.tag.json('t')} order by lt.created_at, t.name collate "C", t.id) from lead_tags lt
        join tags t on t.${same} and t.id = lt.tag_id where lt.${same} and lt.lead_id = ${alias}.id) as "_tags",
      (select json_agg(json_build_object('participant', ${this.participant.json('lp')}, 'person', ${this.person.json('pp')},
          'contacts', ${this.contactsOf('pp')}) order by lp.main desc, lp.created_at, lp.id)
        from lead_participants lp join persons pp on pp.${same} and pp.id = lp.person_id
        where lp.${same} and lp.lead_id = ${alias}.id) as "_participants",
      (select ${this.organization.json('o')} from organizations o where o.${same} and o.id = ${alias}.organization_id) as "_organization",
      (select json_agg(json_build_object('field', ${this.field.json('cf')}, 'value', ${this.value.json('cv')},
          'option', case when co.id is null then null else ${this.option.json('co')} end))
        from custom_field_values cv join custom_fields cf on cf.${same} and cf.id = cv.field_id
        left join custom_field_options co on co.${same} and co.id = cv.option_id
        where cv.${same} and cv.record_id = ${alias}.id) as "_customFields",
      (select json_agg(json_build_object('follower', ${this.follower.json('lf')}, 'user', ${this.user.json('fu')},
          'role', case when fr.id is null then null else ${this.named.json('fr')} end) order by lf.created_at, lf.id)
        from lead_followers lf join users fu on fu.${same} and fu.id = lf.user_id
        left join named_items fr on fr.${same} and fr.id = lf.role_id
        where lf.${same} and lf.lead_id = ${alias}.id) as "_followers",
      (select json_agg(${this.named.json('lr')} order by llr.position) from lead_loss_reasons llr
        join named_items lr on lr.${same} and lr.id = llr.reason_id where llr.${same} and llr.lead_id = ${alias}.id) as "_lossReasons"${extras}`;
  }

  /** The reads of a creation of a lead or a deal (`createReads`, `createReadsFromRow`). */
  createReadsText(entity: 'lead' | 'deal'): string {
    return `with st as (
         select s.* from stages s where s.company_id = $1 and s.id = $2::uuid
         union all
         (select s.* from pipelines p join stages s on s.company_id = p.company_id and s.pipeline_id = p.id
          where $2::uuid is null and p.company_id = $1 and p.is_primary order by s.position, s.id limit 1)
       ), co as (select master_user_id from companies where id = $1)
       select
         (select ${this.stage.json('st')} from st) as stage,
         (select ${this.pipeline.json('p')} from pipelines p where p.company_id = $1 and p.id = (select pipeline_id from st)) as pipeline,
         exists (select 1 from pipelines p where p.company_id = $1 and p.is_primary) as "hasPrimary",
         (select json_agg(${this.user.json('u')}) from users u
           where u.company_id = $1 and u.id in ($3::uuid, $4::uuid, (select master_user_id from co))) as users,
         (select master_user_id from co) as "masterUserId",
         (select coalesce(json_agg(json_build_object('id', f.id, 'name', f.name) order by f.created_at, f.id), '[]')
           from custom_fields f where f.company_id = $1 and f.entity = '${entity}' and f.required) as "requiredFields"`;
  }

  /**
   * What a lead and a deal (alias `alias`) both show of their pipeline and users: `_stages` (every stage of its
   * pipeline), `_pipeline`, `_users` (responsible and creator). `stagesAndUsersFromRow` reads them.
   */
  stagesAndUsersSelect(alias: string): string {
    const same = `company_id = ${alias}.company_id`;
    return `(select json_agg(${this.stage.json('s')} order by s.position, s.id) from stages s
        where s.${same} and s.pipeline_id = ${alias}.pipeline_id) as "_stages",
      (select ${this.pipeline.json('p')} from pipelines p where p.${same} and p.id = ${alias}.pipeline_id) as "_pipeline",
      (select json_agg(${this.user.json('u')}) from users u
        where u.${same} and u.id in (${alias}.responsible_id, ${alias}.created_by_id)) as "_users"`;
  }

  /** The part of a row that `stagesAndUsersSelect` selected, for a record in stage `stageId`. */
  stagesAndUsersFromRow(row: Json, stageId: string): Pick<LeadRelations, 'stage' | 'pipeline' | 'pipelineStages' | 'users'> {
    const stages = ((row._stages as Json[] | null) ?? []).map((s) => this.stage.hydrate(s));
    const users = ((row._users as Json[] | null) ?? []).map((u) => this.user.hydrate(u));
    return {
      stage: stages.find((s) => s.id === stageId),
      pipeline: row._pipeline ? this.pipeline.hydrate(row._pipeline as Json) : undefined,
      pipelineStages: stages,
      users: new Map(users.map((u) => [u.id, u])),
    };
  }

  /** The lead sources among `ids` (rows of `leadSourcesSelect`). */
  leadSourcesFromRow(value: unknown): Map<string, LeadSource> {
    const sources = ((value as Json[] | null) ?? []).map((s) => this.leadSource.hydrate(s));
    return new Map(sources.map((s) => [s.id, s]));
  }

  /** The JSON array of the lead sources of `alias` whose id is one of the SQL expressions `ids`. */
  leadSourcesSelect(alias: string, ids: string[]): string {
    return `(select json_agg(${this.leadSource.json('s')}) from lead_sources s
        where s.company_id = ${alias}.company_id and s.id in (${ids.join(', ')}))`;
  }

  relationsJoin(alias: string): string {
    return `left join lateral (
      select * from marketing_acquisitions a where a.company_id = ${alias}.company_id and a.lead_id = ${alias}.id and a.active
      order by a.created_at desc, a.id desc limit 1) la on true`;
  }

  /** A row of relationsSelect: the lead (its own columns) and its relations. */
  fromRow(row: Json): { lead: Lead; rel: LeadRelations } {
    const list = (v: unknown) => (v as Json[] | null) ?? [];
    const latest = row._latest ? this.acquisition.hydrate(row._latest as Json) : null;
    const lead = this.lead.hydrate(row);
    return {
      lead,
      rel: {
        ...this.stagesAndUsersFromRow(row, lead.stageId),
        marketing: {
          latest,
          latestDecision: (row._latestDecision as MeasurementConsent | null) ?? null,
          leadSources: this.leadSourcesFromRow(row._leadSources),
        },
        tags: list(row._tags).map((t) => this.tag.hydrate(t)),
        participants: list(row._participants).map((x) => ({
          participant: this.participant.hydrate(x.participant as Json),
          person: this.person.hydrate(x.person as Json),
          contacts: list(x.contacts).map((c) => this.contact.hydrate(c)),
        })),
        organization: row._organization ? this.organization.hydrate(row._organization as Json) : null,
        customFields: list(row._customFields).map((x) => ({
          field: this.field.hydrate(x.field as Json),
          value: this.value.hydrate(x.value as Json),
          option: x.option ? this.option.hydrate(x.option as Json) : null,
        })),
        followers: list(row._followers).map((x) => ({
          follower: this.follower.hydrate(x.follower as Json),
          user: this.user.hydrate(x.user as Json),
          role: x.role ? this.named.hydrate(x.role as Json) : null,
        })),
        lossReasons: list(row._lossReasons).map((n) => this.named.hydrate(n)),
      },
    };
  }

  /** The detail-only part of a `relationsSelect(alias, true)` row. */
  detailExtrasFromRow(row: Json): LeadDetailExtras {
    return {
      stagePeriods: ((row._stagePeriods as Json[] | null) ?? []).map((x) => ({
        stage: this.stage.hydrate(x.stage as Json),
        seconds: Number(x.seconds),
      })),
      notesCount: Number(row._notesCount ?? 0),
    };
  }

  richReadsFromRow(row: Json): RichReads {
    const list = (v: unknown) => (v as Json[] | null) ?? [];
    return {
      tags: list(row.tags).map((t) => this.tag.hydrate(t)),
      persons: list(row.persons).map((x) => ({
        person: this.person.hydrate(x.person as Json),
        contacts: list(x.contacts).map((c) => this.contact.hydrate(c)),
      })),
      organization: row.organization ? this.organization.hydrate(row.organization as Json) : null,
      fields: list(row.fields).map((x) => ({
        field: this.field.hydrate(x.field as Json),
        options: list(x.options).map((o) => this.option.hydrate(o)),
      })),
      users: list(row.users).map((u) => this.user.hydrate(u)),
      roles: list(row.roles).map((n) => this.named.hydrate(n)),
    };
  }

  createReadsFromRow(row: Json): CreateReads {
    return {
      stage: row.stage ? this.stage.hydrate(row.stage as Json) : null,
      pipeline: row.pipeline ? this.pipeline.hydrate(row.pipeline as Json) : null,
      hasPrimary: row.hasPrimary === true,
      users: ((row.users as Json[] | null) ?? []).map((u) => this.user.hydrate(u)),
      masterUserId: (row.masterUserId as string | null) ?? null,
      requiredFields: (row.requiredFields as { id: string; name: string }[] | null) ?? [],
    };
  }

  acquisitionRow(a: MarketingAcquisition): Json {
    return this.acquisition.row(a);
  }
}
