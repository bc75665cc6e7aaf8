import { Migration } from '@mikro-orm/migrations';

export class Migration20261122052335__initial extends Migration {
  override name = 'Migration20261122052335__initial';

  override up(): void | Promise<void> {
    this.addSql(`create schema if not exists "webhooks";`);
    this.addSql(
      `create table "webhooks"."deliveries" ("id" uuid not null, "company_id" uuid not null, "subscription_id" uuid not null, "event_id" varchar(100) not null, "event_key" varchar(100) not null, "url" text not null, "config" jsonb not null, "body" text not null, "status" varchar(20) not null, "attempt_count" int not null, "max_retries" int not null, "next_attempt_at" timestamptz null, "lease_until" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "completed_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`create index "deliveries_due_idx" on "webhooks"."deliveries" ("next_attempt_at") where "status" = 'pending';`);
    this.addSql(`create index "deliveries_subscription_created_idx" on "webhooks"."deliveries" ("subscription_id", "created_at");`);
    this.addSql(
      `alter table "webhooks"."deliveries" add constraint "deliveries_subscription_event_unique" unique ("subscription_id", "event_id");`,
    );

    this.addSql(
      `create table "webhooks"."delivery_attempts" ("id" uuid not null, "company_id" uuid not null, "delivery_id" uuid not null, "at" timestamptz not null, "status_code" int null, "error" text null, "duration_ms" int not null, primary key ("id"));`,
    );
    this.addSql(`create index "delivery_attempts_delivery_id_index" on "webhooks"."delivery_attempts" ("delivery_id");`);

    this.addSql(
      `create table "webhooks"."outbox" ("id" uuid not null, "company_id" uuid not null, "event_key" varchar(100) not null, "payload" jsonb not null, "occurred_at" timestamptz not null, "published_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`create index "outbox_unpublished_idx" on "webhooks"."outbox" ("id") where "published_at" is null;`);

    this.addSql(
      `create table "webhooks"."subscriptions" ("id" uuid not null, "company_id" uuid not null, "url" text not null, "events" jsonb not null, "secret" varchar(200) not null, "max_retries" int not null, "headers" jsonb not null, "auth" jsonb null, "active" boolean not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "deleted_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`create index "subscriptions_company_id_index" on "webhooks"."subscriptions" ("company_id");`);
  }
}
