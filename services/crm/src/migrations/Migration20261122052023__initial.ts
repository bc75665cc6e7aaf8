import { Migration } from '@mikro-orm/migrations';

export class Migration20261122052023__initial extends Migration {
  override name = 'Migration20261122052023__initial';

  override up(): void | Promise<void> {
    this.addSql(`create schema if not exists "crm";`);
    this.addSql(
      `create table "crm"."companies" ("id" uuid not null, "name" varchar(200) not null, "plan_valid_until" timestamptz null, "master_user_id" uuid not null, "created_at" timestamptz not null, primary key ("id"));`,
    );

    this.addSql(
      `create table "crm"."company_sequences" ("company_id" uuid not null, "entity" varchar(50) not null, "value" bigint not null, primary key ("company_id", "entity"));`,
    );

    this.addSql(
      `create table "crm"."custom_fields" ("id" uuid not null, "company_id" uuid not null, "entity" varchar(20) not null, "name" varchar(200) not null, "type" varchar(20) not null, "required" boolean not null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "custom_fields_company_id_index" on "crm"."custom_fields" ("company_id");`);

    this.addSql(
      `create table "crm"."custom_field_options" ("id" uuid not null, "company_id" uuid not null, "field_id" uuid not null, "value" varchar(500) not null, "position" int not null, primary key ("id"));`,
    );
    this.addSql(`create index "custom_field_options_field_id_index" on "crm"."custom_field_options" ("field_id");`);

    this.addSql(
      `create table "crm"."integration_keys" ("id" uuid not null, "company_id" uuid not null, "created_by_user_id" uuid not null, "key_hash" varchar(64) not null, "permissions" jsonb not null, "allowed_domain" varchar(253) null, "valid_from" timestamptz null, "valid_until" timestamptz null, "active" boolean not null, "rate_limit_per_minute" int null, "deleted_at" timestamptz null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "integration_keys_company_id_index" on "crm"."integration_keys" ("company_id");`);
    this.addSql(`alter table "crm"."integration_keys" add constraint "integration_keys_key_hash_unique" unique ("key_hash");`);

    this.addSql(
      `create table "crm"."leads" ("id" uuid not null, "company_id" uuid not null, "code" int not null, "title" varchar(150) not null, "pipeline_id" uuid not null, "stage_id" uuid not null, "responsible_id" uuid not null, "created_by_id" uuid not null, "status" smallint not null, "visibility" smallint not null, "measurement_consent" varchar(20) null, "quality_rating" smallint null, "quality_reason" text null, "value" numeric(14,2) null, "lead_source_id" uuid null, "organization_id" uuid null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "archived_at" timestamptz null, "won_date" timestamptz null, "lost_date" timestamptz null, "last_activity_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`create index "leads_company_stage_idx" on "crm"."leads" ("company_id", "stage_id");`);
    this.addSql(`alter table "crm"."leads" add constraint "leads_company_code_unique" unique ("company_id", "code");`);

    this.addSql(
      `create table "crm"."lead_sources" ("id" uuid not null, "company_id" uuid not null, "name" varchar(200) not null, "logo" text null, primary key ("id"));`,
    );
    this.addSql(`create index "lead_sources_company_id_index" on "crm"."lead_sources" ("company_id");`);

    this.addSql(
      `create table "crm"."lead_views" ("id" uuid not null, "company_id" uuid not null, "lead_id" uuid not null, "user_id" uuid not null, "viewed_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "lead_views_lead_id_index" on "crm"."lead_views" ("lead_id");`);

    this.addSql(
      `create table "crm"."named_items" ("id" uuid not null, "company_id" uuid not null, "kind" varchar(30) not null, "name" varchar(200) not null, primary key ("id"));`,
    );
    this.addSql(`create index "named_items_company_kind_idx" on "crm"."named_items" ("company_id", "kind");`);

    this.addSql(
      `create table "crm"."organizations" ("id" uuid not null, "company_id" uuid not null, "name" varchar(200) not null, "legal_name" varchar(200) null, "document" varchar(100) null, "industry" varchar(200) null, "description" text null, "phone" varchar(100) null, "email" varchar(320) null, "site" varchar(500) null, "logo" text null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "organizations_company_id_index" on "crm"."organizations" ("company_id");`);

    this.addSql(
      `create table "crm"."outbox" ("id" uuid not null, "company_id" uuid not null, "event_key" varchar(100) not null, "payload" jsonb not null, "occurred_at" timestamptz not null, "published_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`create index "outbox_unpublished_idx" on "crm"."outbox" ("id") where "published_at" is null;`);

    this.addSql(
      `create table "crm"."persons" ("id" uuid not null, "company_id" uuid not null, "name" varchar(200) not null, "birth_date" timestamptz null, "gender" int null, "notes" text null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "persons_company_id_index" on "crm"."persons" ("company_id");`);

    this.addSql(
      `create table "crm"."person_contacts" ("id" uuid not null, "company_id" uuid not null, "person_id" uuid not null, "type" int not null, "value" varchar(500) not null, "primary" boolean not null, primary key ("id"));`,
    );
    this.addSql(`create index "person_contacts_person_id_index" on "crm"."person_contacts" ("person_id");`);
    this.addSql(`create index "person_contacts_lookup_idx" on "crm"."person_contacts" ("company_id", "type", "value");`);

    this.addSql(
      `create table "crm"."pipelines" ("id" uuid not null, "company_id" uuid not null, "name" varchar(200) not null, "is_primary" boolean not null, "requires_quality_reason" boolean not null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "pipelines_company_id_index" on "crm"."pipelines" ("company_id");`);

    this.addSql(
      `create table "crm"."stages" ("id" uuid not null, "company_id" uuid not null, "pipeline_id" uuid not null, "name" varchar(200) not null, "position" int not null, primary key ("id"));`,
    );
    this.addSql(`create index "stages_pipeline_id_index" on "crm"."stages" ("pipeline_id");`);

    this.addSql(
      `create table "crm"."tags" ("id" uuid not null, "company_id" uuid not null, "name" varchar(100) not null, "color_background" varchar(32) null, "color_foreground" varchar(32) null, primary key ("id"));`,
    );
    this.addSql(`create index "tags_company_id_index" on "crm"."tags" ("company_id");`);

    this.addSql(
      `create table "crm"."trackers" ("id" uuid not null, "company_id" uuid not null, "code" varchar(200) not null, "lead_source_id" uuid not null, "active" boolean not null, primary key ("id"));`,
    );
    this.addSql(`alter table "crm"."trackers" add constraint "trackers_company_code_unique" unique ("company_id", "code");`);

    this.addSql(
      `create table "crm"."users" ("id" uuid not null, "company_id" uuid not null, "name" varchar(200) not null, "email" varchar(320) not null, "avatar" text null, "active" boolean not null, "archived" boolean not null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "users_company_id_index" on "crm"."users" ("company_id");`);
    this.addSql(`alter table "crm"."users" add constraint "users_company_email_unique" unique ("company_id", "email");`);
  }
}
