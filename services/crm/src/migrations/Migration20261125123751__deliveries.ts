import { Migration } from '@mikro-orm/migrations';

export class Migration20261125123751__deliveries extends Migration {
  override name = 'Migration20261125123751__deliveries';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "crm"."deliveries" ("id" uuid not null, "company_id" uuid not null, "code" int not null, "title" varchar(150) not null, "description" text null, "status" smallint not null, "pipeline_id" uuid not null, "stage_id" uuid not null, "responsible_id" uuid not null, "created_by_id" uuid not null, "deal_id" uuid null, "organization_id" uuid null, "person_id" uuid null, "planned_start_date" timestamptz null, "planned_end_date" timestamptz null, "started_at" timestamptz null, "delivered_at" timestamptz null, "completed_by_id" uuid null, "cancelled_at" timestamptz null, "cancellation_reason" text null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "deliveries_company_created_idx" on "crm"."deliveries" ("company_id", "created_at", "id");`);
    this.addSql(`create index "deliveries_company_deal_idx" on "crm"."deliveries" ("company_id", "deal_id");`);
    this.addSql(`alter table "crm"."deliveries" add constraint "deliveries_company_code_unique" unique ("company_id", "code");`);

    this.addSql(
      `create table "crm"."delivery_pipelines" ("id" uuid not null, "company_id" uuid not null, "name" varchar(200) not null, "is_default" boolean not null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "delivery_pipelines_company_id_index" on "crm"."delivery_pipelines" ("company_id");`);

    this.addSql(
      `create table "crm"."delivery_stages" ("id" uuid not null, "company_id" uuid not null, "pipeline_id" uuid not null, "name" varchar(200) not null, "position" int not null, primary key ("id"));`,
    );
    this.addSql(`create index "delivery_stages_pipeline_id_index" on "crm"."delivery_stages" ("pipeline_id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "crm"."deliveries" cascade;`);
    this.addSql(`drop table if exists "crm"."delivery_pipelines" cascade;`);
    this.addSql(`drop table if exists "crm"."delivery_stages" cascade;`);
  }
}
