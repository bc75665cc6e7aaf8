import { Migration } from '@mikro-orm/migrations';

/**
 * Lead-specific tables the lead detail reads, and the column naming the lead (decision 0015): the deals too, which
 * the detail lists (`deals`, decision 0057: a deal's columns and, through the catalog, its stage and responsible).
 * Rows of a deal (acquisitions, custom field answers) name no lead and bump nothing.
 */
const LEAD_TABLES: [string, string][] = [
  ['lead_tags', 'lead_id'],
  ['lead_participants', 'lead_id'],
  ['lead_followers', 'lead_id'],
  ['lead_notes', 'lead_id'],
  ['lead_loss_reasons', 'lead_id'],
  ['lead_stage_periods', 'lead_id'],
  ['marketing_acquisitions', 'lead_id'],
  ['custom_field_values', 'record_id'],
  ['deals', 'lead_id'],
];
/** Contacts the detail shows through lead_participants, and the column naming the person. */
const PERSON_TABLES: [string, string][] = [
  ['persons', 'id'],
  ['person_contacts', 'person_id'],
];
/** The company's shared catalog the detail shows: a change bumps the company's detail_catalog_versions row. */
const CATALOG_TABLES = [
  'pipelines',
  'stages',
  'users',
  'tags',
  'custom_fields',
  'custom_field_options',
  'named_items',
  'lead_sources',
  'organizations',
];

/** Statement-level triggers, one per event (a trigger with transition tables may have only one event). */
const triggers = (table: string, fn: string, arg: string) =>
  [
    ['insert', 'referencing new table as new_rows'],
    ['update', 'referencing old table as old_rows new table as new_rows'],
    ['delete', 'referencing old table as old_rows'],
  ].map(
    ([event, referencing]) =>
      `create trigger "${table}_detail_${event}" after ${event} on "crm"."${table}" ${referencing} for each statement execute function "crm"."${fn}"('${arg}');`,
  );

export class Migration20261122104337__lead_detail_versions extends Migration {
  override name = 'Migration20261122104337__lead_detail_versions';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "crm"."detail_catalog_versions" ("company_id" uuid not null, "version" bigint not null, primary key ("company_id"));`,
    );
    this.addSql(`alter table "crm"."leads" add "detail_version" int not null default 0;`);

    // A lead's own columns: any change but views_count (the view folder's) bumps detail_version.
    this.addSql(`create function "crm"."lead_detail_changed"() returns trigger language plpgsql as $$
      declare o "crm"."leads"; n "crm"."leads";
      begin
        if new.detail_version is distinct from old.detail_version then return new; end if;
        o := old; n := new; o.views_count := 0; n.views_count := 0;
        if o is distinct from n then new.detail_version := old.detail_version + 1; end if;
        return new;
      end $$;`);
    this.addSql(
      `create trigger "leads_detail_version" before update on "crm"."leads" for each row execute function "crm"."lead_detail_changed"();`,
    );

    // Lead-specific rows: the leads they name (before and after the change).
    this.addSql(`create function "crm"."bump_lead_details"() returns trigger language plpgsql as $$
      begin
        if tg_op in ('INSERT', 'UPDATE') then
          execute format('update "crm"."leads" l set detail_version = l.detail_version + 1 where l.id in (select %I from new_rows)', tg_argv[0]);
        end if;
        if tg_op in ('DELETE', 'UPDATE') then
          execute format('update "crm"."leads" l set detail_version = l.detail_version + 1 where l.id in (select %I from old_rows)', tg_argv[0]);
        end if;
        return null;
      end $$;`);
    // Persons and their contacts: the leads they take part in.
    this.addSql(`create function "crm"."bump_person_lead_details"() returns trigger language plpgsql as $$
      declare
        sql text := 'update "crm"."leads" l set detail_version = l.detail_version + 1 where l.id in (
          select lp.lead_id from "crm"."lead_participants" lp join %s r on lp.company_id = r.company_id and lp.person_id = r.%I)';
      begin
        if tg_op in ('INSERT', 'UPDATE') then execute format(sql, 'new_rows', tg_argv[0]); end if;
        if tg_op in ('DELETE', 'UPDATE') then execute format(sql, 'old_rows', tg_argv[0]); end if;
        return null;
      end $$;`);
    // The shared catalog: the companies whose rows changed.
    this.addSql(`create function "crm"."bump_detail_catalog"() returns trigger language plpgsql as $$
      declare
        sql text := 'insert into "crm"."detail_catalog_versions" as v (company_id, version)
          select distinct company_id, 1 from %s on conflict (company_id) do update set version = v.version + 1';
      begin
        if tg_op in ('INSERT', 'UPDATE') then execute format(sql, 'new_rows'); end if;
        if tg_op = 'DELETE' then execute format(sql, 'old_rows'); end if;
        return null;
      end $$;`);
    for (const [table, column] of LEAD_TABLES) for (const sql of triggers(table, 'bump_lead_details', column)) this.addSql(sql);
    for (const [table, column] of PERSON_TABLES) for (const sql of triggers(table, 'bump_person_lead_details', column)) this.addSql(sql);
    for (const table of CATALOG_TABLES) for (const sql of triggers(table, 'bump_detail_catalog', '')) this.addSql(sql);
  }

  override down(): void | Promise<void> {
    for (const [table] of [...LEAD_TABLES, ...PERSON_TABLES]) {
      for (const event of ['insert', 'update', 'delete'])
        this.addSql(`drop trigger if exists "${table}_detail_${event}" on "crm"."${table}";`);
    }
    for (const table of CATALOG_TABLES) {
      for (const event of ['insert', 'update', 'delete'])
        this.addSql(`drop trigger if exists "${table}_detail_${event}" on "crm"."${table}";`);
    }
    this.addSql(`drop trigger if exists "leads_detail_version" on "crm"."leads";`);
    this.addSql(
      `drop function if exists "crm"."lead_detail_changed"(), "crm"."bump_lead_details"(), "crm"."bump_person_lead_details"(), "crm"."bump_detail_catalog"();`,
    );
    this.addSql(`drop table if exists "crm"."detail_catalog_versions" cascade;`);
    this.addSql(`alter table "crm"."leads" drop column "detail_version";`);
  }
}
