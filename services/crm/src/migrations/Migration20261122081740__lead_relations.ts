import { Migration } from '@mikro-orm/migrations';

/** Tags, participants, followers, notes, loss reasons, stage periods and custom field answers of leads; idempotency keys. */
export class Migration20261122081740__lead_relations extends Migration {
  override name = 'Migration20261122081740__lead_relations';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "crm"."custom_field_values" ("id" uuid not null, "company_id" uuid not null, "field_id" uuid not null, "record_id" uuid not null, "option_id" uuid null, "value" text null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "custom_field_values_record_field_idx" on "crm"."custom_field_values" ("record_id", "field_id");`);

    this.addSql(
      `create table "crm"."lead_followers" ("id" uuid not null, "company_id" uuid not null, "lead_id" uuid not null, "user_id" uuid not null, "role_id" uuid null, "notes" text null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`alter table "crm"."lead_followers" add constraint "lead_followers_lead_user_unique" unique ("lead_id", "user_id");`);

    this.addSql(
      `create table "crm"."lead_idempotency_keys" ("company_id" uuid not null, "key" varchar(255) not null, "status" varchar(20) not null, "lead_id" uuid null, "title" varchar(150) null, "created_at" timestamptz not null, "finished_at" timestamptz null, primary key ("company_id", "key"));`,
    );

    this.addSql(
      `create table "crm"."lead_loss_reasons" ("lead_id" uuid not null, "reason_id" uuid not null, "company_id" uuid not null, "position" int not null, primary key ("lead_id", "reason_id"));`,
    );

    this.addSql(
      `create table "crm"."lead_notes" ("id" uuid not null, "company_id" uuid not null, "lead_id" uuid not null, "content" text not null, "is_pinned" boolean not null, "automatic" boolean not null, "created_by_id" uuid null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "lead_notes_lead_id_index" on "crm"."lead_notes" ("lead_id");`);

    this.addSql(
      `create table "crm"."lead_participants" ("id" uuid not null, "company_id" uuid not null, "lead_id" uuid not null, "person_id" uuid not null, "main" boolean not null, "role" varchar(200) null, "notes" text null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "lead_participants_company_person_idx" on "crm"."lead_participants" ("company_id", "person_id");`);
    this.addSql(
      `alter table "crm"."lead_participants" add constraint "lead_participants_lead_person_unique" unique ("lead_id", "person_id");`,
    );

    this.addSql(
      `create table "crm"."lead_stage_periods" ("id" uuid not null, "company_id" uuid not null, "lead_id" uuid not null, "stage_id" uuid not null, "entered_at" timestamptz not null, "left_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`create index "lead_stage_periods_lead_id_index" on "crm"."lead_stage_periods" ("lead_id");`);

    this.addSql(
      `create table "crm"."lead_tags" ("lead_id" uuid not null, "tag_id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, primary key ("lead_id", "tag_id"));`,
    );
    this.addSql(`create index "lead_tags_company_tag_idx" on "crm"."lead_tags" ("company_id", "tag_id");`);

    this.addSql(`alter table "crm"."leads" add "lost_reason_description" text null;`);
    this.addSql(`create index "leads_company_created_idx" on "crm"."leads" ("company_id", "created_at", "id");`);

    this.addSql(`create index "lead_views_user_lead_idx" on "crm"."lead_views" ("user_id", "lead_id");`);
    // Leads created before stage periods existed are in their current stage since they were created.
    this.addSql(
      `insert into "crm"."lead_stage_periods" ("id", "company_id", "lead_id", "stage_id", "entered_at", "left_at") select gen_random_uuid(), "company_id", "id", "stage_id", "created_at", null from "crm"."leads";`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "crm"."custom_field_values" cascade;`);
    this.addSql(`drop table if exists "crm"."lead_followers" cascade;`);
    this.addSql(`drop table if exists "crm"."lead_idempotency_keys" cascade;`);
    this.addSql(`drop table if exists "crm"."lead_loss_reasons" cascade;`);
    this.addSql(`drop table if exists "crm"."lead_notes" cascade;`);
    this.addSql(`drop table if exists "crm"."lead_participants" cascade;`);
    this.addSql(`drop table if exists "crm"."lead_stage_periods" cascade;`);
    this.addSql(`drop table if exists "crm"."lead_tags" cascade;`);

    this.addSql(`drop index "crm"."lead_views_user_lead_idx";`);

    this.addSql(`drop index "crm"."leads_company_created_idx";`);
    this.addSql(`alter table "crm"."leads" drop column "lost_reason_description";`);
  }
}
