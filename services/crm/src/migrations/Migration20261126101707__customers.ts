import { Migration } from '@mikro-orm/migrations';

export class Migration20261126101707__customers extends Migration {
  override name = 'Migration20261126101707__customers';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "crm"."customers" ("id" uuid not null, "company_id" uuid not null, "code" int not null, "type" smallint not null, "status" smallint not null, "person_id" uuid null, "organization_id" uuid null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`alter table "crm"."customers" add constraint "customers_company_code_unique" unique ("company_id", "code");`);
    this.addSql(`alter table "crm"."customers" add constraint "customers_company_person_unique" unique ("company_id", "person_id");`);
    this.addSql(
      `alter table "crm"."customers" add constraint "customers_company_organization_unique" unique ("company_id", "organization_id");`,
    );
    this.addSql(
      `alter table "crm"."customers" add constraint "customers_party_check" check (("type" = 1 and "person_id" is not null and "organization_id" is null) or ("type" = 2 and "organization_id" is not null and "person_id" is null));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "crm"."customers" cascade;`);
  }
}
