import { Migration } from '@mikro-orm/migrations';

/** Deals (the columns they share with leads, plus their own) and the idempotency keys of POST /deals. */

export class Migration20261122083729__deals extends Migration {
  override name = 'Migration20261122083729__deals';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "crm"."deals" ("id" uuid not null, "company_id" uuid not null, "code" int not null, "title" varchar(150) not null, "pipeline_id" uuid not null, "stage_id" uuid not null, "responsible_id" uuid not null, "created_by_id" uuid not null, "status" smallint not null, "visibility" smallint not null, "measurement_consent" varchar(20) null, "quality_rating" smallint null, "quality_reason" text null, "value" numeric(14,2) null, "lead_source_id" uuid null, "organization_id" uuid null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "archived_at" timestamptz null, "won_date" timestamptz null, "lost_date" timestamptz null, "last_activity_at" timestamptz null, "lost_reason_description" text null, "expected_close_date" timestamptz null, "temperature" int null, "won_reason_description" text null, "lead_id" uuid null, primary key ("id"));`,
    );
    this.addSql(`create index "deals_company_stage_idx" on "crm"."deals" ("company_id", "stage_id");`);
    this.addSql(`create index "deals_company_created_idx" on "crm"."deals" ("company_id", "created_at", "id");`);
    this.addSql(`alter table "crm"."deals" add constraint "deals_company_code_unique" unique ("company_id", "code");`);

    this.addSql(
      `create table "crm"."deal_idempotency_keys" ("company_id" uuid not null, "key" varchar(255) not null, "status" varchar(20) not null, "deal_id" uuid null, "title" varchar(150) null, "created_at" timestamptz not null, "finished_at" timestamptz null, primary key ("company_id", "key"));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "crm"."deals" cascade;`);
    this.addSql(`drop table if exists "crm"."deal_idempotency_keys" cascade;`);
  }
}
