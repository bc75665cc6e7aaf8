import { Migration } from '@mikro-orm/migrations';

export class Migration20261125140229__attempt_owner extends Migration {
  override name = 'Migration20261125140229__attempt_owner';

  override up(): void | Promise<void> {
    this.addSql(`alter table "crm"."deal_idempotency_keys" add "attempt_owner" int null;`);

    this.addSql(`alter table "crm"."lead_idempotency_keys" add "attempt_owner" int null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "crm"."deal_idempotency_keys" drop column "attempt_owner";`);

    this.addSql(`alter table "crm"."lead_idempotency_keys" drop column "attempt_owner";`);
  }
}
