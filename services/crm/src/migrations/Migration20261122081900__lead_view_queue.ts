import { Migration } from '@mikro-orm/migrations';

export class Migration20261122081900__lead_view_queue extends Migration {
  override name = 'Migration20261122081900__lead_view_queue';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "crm"."lead_view_queue" ("id" uuid not null, "company_id" uuid not null, "lead_id" uuid not null, "user_id" uuid not null, "viewed_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "lead_view_queue_lead_id_index" on "crm"."lead_view_queue" ("lead_id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "crm"."lead_view_queue" cascade;`);
  }
}
