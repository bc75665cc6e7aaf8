import { Migration } from '@mikro-orm/migrations';

export class Migration20261126105103 extends Migration {
  override name = 'Migration20261126105103';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "chat"."idempotency_keys" ("company_id" uuid not null, "key" varchar(255) not null, "operation" varchar(120) not null, "status" varchar(12) not null, "answer_status" int null, "answer" jsonb null, "created_at" timestamptz not null, "finished_at" timestamptz null, primary key ("company_id", "key"));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "chat"."idempotency_keys" cascade;`);
  }
}
