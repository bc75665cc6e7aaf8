import { Migration } from '@mikro-orm/migrations';

export class Migration20261125124548__contracts extends Migration {
  override name = 'Migration20261125124548__contracts';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "crm"."contracts" ("id" uuid not null, "company_id" uuid not null, "code" int not null, "title" varchar(150) not null, "description" text null, "status" smallint not null, "value" numeric(14,2) null, "start_date" timestamptz not null, "end_date" timestamptz null, "deal_id" uuid null, "delivery_id" uuid null, "organization_id" uuid null, "person_id" uuid null, "responsible_id" uuid not null, "created_by_id" uuid not null, "renewal_count" int not null, "last_renewed_at" timestamptz null, "canceled_at" timestamptz null, "canceled_by_id" uuid null, "cancellation_reason" text null, "completed_at" timestamptz null, "completed_by_id" uuid null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "contracts_company_created_idx" on "crm"."contracts" ("company_id", "created_at", "id");`);
    this.addSql(`alter table "crm"."contracts" add constraint "contracts_company_code_unique" unique ("company_id", "code");`);

    this.addSql(
      `create table "crm"."contract_renewals" ("id" uuid not null, "company_id" uuid not null, "contract_id" uuid not null, "renewed_at" timestamptz not null, "renewed_by_id" uuid not null, "previous_end_date" timestamptz not null, "new_end_date" timestamptz not null, "previous_value" numeric(14,2) null, "new_value" numeric(14,2) null, primary key ("id"));`,
    );
    this.addSql(`create index "contract_renewals_contract_id_index" on "crm"."contract_renewals" ("contract_id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "crm"."contracts" cascade;`);
    this.addSql(`drop table if exists "crm"."contract_renewals" cascade;`);
  }
}
