import type { MikroORM } from '@mikro-orm/postgresql';
import { EntityColumns, type Statement, statement } from '@svc/platform/db/native';
import { LeadSource } from '../catalog/catalog.entity.js';
import { User } from '../companies/company.entity.js';
import { nextCodeSql, planOpenSql } from '../companies/plan.js';
import { MarketingAcquisition } from '../marketing/acquisition.entity.js';
import { Pipeline, Stage } from '../pipelines/pipeline.entity.js';
import { Lead, type MeasurementConsent } from './lead.entity.js';
import type { LeadRelations } from './lead.snapshot.js';

/** What the create statement's reads return: the stage and pipeline to use, and the users involved. */
export interface CreateReads {
  stage: Stage | null;
  pipeline: Pipeline | null;
  hasPrimary: boolean;
  users: User[];
  masterUserId: string | null;
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

  /** GET lead by id ($2) or code ($2): records the view ($3 view id, $4 viewer), returns the lead, its relations and its views. */
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

  constructor(orm: MikroORM) {
    this.lead = new EntityColumns(orm, Lead);
    this.stage = new EntityColumns(orm, Stage);
    this.pipeline = new EntityColumns(orm, Pipeline);
    this.user = new EntityColumns(orm, User);
    this.acquisition = new EntityColumns(orm, MarketingAcquisition);
    this.leadSource = new EntityColumns(orm, LeadSource);

    // The view goes to lead_view_queue (insert-only: concurrent GETs of one lead never wait for each other); the
    // count is the folded counter plus the queued views, plus this one (not visible to its own statement).
    const detail = (where: string) => `
      with l as (
        select * from leads where company_id = $1 and ${where}
      ), v as (
        insert into lead_view_queue (id, company_id, lead_id, user_id, viewed_at) select $3, l.company_id, l.id, $4, now() from l
      )
      select ${this.relationsSelect('l')},
        l.views_count + 1 + (select count(*) from lead_view_queue q where q.lead_id = l.id)::int as "_viewsCount"
      from l ${this.relationsJoin('l')}`;
    this.detailById = statement('crm_lead_detail_by_id', detail('id = $2'));
    this.detailByCode = statement('crm_lead_detail_by_code', detail('code = $2'));

    this.createReads = statement(
      'crm_lead_create_reads',
      `with st as (
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
         (select master_user_id from co) as "masterUserId"`,
    );

    this.create = statement(
      'crm_lead_create',
      `with seq as (${nextCodeSql('$1', 'lead')}), l as (
         insert into leads select (r).* from (
           select jsonb_populate_record(null::leads, $2::jsonb || jsonb_build_object('code', seq.value)) r from seq
         ) x returning id, code
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
  }

  /**
   * The select list of a lead (alias `alias`) with everything its snapshot shows: the stages of its pipeline,
   * the pipeline, its users, the latest active acquisition and the latest decision, and the lead sources.
   */
  relationsSelect(alias: string): string {
    const same = `company_id = ${alias}.company_id`;
    const activeOfLead = `a.${same} and a.lead_id = ${alias}.id and a.active`;
    return `${this.lead.select(alias)},
      (select json_agg(${this.stage.json('s')} order by s.position, s.id) from stages s
        where s.${same} and s.pipeline_id = ${alias}.pipeline_id) as "_stages",
      (select ${this.pipeline.json('p')} from pipelines p where p.${same} and p.id = ${alias}.pipeline_id) as "_pipeline",
      (select json_agg(${this.user.json('u')}) from users u
        where u.${same} and u.id in (${alias}.responsible_id, ${alias}.created_by_id)) as "_users",
      case when la.id is null then null else ${this.acquisition.json('la')} end as "_latest",
      (select a.measurement_consent from marketing_acquisitions a where ${activeOfLead} and a.measurement_consent is not null
        order by a.created_at desc, a.id desc limit 1) as "_latestDecision",
      (select json_agg(${this.leadSource.json('s')}) from lead_sources s
        where s.${same} and (s.id = ${alias}.lead_source_id or s.id = la.lead_source_id)) as "_leadSources"`;
  }

  relationsJoin(alias: string): string {
    return `left join lateral (
      select * from marketing_acquisitions a where a.company_id = ${alias}.company_id and a.lead_id = ${alias}.id and a.active
      order by a.created_at desc, a.id desc limit 1) la on true`;
  }

  /** A row of relationsSelect: the lead (its own columns) and its relations. */
  fromRow(row: Json): { lead: Lead; rel: LeadRelations } {
    const stages = ((row._stages as Json[] | null) ?? []).map((s) => this.stage.hydrate(s));
    const pipeline = row._pipeline ? this.pipeline.hydrate(row._pipeline as Json) : undefined;
    const users = ((row._users as Json[] | null) ?? []).map((u) => this.user.hydrate(u));
    const latest = row._latest ? this.acquisition.hydrate(row._latest as Json) : null;
    const sources = ((row._leadSources as Json[] | null) ?? []).map((s) => this.leadSource.hydrate(s));
    const lead = this.lead.hydrate(row);
    return {
      lead,
      rel: {
        stage: stages.find((s) => s.id === lead.stageId),
        pipeline,
        pipelineStages: stages,
        users: new Map(users.map((u) => [u.id, u])),
        marketing: {
          latest,
          latestDecision: (row._latestDecision as MeasurementConsent | null) ?? null,
          leadSources: new Map(sources.map((s) => [s.id, s])),
        },
      },
    };
  }

  createReadsFromRow(row: Json): CreateReads {
    return {
      stage: row.stage ? this.stage.hydrate(row.stage as Json) : null,
      pipeline: row.pipeline ? this.pipeline.hydrate(row.pipeline as Json) : null,
      hasPrimary: row.hasPrimary === true,
      users: ((row.users as Json[] | null) ?? []).map((u) => this.user.hydrate(u)),
      masterUserId: (row.masterUserId as string | null) ?? null,
    };
  }

  acquisitionRow(a: MarketingAcquisition): Json {
    return this.acquisition.row(a);
  }
}
