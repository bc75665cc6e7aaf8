import { Migration } from '@mikro-orm/migrations';

/** The loss and gain reasons of deals, and deals by the lead they came from (the lead's `deals`). */

export class Migration20261122095434__deal_reasons extends Migration {
  override name = 'Migration20261122095434__deal_reasons';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "crm"."deal_gain_reasons" ("deal_id" uuid not null, "reason_id" uuid not null, "company_id" uuid not null, "position" int not null, primary key ("deal_id", "reason_id"));`,
    );

    this.addSql(
      `create table "crm"."deal_loss_reasons" ("deal_id" uuid not null, "reason_id" uuid not null, "company_id" uuid not null, "position" int not null, primary key ("deal_id", "reason_id"));`,
    );

    this.addSql(`create index "deals_company_lead_idx" on "crm"."deals" ("company_id", "lead_id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "crm"."deal_gain_reasons" cascade;`);
    this.addSql(`drop table if exists "crm"."deal_loss_reasons" cascade;`);

    this.addSql(`drop index "crm"."deals_company_lead_idx";`);
  }
}
