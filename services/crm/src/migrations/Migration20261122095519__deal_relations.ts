import { Migration } from '@mikro-orm/migrations';

/**
 * The relation tables of deals, the lead's shape keyed by deal_id (decision 0051; deal_loss_reasons comes with
 * deal_gain_reasons in __deal_reasons); acquisitions of either kind of record (exactly one of lead_id and deal_id).
 */
export class Migration20261122095519__deal_relations extends Migration {
  override name = 'Migration20261122095519__deal_relations';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "crm"."deal_followers" ("id" uuid not null, "company_id" uuid not null, "deal_id" uuid not null, "user_id" uuid not null, "role_id" uuid null, "notes" text null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`alter table "crm"."deal_followers" add constraint "deal_followers_deal_user_unique" unique ("deal_id", "user_id");`);

    this.addSql(
      `create table "crm"."deal_notes" ("id" uuid not null, "company_id" uuid not null, "deal_id" uuid not null, "content" text not null, "is_pinned" boolean not null, "automatic" boolean not null, "created_by_id" uuid null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "deal_notes_deal_id_index" on "crm"."deal_notes" ("deal_id");`);

    this.addSql(
      `create table "crm"."deal_participants" ("id" uuid not null, "company_id" uuid not null, "deal_id" uuid not null, "person_id" uuid not null, "main" boolean not null, "role" varchar(200) null, "notes" text null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "deal_participants_company_person_idx" on "crm"."deal_participants" ("company_id", "person_id");`);
    this.addSql(
      `alter table "crm"."deal_participants" add constraint "deal_participants_deal_person_unique" unique ("deal_id", "person_id");`,
    );

    this.addSql(
      `create table "crm"."deal_stage_periods" ("id" uuid not null, "company_id" uuid not null, "deal_id" uuid not null, "stage_id" uuid not null, "entered_at" timestamptz not null, "left_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`create index "deal_stage_periods_deal_id_index" on "crm"."deal_stage_periods" ("deal_id");`);

    this.addSql(
      `create table "crm"."deal_tags" ("deal_id" uuid not null, "tag_id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, primary key ("deal_id", "tag_id"));`,
    );
    this.addSql(`create index "deal_tags_company_tag_idx" on "crm"."deal_tags" ("company_id", "tag_id");`);

    this.addSql(`alter table "crm"."marketing_acquisitions" add "deal_id" uuid null;`);
    this.addSql(`alter table "crm"."marketing_acquisitions" alter column "lead_id" drop not null;`);
    this.addSql(`create index "marketing_acquisitions_deal_created_idx" on "crm"."marketing_acquisitions" ("deal_id", "created_at");`);
    this.addSql(
      `alter table "crm"."marketing_acquisitions" add constraint "marketing_acquisitions_one_record_check" check (num_nonnulls(lead_id, deal_id) = 1);`,
    );
    // Deals created before stage periods existed are in their current stage since they were created.
    this.addSql(
      `insert into "crm"."deal_stage_periods" ("id", "company_id", "deal_id", "stage_id", "entered_at", "left_at") select gen_random_uuid(), "company_id", "id", "stage_id", "created_at", null from "crm"."deals";`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "crm"."deal_followers" cascade;`);
    this.addSql(`drop table if exists "crm"."deal_notes" cascade;`);
    this.addSql(`drop table if exists "crm"."deal_participants" cascade;`);
    this.addSql(`drop table if exists "crm"."deal_stage_periods" cascade;`);
    this.addSql(`drop table if exists "crm"."deal_tags" cascade;`);

    this.addSql(`drop index "crm"."marketing_acquisitions_deal_created_idx";`);
    this.addSql(`alter table "crm"."marketing_acquisitions" drop constraint "marketing_acquisitions_one_record_check";`);
    this.addSql(`alter table "crm"."marketing_acquisitions" drop column "deal_id";`);
    this.addSql(`alter table "crm"."marketing_acquisitions" alter column "lead_id" set not null;`);
  }
}
