import type { EntityName } from '@mikro-orm/core';
import { EntityColumns } from '@svc/platform/db/native';
import type { Orm } from '@svc/platform/db/orm';
import { CustomField, CustomFieldOption, CustomFieldValue, LeadSource, NamedItem, Tag } from '../catalog/catalog.entity.js';
import { User } from '../companies/company.entity.js';
import { Organization, Person, PersonContact } from '../contacts/contact.entity.js';
import { MarketingAcquisition, type MeasurementConsent } from '../marketing/acquisition.entity.js';
import { Pipeline, Stage } from '../pipelines/pipeline.entity.js';
import type {
  SalesFollower,
  SalesKind,
  SalesNote,
  SalesParticipant,
  SalesRecord,
  SalesRelationEntities,
  SalesTag,
} from './sales.entity.js';
import { proposalDates, proposalSummariesOf } from './sales.proposals.js';
import type { SalesDetailExtras, SalesRelations } from './sales.snapshot.js';
import { salesRecordVisibleSql } from './sales.visibility.js';

export interface CreateReads {
  stage: Stage | null;
  pipeline: Pipeline | null;
  hasPrimary: boolean;
  users: User[];
  masterUserId: string | null;
  /** A creation without answers to them is a 400. */
  requiredFields: { id: string; name: string }[];
}

export interface RichReads {
  tags: Tag[];
  persons: { person: Person; contacts: PersonContact[] }[];
  organization: Organization | null;
  fields: { field: CustomField; options: CustomFieldOption[] }[];
  users: User[];
  roles: NamedItem[];
}

export type RelationTable = 'tags' | 'participants' | 'followers' | 'notes' | 'answers';

type Json = Record<string, unknown>;

/** Whole microseconds since the epoch: stage durations are computed at it. */
export const NOW_US = '(extract(epoch from now()) * 1000000)::int8';

/** `select` adds items after a leading comma; `read` turns them into the kind's relations. */
export interface OwnColumns<Rel extends SalesRelations> {
  select(alias: string, columns: SharedColumns): string;
  read(row: Json, shared: SalesRelations, columns: SharedColumns): Rel;
}

export type SharedColumns = Pick<
  SalesSelect<SalesRecord, SalesRelations>,
  'stage' | 'pipeline' | 'user' | 'reasonsSelect' | 'namedFromRows'
>;

/** Columns, select lists and row readers of one kind, from the entity definitions. */
export class SalesSelect<R extends SalesRecord, Rel extends SalesRelations> {
  readonly record: EntityColumns<R>;
  readonly stage: EntityColumns<Stage>;
  readonly pipeline: EntityColumns<Pipeline>;
  readonly user: EntityColumns<User>;
  readonly acquisition: EntityColumns<MarketingAcquisition>;
  readonly leadSource: EntityColumns<LeadSource>;
  readonly tag: EntityColumns<Tag>;
  readonly participant: EntityColumns<SalesParticipant>;
  readonly person: EntityColumns<Person>;
  readonly contact: EntityColumns<PersonContact>;
  readonly organization: EntityColumns<Organization>;
  readonly field: EntityColumns<CustomField>;
  readonly option: EntityColumns<CustomFieldOption>;
  readonly value: EntityColumns<CustomFieldValue>;
  readonly follower: EntityColumns<SalesFollower>;
  readonly named: EntityColumns<NamedItem>;
  readonly recordTag: EntityColumns<SalesTag>;
  readonly note: EntityColumns<SalesNote>;
  readonly table: string;
  /** The column naming the record in its relation tables and in marketing_acquisitions (`lead_id`, `deal_id`). */
  readonly fk: string;

  constructor(
    readonly orm: Orm,
    readonly kind: SalesKind,
    entity: EntityName<R>,
    relations: SalesRelationEntities,
    private readonly own: OwnColumns<Rel>,
  ) {
    this.table = `${kind}s`;
    this.fk = `${kind}_id`;
    this.record = new EntityColumns(orm, entity);
    this.stage = new EntityColumns(orm, Stage);
    this.pipeline = new EntityColumns(orm, Pipeline);
    this.user = new EntityColumns(orm, User);
    this.acquisition = new EntityColumns(orm, MarketingAcquisition);
    this.leadSource = new EntityColumns(orm, LeadSource);
    this.tag = new EntityColumns(orm, Tag);
    this.participant = new EntityColumns(orm, relations.Participant);
    this.person = new EntityColumns(orm, Person);
    this.contact = new EntityColumns(orm, PersonContact);
    this.organization = new EntityColumns(orm, Organization);
    this.field = new EntityColumns(orm, CustomField);
    this.option = new EntityColumns(orm, CustomFieldOption);
    this.value = new EntityColumns(orm, CustomFieldValue);
    this.follower = new EntityColumns(orm, relations.Follower);
    this.named = new EntityColumns(orm, NamedItem);
    this.recordTag = new EntityColumns(orm, relations.Tag);
    this.note = new EntityColumns(orm, relations.Note);
  }

  /** SQL truth value: user `userParam` may see record row `alias` of this kind (decision 0041). */
  visibleSql(alias: string, userParam: string): string {
    return salesRecordVisibleSql(this.kind, alias, userParam);
  }

  namedFromRows(rows: Json[]): NamedItem[] {
    return rows.map((r) => this.named.hydrate(r));
  }

  contactsOf(personAlias: string): string {
    return `coalesce((select json_agg(${this.contact.json('c')} order by c.type, c.primary desc, c.id) from person_contacts c
      where c.company_id = ${personAlias}.company_id and c.person_id = ${personAlias}.id), '[]')`;
  }

  /** Needs `relationsJoin(alias)` in the from clause; `proposals` is left out of the locked read a change compares with. */
  relationsSelect(alias: string, parts: { detail?: boolean; proposals?: boolean } = {}): string {
    const { detail = false, proposals = detail } = parts;
    const { kind, fk } = this;
    const same = `company_id = ${alias}.company_id`;
    const activeOfRecord = `a.${same} and a.${fk} = ${alias}.id and a.active`;
    // Open periods keep only their start: a cached lead detail computes their length at each read (decision 0015).
    const extras = detail
      ? `,
      (select json_agg(json_build_object('stage', ${this.stage.json('s')}, 'closedUs', x.closed, 'openFromUs', x.open) order by x.first, s.id) from (
        select sp.stage_id, min(sp.entered_at) as first,
          coalesce(sum((extract(epoch from sp.left_at - sp.entered_at) * 1000000)::int8) filter (where sp.left_at is not null), 0) as closed,
          coalesce(json_agg((extract(epoch from sp.entered_at) * 1000000)::int8) filter (where sp.left_at is null), '[]') as open
        from ${kind}_stage_periods sp where sp.${same} and sp.${fk} = ${alias}.id group by sp.stage_id) x
        join stages s on s.${same} and s.id = x.stage_id) as "_stagePeriods",
      (select count(*)::int from ${kind}_notes n where n.${same} and n.${fk} = ${alias}.id) as "_notesCount",
      (select fc.files_count from record_file_counts fc where fc.${same} and fc.record_id = ${alias}.id) as "_filesCount",
      (select count(*)::int from proposals p join proposal_items pi on pi.company_id = p.company_id and pi.proposal_id = p.id
        where p.${same} and p.${fk} = ${alias}.id and p.deleted_at is null) as "_itemsCount",
      ${NOW_US} as "_nowUs"`
      : '';
    const proposalList = proposals
      ? `,
      ${proposalSummariesOf(kind, alias)} as "_proposals"`
      : '';
    return `${this.record.select(alias)}, ${this.stagesAndUsersSelect(alias)},
      case when la.id is null then null else ${this.acquisition.json('la')} end as "_latest",
      (select a.measurement_consent from marketing_acquisitions a where ${activeOfRecord} and a.measurement_consent is not null
        order by a.created_at desc, a.id desc limit 1) as "_latestDecision",
      ${this.leadSourcesSelect(alias, [`${alias}.lead_source_id`, 'la.lead_source_id'])} as "_leadSources",
      (select json_agg(${this.tag.json('t')} order by rt.created_at, t.name collate "C", t.id) from ${kind}_tags rt
        join tags t on t.${same} and t.id = rt.tag_id where rt.${same} and rt.${fk} = ${alias}.id) as "_tags",
      (select json_agg(json_build_object('participant', ${this.participant.json('rp')}, 'person', ${this.person.json('pp')},
          'contacts', ${this.contactsOf('pp')}) order by rp.main desc, rp.created_at, rp.id)
        from ${kind}_participants rp join persons pp on pp.${same} and pp.id = rp.person_id
        where rp.${same} and rp.${fk} = ${alias}.id) as "_participants",
      (select ${this.organization.json('o')} from organizations o where o.${same} and o.id = ${alias}.organization_id) as "_organization",
      (select json_agg(json_build_object('field', ${this.field.json('cf')}, 'value', ${this.value.json('cv')},
          'option', case when co.id is null then null else ${this.option.json('co')} end))
        from custom_field_values cv join custom_fields cf on cf.${same} and cf.id = cv.field_id
        left join custom_field_options co on co.${same} and co.id = cv.option_id
        where cv.${same} and cv.record_id = ${alias}.id) as "_customFields",
      (select json_agg(json_build_object('follower', ${this.follower.json('rf')}, 'user', ${this.user.json('fu')},
          'role', case when fr.id is null then null else ${this.named.json('fr')} end) order by rf.created_at, rf.id)
        from ${kind}_followers rf join users fu on fu.${same} and fu.id = rf.user_id
        left join named_items fr on fr.${same} and fr.id = rf.role_id
        where rf.${same} and rf.${fk} = ${alias}.id) as "_followers",
      ${this.reasonsSelect(alias, 'loss')} as "_lossReasons"${this.own.select(alias, this)}${proposalList}${extras}`;
  }

  /** The JSON array of the reasons record `alias` was lost or won for (`<kind>_<outcome>_reasons`), in their order. */
  reasonsSelect(alias: string, outcome: 'loss' | 'gain'): string {
    const table = `${this.kind}_${outcome}_reasons`;
    return `(select json_agg(${this.named.json('rn')} order by rr.position) from ${table} rr
        join named_items rn on rn.company_id = rr.company_id and rn.id = rr.reason_id
        where rr.company_id = ${alias}.company_id and rr.${this.fk} = ${alias}.id)`;
  }

  relationsJoin(alias: string): string {
    return `left join lateral (
      select * from marketing_acquisitions a where a.company_id = ${alias}.company_id and a.${this.fk} = ${alias}.id and a.active
      order by a.created_at desc, a.id desc limit 1) la on true`;
  }

  private stagesAndUsersSelect(alias: string): string {
    const same = `company_id = ${alias}.company_id`;
    return `(select json_agg(${this.stage.json('s')} order by s.position, s.id) from stages s
        where s.${same} and s.pipeline_id = ${alias}.pipeline_id) as "_stages",
      (select ${this.pipeline.json('p')} from pipelines p where p.${same} and p.id = ${alias}.pipeline_id) as "_pipeline",
      (select json_agg(${this.user.json('u')}) from users u
        where u.${same} and u.id in (${alias}.responsible_id, ${alias}.created_by_id)) as "_users"`;
  }

  /** The JSON array of the lead sources of `alias` whose id is one of the SQL expressions `ids`. */
  private leadSourcesSelect(alias: string, ids: string[]): string {
    return `(select json_agg(${this.leadSource.json('s')}) from lead_sources s
        where s.company_id = ${alias}.company_id and s.id in (${ids.join(', ')}))`;
  }

  /** $2 null picks the primary pipeline's first stage. */
  createReadsText(): string {
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
           from custom_fields f where f.company_id = $1 and f.entity = '${this.kind}' and f.required) as "requiredFields"`;
  }

  fromRow(row: Json): { record: R; rel: Rel } {
    const list = (v: unknown) => (v as Json[] | null) ?? [];
    const latest = row._latest ? this.acquisition.hydrate(row._latest as Json) : null;
    const record = this.record.hydrate(row);
    const stages = list(row._stages).map((s) => this.stage.hydrate(s));
    const users = list(row._users).map((u) => this.user.hydrate(u));
    const sources = list(row._leadSources).map((s) => this.leadSource.hydrate(s));
    const rel: SalesRelations = {
      stage: stages.find((s) => s.id === record.stageId),
      pipeline: row._pipeline ? this.pipeline.hydrate(row._pipeline as Json) : undefined,
      pipelineStages: stages,
      users: new Map(users.map((u) => [u.id, u])),
      marketing: {
        latest,
        latestDecision: (row._latestDecision as MeasurementConsent | null) ?? null,
        leadSources: new Map(sources.map((s) => [s.id, s])),
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
      deals: [],
      proposals: list(row._proposals).map(proposalDates),
      chats: [],
    };
    return { record, rel: this.own.read(row, rel, this) };
  }

  detailExtrasFromRow(row: Json): SalesDetailExtras {
    return {
      stagePeriods: ((row._stagePeriods as Json[] | null) ?? []).map((x) => ({
        stage: this.stage.hydrate(x.stage as Json),
        closedUs: Number(x.closedUs),
        openFromUs: (x.openFromUs as number[]).map(Number),
      })),
      notesCount: Number(row._notesCount ?? 0),
      filesCount: Number(row._filesCount ?? 0),
      itemsCount: Number(row._itemsCount ?? 0),
      nowUs: Number(row._nowUs),
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
