import { Migration } from '@mikro-orm/migrations';

export class Migration20261122052416__initial extends Migration {
  override name = 'Migration20261122052416__initial';

  override up(): void | Promise<void> {
    this.addSql(`create schema if not exists "files";`);
    this.addSql(
      `create table "files"."outbox" ("id" uuid not null, "company_id" uuid not null, "event_key" varchar(100) not null, "payload" jsonb not null, "occurred_at" timestamptz not null, "published_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`create index "outbox_unpublished_idx" on "files"."outbox" ("id") where "published_at" is null;`);
  }
}
