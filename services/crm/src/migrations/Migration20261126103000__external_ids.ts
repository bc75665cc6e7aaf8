import { Migration } from '@mikro-orm/migrations';

export class Migration20261126103000__external_ids extends Migration {
  override name = 'Migration20261126103000__external_ids';

  override up(): void | Promise<void> {
    this.addSql(`alter table "crm"."leads" add "external_id" varchar(255) null;`);
    this.addSql(
      `create unique index "leads_company_external_id_unique" on "crm"."leads" (company_id, external_id) where external_id is not null and archived_at is null;`,
    );

    this.addSql(`alter table "crm"."deals" add "external_id" varchar(255) null;`);
    this.addSql(
      `create unique index "deals_company_external_id_unique" on "crm"."deals" (company_id, external_id) where external_id is not null and archived_at is null;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "crm"."leads_company_external_id_unique";`);
    this.addSql(`alter table "crm"."leads" drop column "external_id";`);

    this.addSql(`drop index "crm"."deals_company_external_id_unique";`);
    this.addSql(`alter table "crm"."deals" drop column "external_id";`);
  }
}
