import { Migration } from '@mikro-orm/migrations';

export class Migration20261122081343__tasks extends Migration {
  override name = 'Migration20261122081343__tasks';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "tasks"."tasks" ("id" uuid not null, "company_id" uuid not null, "title" varchar(100) not null, "description" text null, "is_personal" boolean not null, "priority" smallint not null, "task_type_id" uuid not null, "task_stage_id" uuid not null, "crm_lead_id" uuid null, "crm_deal_id" uuid null, "crm_delivery_id" uuid null, "crm_person_id" uuid null, "crm_organization_id" uuid null, "crm_customer_id" uuid null, "responsible_id" uuid not null, "created_by_id" uuid not null, "completed_at" timestamptz null, "completed_by_id" uuid null, "start_date" timestamptz null, "end_date" timestamptz null, "has_time" boolean not null, "meeting_outcome" smallint null, "meeting_outcome_notes" text null, "meeting_provider" varchar(40) null, "meeting_mode" varchar(20) null, "meeting_location" varchar(500) null, "meeting_description" text null, "meeting_participants" text[] not null, "reminders_minutes" int[] not null, "tag_ids" uuid[] not null, "parent_task_id" uuid null, "recurrence_series_id" uuid null, "recurrence_index" int null, "recurrence_is_exception" boolean not null, "origin" varchar(40) not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "tasks_company_start_idx" on "tasks"."tasks" ("company_id", "start_date", "id");`);
    this.addSql(`create index "tasks_parent_idx" on "tasks"."tasks" ("parent_task_id") where parent_task_id is not null;`);
    this.addSql(
      `create index "tasks_series_idx" on "tasks"."tasks" ("recurrence_series_id", "recurrence_index") where recurrence_series_id is not null;`,
    );
    this.addSql(`create index "tasks_company_responsible_idx" on "tasks"."tasks" ("company_id", "responsible_id");`);
    this.addSql(`create index "tasks_lead_idx" on "tasks"."tasks" ("company_id", "crm_lead_id") where crm_lead_id is not null;`);
    this.addSql(`create index "tasks_deal_idx" on "tasks"."tasks" ("company_id", "crm_deal_id") where crm_deal_id is not null;`);
    this.addSql(`create index "tasks_person_idx" on "tasks"."tasks" ("company_id", "crm_person_id") where crm_person_id is not null;`);
    this.addSql(
      `create index "tasks_organization_idx" on "tasks"."tasks" ("company_id", "crm_organization_id") where crm_organization_id is not null;`,
    );
    this.addSql(`create index "tasks_tags_idx" on "tasks"."tasks" using gin ("tag_ids");`);

    this.addSql(
      `create table "tasks"."task_recurrences" ("id" uuid not null, "company_id" uuid not null, "pattern" varchar(20) not null, "interval" int not null, "week_days" text[] not null, "end_type" varchar(20) not null, "until_date" timestamptz null, "occurrences" int null, "utc_offset_minutes" int not null, "start_date" timestamptz not null, "end_date" timestamptz null, "template" jsonb not null, "materialized_count" int not null, "last_start" timestamptz not null, "next_start" timestamptz null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "task_recurrences_next_idx" on "tasks"."task_recurrences" ("next_start") where next_start is not null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "tasks"."tasks" cascade;`);
    this.addSql(`drop table if exists "tasks"."task_recurrences" cascade;`);
  }
}
