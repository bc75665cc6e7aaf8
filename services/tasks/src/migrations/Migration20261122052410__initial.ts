import { Migration } from '@mikro-orm/migrations';

export class Migration20261122052410__initial extends Migration {
  override name = 'Migration20261122052410__initial';

  override up(): void | Promise<void> {
    this.addSql(`create schema if not exists "tasks";`);
    this.addSql(
      `create table "tasks"."outbox" ("id" uuid not null, "company_id" uuid not null, "event_key" varchar(100) not null, "payload" jsonb not null, "occurred_at" timestamptz not null, "published_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`create index "outbox_unpublished_idx" on "tasks"."outbox" ("id") where "published_at" is null;`);

    this.addSql(
      `create table "tasks"."task_stages" ("id" uuid not null, "company_id" uuid not null, "name" varchar(200) not null, "color" varchar(32) null, "is_completion" boolean not null, "position" int not null, "active" boolean not null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "task_stages_company_id_index" on "tasks"."task_stages" ("company_id");`);

    this.addSql(
      `create table "tasks"."task_types" ("id" uuid not null, "company_id" uuid not null, "name" varchar(200) not null, "icon" varchar(100) null, "is_meeting" boolean not null, "default_duration_minutes" int null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "task_types_company_id_index" on "tasks"."task_types" ("company_id");`);
  }
}
